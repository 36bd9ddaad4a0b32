"""A catch-up served outside the room's worker, by the asker's own connection.

The room fixes what the catch-up covers (the events after the asker's ``seq`` up to
the room's, at that moment) and puts a :class:`CatchUpStream` in the connection's
outgoing queue; its live events after that queue behind it. The connection's writer
task reads the log a page at a time and sends each page once the previous one was
taken by the socket: the room goes on with its moves meanwhile, a reader that does
not read holds back nobody but itself, and only one page is in memory at a time.
Each page is charged to the asker's rate budget by its size (SECURITY.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from protocol.limits import MAX_EVENTS
from protocol.outgoing import Outgoing

#: reads a room's log: (room, after_seq, limit) -> events (presence.rooms.read_events)
ReadEvents = Callable[..., Awaitable[list[dict[str, Any]]]]


def public_event(event: dict[str, Any]) -> dict[str, Any]:
    """A logged event as it was sent: without the forwarded request's id it was logged with."""
    if "request" not in event:
        return event
    return {k: v for k, v in event.items() if k != "request"}


def page(room: str, events: list[dict[str, Any]], more: bool, re: Any) -> Outgoing:
    """One ``catch_up`` message (``re``: the request it answers, on every page)."""
    wire: dict[str, Any] = {"type": "catch_up"}
    if re is not None:
        wire["re"] = re
    wire.update(room=room, events=[public_event(e) for e in events], more=more)
    return Outgoing(wire)


@dataclass
class CatchUpStream:
    """The events of ``room`` after ``since`` up to ``last``, to be sent in pages."""

    room: str
    since: int
    last: int
    re: Any
    read: ReadEvents
    #: told of each page sent (the cluster's cursor of what this node delivered)
    note: Callable[[Outgoing], None]

    async def pages(self) -> Any:
        """The pages, read one at a time (at least one, maybe empty: the reply)."""
        after = self.since
        while True:
            chunk = await self.read(self.room, after_seq=after, limit=MAX_EVENTS)
            chunk = [e for e in chunk if e["seq"] <= self.last]  # later ones are queued
            if chunk:
                after = chunk[-1]["seq"]
            more = bool(chunk) and after < self.last
            yield page(self.room, chunk, more, self.re)
            if not more:
                return
