"""The messages one node sends another (:mod:`server.cluster`), typed: one dataclass per
kind, one :func:`encode` and one :func:`decode` (as lila-ws's ``LilaIn``/``LilaOut``).

On the wire (the receiving node's Redis channel, JSON) each is an object whose ``k``
names its kind, with short keys: a delivery is sent for every room event to every
node with members of the room, so the relay is kept small. Nothing here reads or
writes anything; a message that is not one of these is a ``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server import room_calls
from server.room_calls import RoomCall


@dataclass(frozen=True, slots=True)
class Deliver:
    """A room's message (its wire data) for these sessions, connected to the receiver."""

    sessions: list[str]
    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Call:
    """Run a room command on the room's owner (the receiver) for a session of ``origin``.

    ``id``: the caller waits for a :class:`Reply` (none: fire and forget); ``key``: the
    request's id across retries (run at most once, :mod:`server.cluster_calls`);
    ``name``: the session's player name, when the caller knows it.
    """

    origin: str
    room: str
    call: RoomCall
    id: int | None = None
    key: str = ""
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to the :class:`Call` ``id``: its result, or an error (``code``,
    ``message``, maybe ``retry_after``; ``moved``: the room is not the receiver's)."""

    id: int
    ok: Any = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Forget:
    """The room dropped the session (connected to the receiver): it is no member any more."""

    session: str
    room: str


@dataclass(frozen=True, slots=True)
class Drop:
    """The session was taken over elsewhere: the receiver drops its connection."""

    session: str


@dataclass(frozen=True, slots=True)
class Rooms:
    """Another node seated the receiver's session in these rooms: from its queue entry
    of ``since`` (it leaves the queue if that is still its entry), or otherwise (``since``
    None: a challenge, a tournament; its queue is left as it is)."""

    session: str
    rooms: list[str]
    since: float | None = None


@dataclass(frozen=True, slots=True)
class LeaveQueue:
    """The receiver's session is about to be seated by another node (an accepted
    challenge): out of its quick-match queue, before the seating's ``matched``."""

    session: str


@dataclass(frozen=True, slots=True)
class Requeue:
    """Another node took the session's entry off ``queue`` and could not seat the pair:
    the receiver puts it back if the session still waits there with that entry."""

    session: str
    queue: str
    rating: float
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Resync:
    """``origin`` may have missed messages: the receiver re-attaches its members."""

    origin: str


@dataclass(frozen=True, slots=True)
class Attach:
    """``origin`` (re)took ``room`` over: the receiver's members of it follow it there."""

    room: str
    origin: str


@dataclass(frozen=True, slots=True)
class ChallengeTo:
    """A challenge to a session of the receiver (:mod:`server.challenges`, its fields)."""

    challenge: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ChallengeOver:
    """The challenge ``id`` ended (``reason``); ``session`` of the receiver is told
    (empty: it is only forgotten there)."""

    id: str
    session: str
    reason: str
    why: str = ""  # a decline's reason (none: "")


@dataclass(frozen=True, slots=True)
class CatchUpFrom:
    """A catch-up for ``session`` (connected to the receiver): the receiver reads the
    events of ``room`` after ``since`` up to ``last`` from the log and sends them as the
    session's connection takes them (:mod:`server.cluster_catch_up`); ``re``: the
    request it answers."""

    session: str
    room: str
    since: int
    last: int
    re: Any = None


NodeMessage = (
    Deliver
    | Call
    | Reply
    | Forget
    | Drop
    | Rooms
    | LeaveQueue
    | Requeue
    | Resync
    | Attach
    | ChallengeTo
    | ChallengeOver
    | CatchUpFrom
)


def encode(msg: NodeMessage) -> dict[str, Any]:
    """The message as JSON-ready data (see the module docstring)."""
    if type(msg) is Deliver:
        return {"k": "d", "s": msg.sessions, "m": msg.message}
    if type(msg) is Call:
        data: dict[str, Any] = {
            "k": "c",
            "from": msg.origin,
            "room": msg.room,
            "fn": msg.call.kind,
            "a": room_calls.args(msg.call),
        }
        if msg.id is not None:
            data["id"] = msg.id
        if msg.key:
            data["q"] = msg.key
        if msg.name:
            data["n"] = msg.name
        return data
    if type(msg) is Reply:
        if msg.error is not None:
            return {"k": "r", "id": msg.id, "e": msg.error}
        return {"k": "r", "id": msg.id, "ok": msg.ok}
    if type(msg) is Forget:
        return {"k": "forget", "s": msg.session, "room": msg.room}
    if type(msg) is Drop:
        return {"k": "drop", "s": msg.session}
    if type(msg) is Rooms:
        rooms = {"k": "rooms", "s": msg.session, "rooms": msg.rooms}
        return rooms if msg.since is None else {**rooms, "since": msg.since}
    if type(msg) is LeaveQueue:
        return {"k": "leave_queue", "s": msg.session}
    if type(msg) is Requeue:
        return {"k": "requeue", "s": msg.session, "q": msg.queue, "r": msg.rating, "d": msg.data}
    if type(msg) is Resync:
        return {"k": "resync", "from": msg.origin}
    if type(msg) is Attach:
        return {"k": "attach", "room": msg.room, "from": msg.origin}
    if type(msg) is ChallengeTo:
        return {"k": "challenge", "c": msg.challenge}
    if type(msg) is ChallengeOver:
        ended = {"k": "challenge_ended", "id": msg.id, "s": msg.session, "r": msg.reason}
        return {**ended, "w": msg.why} if msg.why else ended
    if type(msg) is CatchUpFrom:
        return {"k": "catch_up", "s": msg.session, "room": msg.room, "a": msg.since, "z": msg.last,
                "re": msg.re}  # fmt: skip
    raise ValueError(f"not a node message: {msg!r}")


def decode(data: dict[str, Any]) -> NodeMessage:
    """A received message; ``ValueError`` if it is none of the kinds (or lacks a key)."""
    try:
        k = data["k"]
        if k == "d":
            return Deliver(data["s"], data["m"])
        if k == "c":
            return Call(
                data["from"],
                data["room"],
                room_calls.decode(data["fn"], data["a"]),
                data.get("id"),
                data.get("q") or "",
                data.get("n"),
            )
        if k == "r":
            return Reply(data["id"], data.get("ok"), data.get("e"))
        if k == "forget":
            return Forget(data["s"], data["room"])
        if k == "drop":
            return Drop(data["s"])
        if k == "rooms":
            return Rooms(data["s"], data["rooms"], data.get("since"))
        if k == "leave_queue":
            return LeaveQueue(data["s"])
        if k == "requeue":
            return Requeue(data["s"], data["q"], data["r"], data["d"])
        if k == "resync":
            return Resync(data["from"])
        if k == "attach":
            return Attach(data["room"], data["from"])
        if k == "challenge":
            return ChallengeTo(data["c"])
        if k == "challenge_ended":
            return ChallengeOver(data["id"], data["s"], data["r"], data.get("w") or "")
        if k == "catch_up":
            return CatchUpFrom(data["s"], data["room"], data["a"], data["z"], data.get("re"))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed node message: {exc}") from None
    raise ValueError(f"unknown node message kind: {data.get('k')!r}")
