"""bench/startup.py keeps working: one trial through a real subprocess, its table and JSON checked.

Only that it runs and reports sane figures; start-up time itself is never asserted in tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_startup_one_trial(tmp_path: Path) -> None:
    out = tmp_path / "startup.json"
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "startup.py"),
        "--trials", "1",
        "--data-dir", str(tmp_path / "data"),
        "--json", str(out),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for line in ("spawn -> listening", "SIGTERM -> exit", "python -c pass", "target under 1 s"):
        assert line in proc.stdout, proc.stdout
    res = json.loads(out.read_text())
    assert res["trials"] == 1
    # a server that listens has started an interpreter and imported the code: it takes longer
    assert res["listening_s"]["median"] > res["python_s"]["median"] > 0, res
    assert 0 < res["cpu_s"]["median"] <= res["listening_s"]["median"] * 2, res
    assert res["stop_s"]["median"] > 0, res


def test_bench_startup_with_records_and_games_in_progress(tmp_path: Path) -> None:
    """The durable start-up run (``--records --games``): its data dir is built by
    bench/populate.py through the store's ports, and every game in it is restored."""
    out = tmp_path / "startup.json"
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "startup.py"),
        "--trials", "1",
        "--records", "20",
        "--games", "3",
        "--data-dir", str(tmp_path / "data"),
        "--json", str(out),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(out.read_text())
    assert (res["records"], res["games"], res["games_restored"]) == (20, 3, 3), res
    assert "3 restored" in proc.stdout, proc.stdout
