"""Engine programs in ``arena tournament run`` (real subprocesses all the way down): the
example engine plays a built-in level; engines that crash, hang, answer illegally or
garble lose those games, are restarted, and the tournament goes on."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from arena_process import ROOT, run_arena

pytest.importorskip("clients.engines.process")

from engine.base import GameRecord, replay

EXAMPLE = ROOT / "clients/examples/python/random_engine.py"
BAD = ROOT / "tests/engines/bad_engine.py"


def run(out: Path, *args: str) -> dict[str, Any]:
    proc = run_arena("tournament", "run", "--out", str(out), "--json", "--quiet", *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]


def test_an_engine_program_plays_a_builtin_level(tmp_path: Path) -> None:
    engine = f"name=example,option.Seed=3,cmd={sys.executable} {EXAMPLE}"
    summary = run(
        tmp_path / "t", "--engine", engine, "--level", "greedy", "--deals", "3",
        "--concurrency", "2", "--tc", "0.1+0.1",
    )  # fmt: skip
    assert summary["games"] == 6 and summary["faults"] == 0
    for g in lines(tmp_path / "t"):
        assert "example" in g["players"] and g["result"]["reason"] == "no_moves"
        assert replay(GameRecord.from_dict(g)).position() == g["tournament"]["final_position"]
        assert g["time_control"]["kind"] == "fischer"


@pytest.mark.parametrize(
    ("mode", "kind", "reason"),
    [
        ("crash", "crash", "abandon"),
        ("hang", "timeout", "timeout"),
        ("illegal", "illegal", "abandon"),
        ("refuse", "refused", "abandon"),
    ],
)
def test_a_misbehaving_engine_loses_its_games_and_is_restarted(
    tmp_path: Path, mode: str, kind: str, reason: str
) -> None:
    engine = f"name=bad,cmd={sys.executable} {BAD} {mode}"
    summary = run(
        tmp_path / "t", "--engine", engine, "--level", "random", "--deals", "2",
        # a short wait for the hanging one only: a loaded machine starts programs slowly
        "--move-timeout-ms", "300" if mode == "hang" else "20000",
    )  # fmt: skip
    games = lines(tmp_path / "t")
    assert summary["games"] == len(games) == 4  # every game was played, none stalled
    for g in games:
        bad_seat = g["players"].index("bad")
        assert g["result"]["winner"] == 1 - bad_seat and g["result"]["reason"] == reason
        assert [f["kind"] for f in g["tournament"]["faults"]] == [kind]
        assert g["tournament"]["faults"][0]["seat"] == bad_seat
    points = {r["name"]: r["points"] for r in summary["standings"]}
    assert points == {"random": 4, "bad": 0}


@pytest.mark.parametrize(
    "option,why",
    [
        ("option.Sed=3", "random-engine declares no option Sed (it declares: Seed)"),
        ("option.Seed=abc", "random-engine's option Seed takes a whole number from 0 to"),
    ],
)
def test_an_option_the_engine_does_not_take_is_refused_before_any_game(
    tmp_path: Path, option: str, why: str
) -> None:
    """As in arena bot (ENGINE_PROTOCOL.md: setoption only as declared)."""
    engine = f"name=example,{option},cmd={sys.executable} {EXAMPLE}"
    proc = run_arena(
        "tournament", "run", "--out", str(tmp_path / "t"), "--engine", engine,
        "--level", "greedy", "--deals", "1",
    )  # fmt: skip
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert f"participant example: {why}" in proc.stderr, proc.stderr
