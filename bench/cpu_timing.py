"""The timing loop every engine benchmark row shares, so their rates compare."""

from __future__ import annotations

import time
from collections.abc import Callable


def timed_batches(batch: Callable[[], int], seconds: float) -> tuple[int, float]:
    """Run ``batch`` (it returns how many operations it did) for ``seconds`` of this
    process's CPU time (one core, whatever else the machine is doing); return
    (operations, CPU seconds)."""
    ops = 0
    start = time.process_time()
    while True:
        ops += batch()
        elapsed = time.process_time() - start
        if elapsed >= seconds:
            return ops, elapsed
