"""The README's two commands that get a first bot playing ("Write a bot") work as
written: the engine check passes, and the bot command plays a game (given the test
server's ``--url`` and one game, so that it ends)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from tests.engine_examples import ROOT
from tests.test_bot_cmd import all_complete, arena_bot, bots


def _readme_commands(block_no: int = 0) -> list[list[str]]:
    """The commands of the sh block number ``block_no`` under "Write a bot", as argument
    lists run with this interpreter (``.venv/bin/arena`` -> ``python -m clients.cli``)."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Write a bot") :]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) > block_no, "too few sh blocks under Write a bot"
    out = []
    for line in blocks[block_no].strip().splitlines():
        argv = shlex.split(line)
        assert argv[0] == ".venv/bin/arena", line
        argv = [a.replace("python3 ", f"{sys.executable} ", 1) for a in argv]
        out.append([sys.executable, "-m", "clients.cli", *argv[1:]])
    return out


def test_the_readme_engine_check_passes() -> None:
    check, _ = _readme_commands()
    assert check[3:5] == ["engine", "check"]
    proc = subprocess.run(check, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED" in proc.stdout


@pytest.mark.timeout(120)
async def test_the_readme_bot_command_plays(arena) -> None:
    await arena.start()
    _, play = _readme_commands()
    assert play[3] == "bot"
    args = play[4:]
    at = args.index("--name")
    name, rest = args[at + 1], args[:at] + args[at + 2 :]
    [sparring] = _readme_commands(1)  # its opponent, as the README gives it
    assert sparring[3] == "bot" and sparring[4:6] == ["--name", "sparring"]
    async with bots(
        arena_bot(arena.url, name, *rest, "--games", "1"),
        arena_bot(arena.url, "sparring", *sparring[6:]),
    ) as both:
        await all_complete(both, 1)
        mine, theirs = (bot.games()[0] for bot in both)
        assert "vs sparring" in mine and f"vs {name}" in theirs, (mine, theirs)
    assert any(
        ln.startswith("quick match: looking for a casual game of collapsi") for ln in both[0].lines
    ), both[0].lines
