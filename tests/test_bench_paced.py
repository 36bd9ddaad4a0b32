"""bench/paced.py keeps working: a tiny paced run through a real subprocess, its table
and JSON checked. Only that it runs and reports sane figures; speed is never asserted."""

from __future__ import annotations

from pathlib import Path

from tests.bench_run import run_bench


def test_bench_paced_tiny_run(tmp_path: Path) -> None:
    args = ("--run", "0.05:3", "--run", "0.1:2", "--duration", "1.5", "--warmup", "0.2")
    stdout, res = run_bench("paced.py", *args, "--workers", "1", json_to=tmp_path / "paced.json")
    assert "Paced capacity: collapsi/standard, store memory, next game in a new room" in stdout
    assert "n/a: fewer games than the target's 150" in stdout  # 2 games at the bot pace
    assert res["command"].startswith("bench/paced.py --run 0.05:3")
    fast, bot = res["runs"]
    assert (fast["pace"], fast["games"], bot["pace"], bot["games"]) == (0.05, 3, 0.1, 2)
    for run in (fast, bot):
        # paced games were really played: moves in the window, whole games, nothing refused
        assert run["moves"] > 0 and run["games_done"] > 0 and run["errors"] == {}, run
        assert run["moves"] >= 5 * run["games_done"], run  # a Collapsi game has several plies
        assert run["rate"] <= run["offered_rate"] * 1.5, run  # the pace held the movers back
        assert 0 < run["median_ms"] <= run["p99_ms"] <= run["max_ms"], run
        assert 0 < run["server_cpu"] < 1.5 and run["server_rss"] > 0, run
        assert 0 <= run["server_waited"] < 1.5, run
        assert run["warmup"] >= run["pace"] * 10.5  # one game's length, spread
