"""bench/peers/run.py's arena side keeps working: a tiny run through a real subprocess.

The peers themselves need Node.js and npm packages, which the suite must not need:
``--only-arena`` runs the same harness with the arena's runs alone. Speed is never
asserted, only that both paths played real games and the report and JSON say so.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench_run import run_bench


def test_bench_peers_arena_side_tiny_run(tmp_path: Path) -> None:
    stdout, res = run_bench(
        "peers/run.py",
        "--only-arena",
        "--games", "2",
        "--duration", "1",
        "--warmup", "0.3",
        "--rounds", "1",
        "--workers", "1",
        "--connections", "8",
        "--idle-seconds", "0.5",
        json_to=tmp_path / "peers.json",
    )  # fmt: skip
    assert "newroom" in stdout and "inroom" in stdout, stdout
    assert "idle arena: 8 connections" in stdout, stdout
    for path in ("newroom", "inroom"):
        run = res["runs"][f"arena {path}"]
        # whole games were played on both paths, nothing refused
        assert run["games"] > 0 and run["count"] >= 5 * run["games"], res
        assert run["errors"] == {} and run["server_cpu_us"] > 0, res
    idle = res["idle"]["arena"]
    assert idle["open"] == 8 and idle["errors"] == {} and idle["rss"] >= idle["rss_base"] > 0
