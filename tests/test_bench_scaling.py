"""bench/scaling.py keeps working: a tiny run (one cell, two nodes, a few idle
connections) through a real subprocess, its table and JSON checked.

Only that it runs and reports sane figures; speed itself is never asserted in tests.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench_run import run_bench


def test_bench_scaling_tiny_run(tmp_path: Path) -> None:
    stdout, res = run_bench(
        "scaling.py",
        "--cells", "1", "--nodes", "2", "--games", "2", "--think", "0",
        "--duration", "2", "--warmup", "0.5", "--workers", "1",
        "--idle", "20", "--idle-s", "1",
        json_to=tmp_path / "scaling.json",
        timeout=180,
    )  # fmt: skip
    assert "| c0n0 |" in stdout and "| c0n1 |" in stdout
    assert "commands per move:" in stdout
    (cell,) = res["games"]["cells"]
    assert len(cell["nodes"]) == 2
    assert all(n["moves"] > 0 and n["cpu_us_move"] > 0 for n in cell["nodes"])
    # a move goes through Redis: scripts (EVALSHA) and the stream (XADD, run by them)
    assert cell["redis_calls_move"]["evalsha"] > 0 and cell["redis_calls_move"]["xadd"] > 0
    assert cell["redis_in_move"] > 0 and cell["redis_out_move"] > 0
    assert res["idle"]["open"] == 20 and res["idle"]["rss_per_conn"] > 0
