"""A per-connection token bucket (as lila-ws does it: tiny, no timers, no tasks).

``burst`` tokens at most, refilled continuously at ``per_second``. Each message
costs one token; a message that finds the bucket empty is refused, and the
caller is told how long until the next token (``retry_after`` in ms).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable


class TokenBucket:
    __slots__ = ("_clock", "_stamp", "_tokens", "burst", "per_second", "refused_in_row")

    def __init__(
        self, burst: int, per_second: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.burst = burst
        self.per_second = per_second
        self._clock = clock
        self._tokens = float(burst)
        self._stamp = clock()
        #: refusals since the last accepted message (sustained flooding is abuse)
        self.refused_in_row = 0

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.per_second)
        self._stamp = now

    def take(self) -> int | None:
        """None if a token was taken; else milliseconds until one is available."""
        self._refill()
        if self._tokens >= 1.0 - 1e-9:
            self._tokens -= 1.0
            self.refused_in_row = 0
            return None
        self.refused_in_row += 1
        return max(1, math.ceil((1.0 - self._tokens) / self.per_second * 1000 - 1e-6))
