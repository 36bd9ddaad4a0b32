"""bench/catch_up.py keeps working: a tiny run through a real subprocess, its table and JSON
checked. Only that it runs and reports sane figures; speed itself is never asserted in tests.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench_run import run_bench


def test_bench_catch_up_tiny_run(tmp_path: Path) -> None:
    stdout, runs = run_bench(
        "catch_up.py",
        "--events", "600",
        "--spectators", "2",
        "--samples", "5",
        json_to=tmp_path / "catch_up.json",
    )  # fmt: skip
    assert "600 events, 2 spectators re-watching from seq 0" in stdout, stdout
    (res,) = runs
    for key in ("quiet_a", "quiet_b", "rewatch_a", "rewatch_b"):
        assert 0 < res[key]["p50"] <= res[key]["p99"] <= res[key]["max"], res
    assert res["rewatches_per_s"] > 0, res
