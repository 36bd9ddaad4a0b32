"""How Redis presence stores and sends values (shared by :mod:`server.presence.redis`
and its parts): events as msgpack, the rest as JSON."""

from __future__ import annotations

import json
from typing import Any, TypeVar

import msgpack

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
