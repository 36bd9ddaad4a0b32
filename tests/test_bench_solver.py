"""bench/solver.py and bench/solver_ab.py keep working: tiny runs through real subprocesses,
their output checked. Only that they run and report sane figures; speed is never asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_solver_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "solver.json"
    cmd = [sys.executable, str(ROOT / "bench" / "solver.py"), "--deals", "3", "--warm-up", "2"]
    cmd += ["--rules", "standard", "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(out.read_text())["rows"]
    kinds = {(r["solve"], r["mode"]) for r in rows}
    assert kinds == {(k, m) for k in ("win/loss", "length", "analysis") for m in ("first", "cold")}
    for r in rows:
        assert r["deals"] == 3 and r["median_ms"] > 0 and r["p90_ms"] >= r["median_ms"]
        assert r["median_positions"] > 0
    assert "median / Rust" in proc.stdout


def test_bench_solver_ab_of_a_checkout_against_itself(tmp_path: Path) -> None:
    cmd = [sys.executable, str(ROOT / "bench" / "solver_ab.py"), str(ROOT), str(ROOT)]
    cmd += ["--deals", "2", "--warm-up", "1", "--rules", "standard", "--kinds", "win/loss"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 2  # first and cold
    for line in lines:
        assert line.startswith("standard win/loss")
        assert "B/A median" in line and line.endswith("positions same")  # the same search
