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


def _readme_commands() -> list[list[str]]:
    """The commands of the first sh block under "Write a bot", as argument lists run
    with this interpreter (``.venv/bin/arena`` -> ``python -m clients.cli``)."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Write a bot") :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "no sh block under Write a bot"
    out = []
    for line in block.group(1).strip().splitlines():
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
    one = ["--quick-match", "collapsi", "--games", "1"]
    async with bots(
        arena_bot(arena.url, name, *rest, "--games", "1"),
        arena_bot(arena.url, "opponent", "--level", "random", *one),
    ) as both:
        await all_complete(both, 1)
