"""A local tournament's records replayed in ``arena tui`` (``--replay games.jsonl --game
ID``; Textual's pilot) and the command's answers to a file of several games."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from arena_process import run_arena

from clients.tournament.config import ParticipantSpec, TournamentConfig
from clients.tournament.runner import Runner
from clients.tui.app import ArenaTui
from clients.tui.local import ReplayScreen
from engine.base import GameRecord, replay
from tests.tui_pilot import SIZE, until


def _records(tmp_path: Path) -> Path:
    config = TournamentConfig(
        participants=(
            ParticipantSpec(name="r", level="random"),
            ParticipantSpec(name="g", level="greedy"),
        ),
        deals=2,
    )
    asyncio.run(Runner(config, tmp_path / "t").run())
    return tmp_path / "t" / "games.jsonl"


async def test_a_tournament_game_replays_in_the_tui_to_its_final_position(
    tmp_path: Path,
) -> None:
    path = await asyncio.to_thread(_records, tmp_path)
    lines = [json.loads(raw) for raw in path.read_text().splitlines()]
    assert len(lines) == 4
    line = lines[2]
    app = ArenaTui("ws://127.0.0.1:9", record_file=path, record_game=line["tournament"]["id"],
                   config=Path(os.devnull))  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen, "replay"
        )
        assert screen.record.moves == line["moves"] and screen.record.setup == line["setup"]
        await pilot.press("end")
        assert screen.ply == len(line["moves"])
    final = replay(GameRecord.from_dict(line))
    assert final.position() == line["tournament"]["final_position"]


def test_the_tui_asks_which_game_of_a_tournament_file(tmp_path: Path) -> None:
    path = _records(tmp_path)
    first = json.loads(path.read_text().splitlines()[0])["tournament"]["id"]
    proc = run_arena("tui", "--replay", str(path), timeout=60)
    assert proc.returncode != 0
    assert f"holds 4 games: choose one with --game ID (ids such as {first})" in proc.stderr
    proc = run_arena("tui", "--replay", str(path), "--game", "9.9.9.9", timeout=60)
    assert proc.returncode != 0 and "no game 9.9.9.9 in" in proc.stderr
