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
    __slots__ = (
        "_clock",
        "_flood",
        "_flood_stamp",
        "_stamp",
        "_tokens",
        "burst",
        "per_second",
        "refused_in_row",
    )

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
        #: refusals, each forgotten at ``per_second`` (see :meth:`flood`)
        self._flood = 0.0
        self._flood_stamp = self._stamp

    def flood(self) -> float:
        """Refusals not yet forgiven, one forgiven per token's time: a client that
        waits for ``retry_after`` stays near 0 however long it goes on; one that sends
        far faster than its rate climbs at once, although a token now and then lets a
        frame through (which is why refusals *in a row* do not measure flooding)."""
        now = self._clock()
        self._flood = max(0.0, self._flood - (now - self._flood_stamp) * self.per_second)
        self._flood_stamp = now
        return self._flood

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
        self._flood = self.flood() + 1.0
        return max(1, math.ceil((1.0 - self._tokens) / self.per_second * 1000 - 1e-6))

    def charge(self, tokens: float) -> None:
        """Spend ``tokens`` more (a costly answer: a catch-up, by its size); the bucket may
        go into debt, down to ``-burst``: the next messages wait until it is repaid."""
        self._refill()
        self._tokens = max(-float(self.burst), self._tokens - tokens)

    def full(self) -> bool:
        self._refill()
        return self._tokens >= self.burst
