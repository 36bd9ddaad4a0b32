"""bench/catch_up.py keeps working: a tiny run through a real subprocess, its table and JSON
checked. Only that it runs and reports sane figures; speed itself is never asserted in tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_catch_up_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "catch_up.json"
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "catch_up.py"),
        "--events", "600",
        "--spectators", "2",
        "--samples", "5",
        "--json", str(out),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "600 events, 2 spectators re-watching from seq 0" in proc.stdout, proc.stdout
    (res,) = json.loads(out.read_text())
    for key in ("quiet_a", "quiet_b", "rewatch_a", "rewatch_b"):
        assert 0 < res[key]["p50"] <= res[key]["p99"] <= res[key]["max"], res
    assert res["rewatches_per_s"] > 0, res
