"""bench/paced.py keeps working: a tiny paced run through a real subprocess, its table
and JSON checked. Only that it runs and reports sane figures; speed is never asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_paced_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "paced.json"
    cmd = [sys.executable, str(ROOT / "bench" / "paced.py"), "--run", "0.05:3", "--run", "0.1:2"]
    cmd += ["--duration", "1.5", "--warmup", "0.2", "--workers", "1", "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Paced capacity: collapsi/standard, store memory, next game in a new room" in proc.stdout
    assert "n/a: fewer games than the target's 150" in proc.stdout  # 2 games at the bot pace
    res = json.loads(out.read_text())
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
