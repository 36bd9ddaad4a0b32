"""bench/solver.py and bench/solver_ab.py keep working: tiny runs through real subprocesses,
their output checked. Only that they run and report sane figures; speed is never asserted."""

from __future__ import annotations

from pathlib import Path

from tests.bench_run import ROOT, run_bench


def test_bench_solver_tiny_run(tmp_path: Path) -> None:
    args = ("--deals", "3", "--warm-up", "2", "--rules", "standard")
    stdout, res = run_bench("solver.py", *args, json_to=tmp_path / "solver.json")
    rows = res["rows"]
    kinds = {(r["solve"], r["mode"]) for r in rows}
    assert kinds == {(k, m) for k in ("win/loss", "length", "analysis") for m in ("first", "cold")}
    for r in rows:
        assert r["deals"] == 3 and r["median_ms"] > 0 and r["p90_ms"] >= r["median_ms"]
        assert r["median_positions"] > 0
    assert "median / Rust" in stdout


def test_bench_solver_ab_of_a_checkout_against_itself(tmp_path: Path) -> None:
    args = ("--deals", "2", "--warm-up", "1", "--rules", "standard", "--kinds", "win/loss")
    stdout, _ = run_bench("solver_ab.py", str(ROOT), str(ROOT), *args, cwd=tmp_path)
    lines = stdout.splitlines()
    assert len(lines) == 2  # first and cold
    for line in lines:
        assert line.startswith("standard win/loss")
        assert "B/A median" in line and line.endswith("positions same")  # the same search
