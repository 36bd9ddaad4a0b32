"""Requests that start costly work are charged by their cost, not as one message.

A new solo puzzle (a room, or a rematch, whose deal searches for a solvable redraw:
ruling 7) costs the node's deal worker up to about a second of CPU (server.deal_pool),
however few frames ask for it; one message of the rate budget (20 a second) would let
one client keep the worker, and so a core of a small host, busy. Such a request
costs its asker, before any work is done for it:

- ``deal_cost`` tokens of its connection's message rate (server.ratelimit; the bucket
  may go into debt, as for a catch-up: the next messages wait until it is repaid), and
- one token of its client address's deal budget (``deal_burst``, then
  ``deal_per_second``), shared by every connection of the address, logged in or not:
  new connections or guest names do not multiply it. Addresses exempt from the
  per-address limits (``address_limits_exempt``: loopback by default) skip this part.

Past the address's budget the request is answered ``rate_limited`` with
``retry_after`` (no room is made, no deal drawn). A player starting puzzles one after
another at a human pace (SECURITY.md) never meets either limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from engine.base import SetupError
from protocol.errors import ErrorCode, ProtocolError
from server.config import Config
from server.deal_pool import DealPool
from server.ratelimit import TokenBucket

#: buckets kept at most; past it those that are full again (quiet addresses) are forgotten
MAX_ADDRESSES = 50_000


class CostlyRequests:
    """The deal budgets of this node's client addresses."""

    def __init__(
        self,
        config: Config,
        exempt: Callable[[str], bool],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cost = config.deal_cost
        self._spec = (config.deal_burst, config.deal_per_second)
        self._exempt = exempt
        self._clock = clock
        self._buckets: dict[str, TokenBucket] = {}

    def charge_deal(
        self, conn: Any, game: str, variant: str | None, options: dict[str, Any] | None
    ) -> None:
        """Charge ``conn`` (its ``bucket`` and ``address``) for a request that deals a game
        of this kind, if its deal is costly; ``ProtocolError`` (``rate_limited``) when its
        address has spent its budget."""
        try:
            if not DealPool.costly(game, variant, options):
                return
        except SetupError:  # an unknown game: refused as such by the registry
            return
        address = getattr(conn, "address", None)
        if address is not None and not self._exempt(address):
            retry = self._bucket(address).take()
            if retry is not None:
                raise ProtocolError(
                    ErrorCode.RATE_LIMITED,
                    "too many new puzzles from your address: try again shortly",
                    retry_after=retry,
                )
        bucket = getattr(conn, "bucket", None)
        if bucket is not None:  # (the frame itself took one token already)
            bucket.charge(max(0, self.cost - 1))

    def _bucket(self, address: str) -> TokenBucket:
        bucket = self._buckets.get(address)
        if bucket is None:
            if len(self._buckets) >= MAX_ADDRESSES:
                for key in [k for k, b in self._buckets.items() if b.full()]:
                    del self._buckets[key]
            bucket = self._buckets[address] = TokenBucket(*self._spec, self._clock)
        return bucket
