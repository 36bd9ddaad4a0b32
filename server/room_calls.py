"""What the rest of the server may ask of a room, typed: one command per request, and
the one small handle interface (:class:`RoomHandle`) that a room of this node
(:class:`server.room.Room`) and the stand-in for a room on another node
(:class:`server.cluster_remote.RemoteRoom`) both offer.

Why: callers hold a handle and never ask where the room is; a command is a value, so
the same one runs in the actor here or travels to the room's owner in a node message
(:class:`server.node_messages.Call`: its :attr:`RoomCall.kind` and :func:`args`) and
is rebuilt there by :func:`decode`. Nothing here reads or writes anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol

from server.room_state import RoomSettings

#: a :class:`server.room.Room` (not imported: the room imports this module)
Room = Any


@dataclass(frozen=True, slots=True)
class RoomCall:
    """A request of a session (``session``) to a room."""

    session: str
    #: its name in node messages
    kind: ClassVar[str] = ""
    #: forwarded to another node, it runs at most once (a retry gets the first outcome:
    #: :mod:`server.cluster_calls`); joins and reads are harmless to repeat
    once: ClassVar[bool] = False

    def run(self, room: Room) -> Awaitable[Any]:
        """The room's method for this command, started (awaited in the room's turn)."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Join(RoomCall):
    player: dict[str, Any] | None
    role: str
    re: Any = None
    kind: ClassVar[str] = "join"

    def run(self, room: Room) -> Awaitable[Any]:
        return room.join(self.session, self.player, self.role, self.re)


@dataclass(frozen=True, slots=True)
class Watch(RoomCall):
    since_seq: int | None
    re: Any = None
    kind: ClassVar[str] = "watch"

    def run(self, room: Room) -> Awaitable[Any]:
        return room.watch(self.session, self.since_seq, self.re)


@dataclass(frozen=True, slots=True)
class Leave(RoomCall):
    reason: str = "resign"
    kind: ClassVar[str] = "leave"
    once: ClassVar[bool] = True

    def run(self, room: Room) -> Awaitable[Any]:
        return room.leave(self.session, self.reason)


@dataclass(frozen=True, slots=True)
class TakeSeat(RoomCall):
    player: dict[str, Any] | None
    seat: int | None
    kind: ClassVar[str] = "take_seat"
    once: ClassVar[bool] = True

    def run(self, room: Room) -> Awaitable[Any]:
        return room.take_seat(self.session, self.player, self.seat)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class LeaveSeat(RoomCall):
    kind: ClassVar[str] = "leave_seat"
    once: ClassVar[bool] = True

    def run(self, room: Room) -> Awaitable[Any]:
        return room.leave_seat(self.session)


@dataclass(frozen=True, slots=True)
class SetReady(RoomCall):
    ready: bool
    kind: ClassVar[str] = "set_ready"
    once: ClassVar[bool] = True

    def run(self, room: Room) -> Awaitable[Any]:
        return room.set_ready(self.session, self.ready)


@dataclass(frozen=True, slots=True)
class Move(RoomCall):
    """``re``: the request's id when its own ``move_made`` is the reply (no ``ack``)."""

    move: str
    re: Any = None
    kind: ClassVar[str] = "move"
    once: ClassVar[bool] = True

    def run(self, room: Room) -> Awaitable[Any]:
        return room.move(self.session, self.move, self.re)


@dataclass(frozen=True, slots=True)
class Resign(RoomCall):
    kind: ClassVar[str] = "resign"
    once: ClassVar[bool] = True

    def run(self, room: Room) -> Awaitable[Any]:
        return room.resign(self.session)


@dataclass(frozen=True, slots=True)
class Abort(RoomCall):
    kind: ClassVar[str] = "abort"
    once: ClassVar[bool] = True

    def run(self, room: Room) -> Awaitable[Any]:
        return room.abort(self.session)


@dataclass(frozen=True, slots=True)
class OfferRematch(RoomCall):
    """``accept``: an ``accept_rematch`` (else an ``offer_rematch``)."""

    accept: bool
    kind: ClassVar[str] = "offer_rematch"
    once: ClassVar[bool] = True

    def run(self, room: Room) -> Awaitable[Any]:
        return room.offer_rematch(self.session, self.accept)


@dataclass(frozen=True, slots=True)
class Chat(RoomCall):
    name: str
    text: str
    kind: ClassVar[str] = "chat"
    once: ClassVar[bool] = True

    def run(self, room: Room) -> Awaitable[Any]:
        return room.chat(self.session, self.name, self.text)


@dataclass(frozen=True, slots=True)
class SendState(RoomCall):
    re: Any = None
    kind: ClassVar[str] = "send_state"

    def run(self, room: Room) -> Awaitable[Any]:
        return room.send_state(self.session, self.re)


@dataclass(frozen=True, slots=True)
class ResumeMember(RoomCall):
    """The member's connection (back, or on another node) has seen up to ``since_seq``."""

    since_seq: int | None
    kind: ClassVar[str] = "resume_member"

    def run(self, room: Room) -> Awaitable[Any]:
        return room.resume_member(self.session, self.since_seq)


@dataclass(frozen=True, slots=True)
class Disconnected(RoomCall):
    kind: ClassVar[str] = "disconnected"

    def run(self, room: Room) -> Awaitable[Any]:
        return room.disconnected(self.session)


@dataclass(frozen=True, slots=True)
class SessionGone(RoomCall):
    kind: ClassVar[str] = "session_gone"

    def run(self, room: Room) -> Awaitable[Any]:
        return room.session_gone(self.session)


@dataclass(frozen=True, slots=True)
class CatchUp(RoomCall):
    since_seq: int | None
    re: Any = None
    kind: ClassVar[str] = "catch_up"

    def run(self, room: Room) -> Awaitable[Any]:
        return room.catch_up(self.session, self.since_seq, self.re)


CALLS: dict[str, type[RoomCall]] = {
    c.kind: c
    for c in (
        Join,
        Watch,
        Leave,
        TakeSeat,
        LeaveSeat,
        SetReady,
        Move,
        Resign,
        Abort,
        OfferRematch,
        Chat,
        SendState,
        ResumeMember,
        Disconnected,
        SessionGone,
        CatchUp,
    )
}


def args(call: RoomCall) -> list[Any]:
    """The command's fields in order (JSON-ready), trailing defaults left out."""
    values = [getattr(call, f.name) for f in fields(call)]
    defaults = [f.default for f in fields(call)]
    while values and len(values) > 1 and values[-1] == defaults[len(values) - 1]:
        values.pop()
    return values


def decode(kind: str, values: list[Any]) -> RoomCall:
    """The command ``kind`` with these fields; ``ValueError`` if there is no such one."""
    cls = CALLS.get(kind) if isinstance(kind, str) else None
    if cls is None or not isinstance(values, list):
        raise ValueError(f"no room command {kind!r}")
    try:
        return cls(*values)
    except TypeError as exc:
        raise ValueError(f"bad fields for room command {kind!r}: {exc}") from None


class RoomHandle(Protocol):
    """What a caller holds of a room, wherever it runs."""

    id: str
    #: the room's settings (None: a stand-in that only knows where the room is)
    settings: RoomSettings | None
    #: session -> role of the room's members, as far as the holder knows
    members: dict[str, str]
    closed: bool

    async def request(self, call: RoomCall, then: Callable[[], None] | None = None) -> Any:
        """Run ``call`` in the room's turn; its result, or its typed error raised.
        ``then()`` runs once it succeeded (in the room's turn, for a room here: an ``ack``
        sent so shares the write of the events it follows)."""
        ...

    def tell(self, call: RoomCall) -> None:
        """Queue ``call`` for the room; nobody waits for it."""
        ...
