"""What one client address may cost: open connections, handshakes, anonymous requests.

The per-connection limits (message rate, outgoing bytes) bound one connection; an
attacker opens many. Per address (the TCP peer, so behind a proxy: the proxy's):

- at most ``max_conns`` connections open at once, and new handshakes at
  ``handshake_burst`` then ``handshake_per_s``: past either, the handshake is answered
  HTTP 429 and no WebSocket opens;
- requests of connections that have not logged in share one bucket
  (``anon_burst``, ``anon_per_s``) per address, on top of each connection's own: an
  anonymous client cannot multiply its rate by opening connections.

Addresses in ``exempt`` (default: loopback, i.e. local bots, benchmarks, a reverse
proxy on the same host, whose clients all share its address) are not limited.
Buckets of addresses that went quiet are forgotten (the table stays small).
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable, Iterable

from server.ratelimit import TokenBucket


class AddressBudget:
    def __init__(
        self,
        max_conns: int,
        handshake_burst: int,
        handshake_per_s: float,
        anon_burst: int,
        anon_per_s: float,
        exempt: Iterable[str] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_conns = max_conns
        self._exempt = [ipaddress.ip_network(n, strict=False) for n in exempt]
        self._exempt_seen: dict[str, bool] = {}
        self._hs = (handshake_burst, handshake_per_s)
        self._anon = (anon_burst, anon_per_s)
        self._clock = clock
        self.open: dict[str, int] = {}
        self._handshakes: dict[str, TokenBucket] = {}
        self._anonymous: dict[str, TokenBucket] = {}

    def _bucket(self, table: dict[str, TokenBucket], spec: tuple[int, float], key: str):
        bucket = table.get(key)
        if bucket is None:
            if len(table) > 50_000:
                self._forget_quiet(table)
            bucket = table[key] = TokenBucket(spec[0], spec[1], self._clock)
        return bucket

    def _forget_quiet(self, table: dict[str, TokenBucket]) -> None:
        for key in [k for k, b in table.items() if b.full() and not self.open.get(k)]:
            del table[key]

    def exempt(self, address: str) -> bool:
        known = self._exempt_seen.get(address)
        if known is None:
            try:
                ip = ipaddress.ip_address(address)
                known = any(ip in net for net in self._exempt)
            except ValueError:
                known = False
            if len(self._exempt_seen) < 10_000:
                self._exempt_seen[address] = known
        return known

    def handshake(self, address: str) -> str | None:
        """None if a new connection from ``address`` may open, else why not."""
        if self.exempt(address):
            return None
        if self.open.get(address, 0) >= self.max_conns:
            return f"too many connections from your address (at most {self.max_conns})"
        if self._bucket(self._handshakes, self._hs, address).take() is not None:
            return "too many new connections from your address: slow down"
        return None

    def opened(self, address: str) -> None:
        self.open[address] = self.open.get(address, 0) + 1

    def closed(self, address: str) -> None:
        left = self.open.get(address, 0) - 1
        if left > 0:
            self.open[address] = left
        else:
            self.open.pop(address, None)

    def anonymous_request(self, address: str) -> int | None:
        """None if an anonymous request from ``address`` may go on, else ms to wait."""
        if self.exempt(address):
            return None
        return self._bucket(self._anonymous, self._anon, address).take()


#: ``--address-limits`` keys and the settings (server.config) each sets: a count, or a
#: burst and a rate per second (``32/8``)
LIMIT_KEYS: dict[str, tuple[str, ...]] = {
    "conns": ("max_conns_per_address",),
    "handshakes": ("handshake_burst", "handshake_per_second"),
    "anonymous": ("anon_rate_burst", "anon_rate_per_second"),
    "puzzles": ("deal_burst", "deal_per_second"),
}


def parse_limits(text: str) -> dict[str, int | float]:
    """``conns=64,handshakes=32/8,anonymous=200/100,puzzles=6/0.5`` (any of them) as
    settings; ``ValueError`` saying what is wrong."""
    settings: dict[str, int | float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, _, value = item.partition("=")
        fields = LIMIT_KEYS.get(key.strip())
        if fields is None:
            raise ValueError(f"unknown limit {key.strip()!r} (known: {', '.join(LIMIT_KEYS)})")
        parts = value.strip().split("/")
        try:
            if len(parts) != len(fields):
                raise ValueError
            numbers = [int(parts[0])] + [float(p) for p in parts[1:]]
        except ValueError:
            want = "N" if len(fields) == 1 else "BURST/PER_S"
            raise ValueError(f"{key.strip()} wants {want}, not {value.strip()!r}") from None
        if numbers[0] < 1 or any(n <= 0 for n in numbers[1:]):
            raise ValueError(f"{key.strip()} wants positive numbers, not {value.strip()!r}")
        settings.update(zip(fields, numbers, strict=True))
    return settings
