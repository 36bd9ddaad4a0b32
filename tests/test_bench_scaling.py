"""bench/scaling.py keeps working: a tiny run (one cell, two nodes, a few idle
connections) through a real subprocess, its table and JSON checked.

Only that it runs and reports sane figures; speed itself is never asserted in tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_scaling_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "scaling.json"
    cmd = [
        sys.executable, str(ROOT / "bench" / "scaling.py"),
        "--cells", "1", "--nodes", "2", "--games", "2", "--think", "0",
        "--duration", "2", "--warmup", "0.5", "--workers", "1",
        "--idle", "20", "--idle-s", "1", "--json", str(out),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| c0n0 |" in proc.stdout and "| c0n1 |" in proc.stdout
    assert "commands per move:" in proc.stdout
    res = json.loads(out.read_text())
    (cell,) = res["games"]["cells"]
    assert len(cell["nodes"]) == 2
    assert all(n["moves"] > 0 and n["cpu_us_move"] > 0 for n in cell["nodes"])
    # a move goes through Redis: scripts (EVALSHA) and the stream (XADD, run by them)
    assert cell["redis_calls_move"]["evalsha"] > 0 and cell["redis_calls_move"]["xadd"] > 0
    assert cell["redis_in_move"] > 0 and cell["redis_out_move"] > 0
    assert res["idle"]["open"] == 20 and res["idle"]["rss_per_conn"] > 0
