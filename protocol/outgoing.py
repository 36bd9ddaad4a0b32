"""A message on its way out, encoded at most once per encoding however many receive it."""

from __future__ import annotations

import json
from typing import Any

import msgpack
from pydantic import BaseModel

from protocol.codec import to_wire


class Outgoing:
    """One server message as wire data, with its msgpack and JSON frames made on demand.

    A room event goes to every member; building it once and encoding it at most
    twice (binary and text) keeps a broadcast cheap.
    """

    __slots__ = ("_base", "_bin", "_re", "_text", "type", "wire")

    def __init__(self, wire: dict[str, Any]) -> None:
        self.wire = wire
        self.type: str = wire["type"]
        self._bin: bytes | None = None
        self._text: str | None = None
        self._base: Outgoing | None = None
        self._re: Any = None

    @classmethod
    def of(cls, msg: BaseModel) -> Outgoing:
        return cls(to_wire(msg))

    def replying(self, re: Any) -> Outgoing:
        """The same message as the reply to request ``re`` (``re`` added last).

        Its frames are this message's frames with ``re`` spliced in, not encoded again.
        """
        out = Outgoing({**self.wire, "re": re})
        out._base = self
        out._re = re
        return out

    def frame(self, binary: bool) -> bytes | str:
        if binary:
            if self._bin is None:
                base = self._base
                if base is None:
                    self._bin = _pack(self.wire)
                else:  # a map of n entries -> n + 1 entries, the last one "re"
                    n = len(base.wire)
                    body = base.frame(True)[_map_header_size(n) :]
                    self._bin = _map_header(n + 1) + body + _pack("re") + _pack(self._re)
            return self._bin
        if self._text is None:
            base = self._base
            if base is None:
                self._text = _json(self.wire)
            else:
                self._text = f'{base.frame(False)[:-1]},"re":{_json(self._re)}}}'
        return self._text


_pack = msgpack.Packer(use_bin_type=True).pack  # one packer, reused (packb makes one per call)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _map_header_size(n: int) -> int:
    return 1 if n < 16 else 3 if n < 0x10000 else 5


def _map_header(n: int) -> bytes:
    if n < 16:
        return bytes((0x80 | n,))
    if n < 0x10000:
        return b"\xde" + n.to_bytes(2, "big")
    return b"\xdf" + n.to_bytes(4, "big")
