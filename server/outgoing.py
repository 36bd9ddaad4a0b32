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

    __slots__ = ("_bin", "_text", "type", "wire")

    def __init__(self, wire: dict[str, Any]) -> None:
        self.wire = wire
        self.type: str = wire["type"]
        self._bin: bytes | None = None
        self._text: str | None = None

    @classmethod
    def of(cls, msg: BaseModel) -> Outgoing:
        return cls(to_wire(msg))

    def replying(self, re: Any) -> Outgoing:
        """The same message as the reply to request ``re`` (``re`` right after ``type``)."""
        wire = {"type": self.type, "re": re}
        wire.update(self.wire)
        return Outgoing(wire)

    def frame(self, binary: bool) -> bytes | str:
        if binary:
            if self._bin is None:
                self._bin = msgpack.packb(self.wire, use_bin_type=True)
            return self._bin
        if self._text is None:
            self._text = json.dumps(
                self.wire, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            )
        return self._text
