"""bench/cpu_shield.py (``bench/bot.py --shield``): other tasks moved off the runner's CPU
for a run, and back after, on real processes."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "cpu_shield", Path(__file__).resolve().parent.parent / "bench" / "cpu_shield.py"
)
assert _SPEC is not None and _SPEC.loader is not None
_MODULE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_MODULE)
shield = _MODULE.shield

CPUS = sorted(os.sched_getaffinity(0))
pytestmark = pytest.mark.skipif(len(CPUS) < 2, reason="a shield needs two CPUs or more")


def test_a_shield_moves_a_task_off_and_puts_it_back() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        before = os.sched_getaffinity(child.pid)
        assert CPUS[0] in before
        with shield({CPUS[0]}, [child.pid, os.getpid()]) as moved:
            assert os.sched_getaffinity(child.pid) == before - {CPUS[0]}
            assert moved == {child.pid: before}  # (not the caller itself)
            assert CPUS[0] in os.sched_getaffinity(0)
        assert os.sched_getaffinity(child.pid) == before
    finally:
        child.kill()
        child.wait()


def test_a_task_that_moved_itself_meanwhile_is_left_as_it_is() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with shield({CPUS[0]}, [child.pid]):
            os.sched_setaffinity(child.pid, {CPUS[0]})  # (as if by its own doing)
        assert os.sched_getaffinity(child.pid) == {CPUS[0]}
    finally:
        child.kill()
        child.wait()
