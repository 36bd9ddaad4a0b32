"""A bench script run as a user runs it (a real subprocess, from this checkout), for the
tests that keep the benches working: ``run_bench("bot.py", "--games", "3", json_to=out)``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def run_bench(
    script: str,
    *args: str,
    json_to: Path | None = None,
    timeout: float = 120,
    cwd: Path = ROOT,
) -> tuple[str, Any]:
    """Run ``bench/SCRIPT ARGS`` (with ``--json JSON_TO`` when given) and check it exits 0;
    its standard output, and the JSON it wrote (``None`` without ``json_to``)."""
    cmd = [sys.executable, str(ROOT / "bench" / script), *args]
    if json_to is not None:
        cmd += ["--json", str(json_to)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, None if json_to is None else json.loads(json_to.read_text())
