"""bench/peers/run.py's arena side keeps working: a tiny run through a real subprocess.

The peers themselves need Node.js and npm packages, which the suite must not need:
``--only-arena`` runs the same harness with the arena's runs alone. Speed is never
asserted, only that both paths played real games and the report and JSON say so.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_peers_arena_side_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "peers.json"
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "peers" / "run.py"),
        "--only-arena",
        "--games", "2",
        "--duration", "1",
        "--warmup", "0.3",
        "--rounds", "1",
        "--workers", "1",
        "--connections", "8",
        "--idle-seconds", "0.5",
        "--json", str(out),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "newroom" in proc.stdout and "inroom" in proc.stdout, proc.stdout
    assert "idle arena: 8 connections" in proc.stdout, proc.stdout
    res = json.loads(out.read_text())
    for path in ("newroom", "inroom"):
        run = res["runs"][f"arena {path}"]
        # whole games were played on both paths, nothing refused
        assert run["games"] > 0 and run["count"] >= 5 * run["games"], res
        assert run["errors"] == {} and run["server_cpu_us"] > 0, res
    idle = res["idle"]["arena"]
    assert idle["open"] == 8 and idle["errors"] == {} and idle["rss"] >= idle["rss_base"] > 0
