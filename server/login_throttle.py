"""Failed logins, throttled per name and per address, so a token cannot be guessed.

Each name (its claim key) and each client address has a bucket of ``burst`` failures
that refills at ``per_second``. A login whose name or address has no failure left is
refused with ``rate_limited`` (and ``retry_after``) before its token is checked, so a
guesser learns nothing while throttled; each failed login takes one from both. A
successful login leaves the buckets as they are. Buckets that refilled are forgotten,
so the table stays bounded by the failures of the last ``burst / per_second``
seconds (and by ``max_keys``: the fullest are dropped first).

Per node: with several nodes a guesser gets each node's allowance (SECURITY.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from protocol.errors import ErrorCode, ProtocolError
from protocol.tokens import weak_token


class FailureThrottle:
    def __init__(
        self,
        burst: int,
        per_second: float,
        max_keys: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.burst = burst
        self.per_second = per_second
        self.max_keys = max_keys
        self._clock = clock
        #: key -> (failures left, when counted)
        self._left: dict[str, tuple[float, float]] = {}

    def _now_left(self, key: str, now: float) -> float:
        left, stamp = self._left.get(key, (float(self.burst), now))
        return min(float(self.burst), left + (now - stamp) * self.per_second)

    def retry_after(self, *keys: str) -> int | None:
        """Milliseconds until every key has a failure left; None if they all have."""
        now = self._clock()
        wait = 0.0
        for key in keys:
            left = self._now_left(key, now)
            if left < 1.0 - 1e-9:
                wait = max(wait, (1.0 - left) / self.per_second)
        return None if wait == 0.0 else max(1, math.ceil(wait * 1000))

    def failed(self, *keys: str) -> None:
        """Count a failed login against every key."""
        now = self._clock()
        for key in keys:
            self._left[key] = (max(0.0, self._now_left(key, now) - 1.0), now)
        if len(self._left) > self.max_keys:
            self._prune(now)

    def _prune(self, now: float) -> None:
        full = [k for k in self._left if self._now_left(k, now) >= self.burst]
        for key in full:
            del self._left[key]
        if len(self._left) > self.max_keys:  # under attack: keep the emptiest buckets
            ranked = sorted(self._left, key=lambda k: self._now_left(k, now))
            for key in ranked[self.max_keys // 2 :]:
                del self._left[key]


class LoginGuard:
    """The login checks on a player token: strong enough, and not being guessed."""

    def __init__(self, config: Any) -> None:
        self.names = FailureThrottle(
            config.login_fails_per_name, 1.0 / config.login_fail_name_seconds
        )
        self.addresses = FailureThrottle(
            config.login_fails_per_address, 1.0 / config.login_fail_address_seconds
        )

    async def check(self, conn: Any, key: str, token: str) -> None:
        """Refuse a weak token (``bad_request``) or a throttled login (``rate_limited``)."""
        weak = weak_token(token)
        if weak is not None:
            raise ProtocolError(ErrorCode.BAD_REQUEST, weak)
        wait = max(
            self.names.retry_after(key) or 0,
            self.addresses.retry_after(peer_address(conn.ws)) or 0,
        )
        if wait:
            raise ProtocolError(ErrorCode.RATE_LIMITED, "too many failed logins", retry_after=wait)

    def failed(self, conn: Any, key: str) -> None:
        self.names.failed(key)
        self.addresses.failed(peer_address(conn.ws))


def peer_address(ws: Any) -> str:
    """The client's IP address (the TCP peer: behind a proxy, the proxy's)."""
    peer = getattr(ws, "remote_address", None)
    return str(peer[0]) if peer else "?"
