"""How Redis presence stores and sends values (shared by :mod:`server.presence.redis`
and its parts): events as msgpack, the rest as JSON, and one error regime: every
Redis failure is a :class:`PresenceError`."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgpack
from redis.exceptions import RedisError

from server.presence.base import PresenceError

T = TypeVar("T")

CLOSED: Any = object()


def ms(ttl: float) -> int:
    return max(1, round(ttl * 1000))


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


#: one packer, reused (``msgpack.packb`` builds one per call); events are stored as
#: msgpack, ~4x cheaper to make than JSON
pack = msgpack.Packer(use_bin_type=True).pack


#: a published lobby upsert, ``{"op": "upsert", "room": summary}``, is this + the packed
#: summary (0x82: a msgpack map of two entries)
UPSERT_HEAD = b"\x82" + pack("op") + pack("upsert") + pack("room")


def load(data: bytes | str) -> Any:
    """A stored or published value: a msgpack map (events), or JSON text (the rest, and
    events that an older version logged)."""
    if data[:1] in (b"{", "{"):
        return json.loads(data)
    return msgpack.unpackb(data, raw=False)


def ignore(op: str, started: float, error: str | None) -> None:
    """The default ``observe``: nobody is timing this store."""


def guard(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Turn every Redis failure into :class:`PresenceError` (typed ``unavailable``);
    report each call's time and failure to its store's ``observe``."""
    op = fn.__name__

    @functools.wraps(fn)
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> T:
        started = time.perf_counter()
        try:
            result = await fn(self, *args, **kwargs)
        except PresenceError as exc:
            self.observe(op, started, type(exc).__name__)
            raise
        except (RedisError, OSError, TimeoutError) as exc:
            self.observe(op, started, type(exc).__name__)
            raise PresenceError(f"redis: {type(exc).__name__}: {exc}") from exc
        self.observe(op, started, None)
        return result

    return wrapper
