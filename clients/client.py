"""The async client library: everything that talks to an arena server uses it.

    async with Client("ws://127.0.0.1:8765") as c:
        await c.login("ann", token=token_for("~/.arena-tokens.json", "ann"))  # 16+ chars
        state = await c.create_room("collapsi", seat=0)
        await c.ready(state.room)
        started = await c.next(type="game_started", room=state.room)
        await c.move(state.room, started.legal_moves[0])

Requests (``login``, ``create_room``, ``move``...) send a message with a fresh
``id`` and wait for the reply with that ``re``; an ``error`` reply is raised as
an :class:`ArenaError` subclass for its code (:class:`IllegalMoveError`,
:class:`RateLimitedError`...). Everything else the server sends (room events,
lobby events, catch-up) is kept in order: :meth:`Client.next` waits for the next
message matching a filter. The client tracks the last ``seq`` of every room it
is in, so :meth:`Client.reconnect` resumes the session and receives exactly the
events it missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

from pydantic import BaseModel
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from clients.arena_errors import (
    ERRORS,
    ArenaError,
    ConnectionLost,
    ForbiddenError,
    GameOverError,
    IllegalMoveError,
    NameTakenError,
    NotSeatedError,
    NotYourTurnError,
    RateLimitedError,
    UnknownRoomError,
    UnknownSessionError,
    error_from,
)
from clients.calls import ServerCalls
from clients.room_tracks import RoomTrack, RoomTracking
from clients.wsdirect import DirectConnection
from protocol import messages as m
from protocol.codec import encode_wire, to_wire
from protocol.errors import ProtocolError
from protocol.fastread import decode_server_fast
from protocol.fastwire import make_move_wire
from protocol.versions import PROTOCOL_VERSIONS

#: the errors are defined in clients/arena_errors.py and imported from here
__all__ = [
    "ERRORS",
    "TURN_EVENTS",
    "ArenaError",
    "Client",
    "ConnectionLost",
    "ForbiddenError",
    "GameOverError",
    "IllegalMoveError",
    "NameTakenError",
    "NotSeatedError",
    "NotYourTurnError",
    "RateLimitedError",
    "RoomTrack",
    "Sent",
    "UnknownRoomError",
    "UnknownSessionError",
    "error_from",
]

SOFTWARE = "arena-client/0.1"

#: the room events after which a seat may be to move (``to_move``, ``legal_moves``): a
#: player acts on each of them. ``player_eliminated``: someone of three or more went out
#: by forfeit and, if it was their turn, the turn passed on (PROTOCOL.md, Rooms and games)
TURN_EVENTS = ("game_started", "move_made", "player_eliminated")


#: how often a patient client sends a request refused ``rate_limited`` again
PATIENT_TRIES = 20


class Sent(NamedTuple):
    """A request on its way: its id, its wire data, and its reply to come."""

    id: int
    data: dict[str, Any]
    reply: asyncio.Future[Any]


class Client(RoomTracking, ServerCalls):
    """One connection to an arena server (see the module docstring).

    ``binary`` picks msgpack (default) or JSON frames. ``keep_events=False`` is
    for long-running programs (bots, load generators): room events are not kept
    per room and messages already scanned by :meth:`next` are forgotten.
    """

    def __init__(
        self,
        url: str,
        *,
        binary: bool = True,
        software: str = SOFTWARE,
        keep_events: bool = True,
        max_size: int = 1 << 20,
        open_timeout: float = 10.0,
        auto_reconnect: float = 0.0,
        patient: bool = False,
    ) -> None:
        self.url = url
        #: a request refused ``rate_limited`` is sent again after its ``retry_after``
        #: (a refused frame was not processed: PROTOCOL.md, "rate"), up to
        #: :data:`PATIENT_TRIES` times, instead of raising: for programs that play at
        #: machine speed (bots), whose every request matters
        self.patient = patient
        #: seconds to keep trying to resume by itself after the server said ``goodbye``
        #: ``shutdown`` (a restart) or the connection dropped without a goodbye (0: never)
        self.auto_reconnect = auto_reconnect
        #: resumes done by itself (each answered ``resumed``, also queued for next())
        self.reconnects = 0
        self._goodbye: m.Goodbye | None = None
        self._stopped = False
        self._reconnecting: asyncio.Task[None] | None = None
        self.binary = binary
        self.software = software
        self.keep_events = keep_events
        self.max_size = max_size
        self.open_timeout = open_timeout
        self.ws: ClientConnection | None = None
        self.welcome: m.Welcome | None = None
        self.player: m.Player | None = None
        self.session: str | None = None
        self.resume_token: str | None = None
        self.rooms: dict[str, RoomTrack] = {}
        #: the rooms of the dropped session the last login took over (none: a new one)
        self.taken_over: list[str] = []
        self.closed: asyncio.Event = asyncio.Event()
        self.close_code: int | None = None
        self._ids = itertools.count(1)
        self._ticks = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._inbox: list[Any] = []
        self._pos = 0
        self._arrived = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self._asks: set[asyncio.Task[None]] = set()
        #: called with every message as it arrives (replies too, after their request is
        #: answered), which then does not wait for :meth:`next`: a program that routes
        #: every message (``arena bot``) saves the turn of the loop a reader of next() costs,
        #: and, when set before :meth:`connect`, the reading task's turn too (wsdirect.py)
        self.listener: Callable[[Any], None] | None = None

    # -- connection ---------------------------------------------------------------------
    async def connect(self) -> m.Welcome:
        """Open the connection and say hello; returns the server's ``welcome``."""
        self._stopped = False
        self._goodbye = None
        self.closed = asyncio.Event()
        self.close_code = None
        self.ws = ws = await connect(
            self.url,
            max_size=self.max_size,
            open_timeout=self.open_timeout,
            compression=None,
            ping_interval=20,
            ping_timeout=20,
            create_connection=DirectConnection,
        )
        if self.listener is not None and isinstance(ws, DirectConnection):
            ws.on_message = self._frame  # (routed as it arrives: wsdirect.py)
        self._reader = asyncio.create_task(self._read_loop())
        welcome = await self.request(
            m.Hello(versions=list(PROTOCOL_VERSIONS), software=self.software)
        )
        self.welcome = welcome
        if self.resume_token is None:
            self.session, self.resume_token = welcome.session, welcome.resume_token
        return welcome

    def _adopt_welcome(self) -> None:
        """This connection's own session is the client's session from now on."""
        if self.welcome is not None:
            self.session, self.resume_token = self.welcome.session, self.welcome.resume_token

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close cleanly (code 1000): the server takes it as a goodbye, as ``logout``:
        the session ends at once, its games are left and its name is free. Only a
        dropped connection (:meth:`abort`, a network failure) keeps the session for its
        grace period, to :meth:`reconnect`."""
        self._stopped = True  # no reconnecting by itself from now on
        task, self._reconnecting = self._reconnecting, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self._close_connection()

    async def _close_connection(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    def abort(self) -> None:
        """Drop the TCP connection without a goodbye, as a crash or network failure would."""
        if self.ws is not None and self.ws.transport is not None:
            self.ws.transport.abort()

    async def reconnect(self) -> m.Resumed:
        """Open a new connection and resume the session, catching up every room by seq."""
        if self.resume_token is None:
            raise ArenaError("no_session", "nothing to resume: connect first")
        self.abort()  # (a clean close would end the session: PROTOCOL.md, Sessions)
        await self._close_connection()
        await self.connect()
        for track in self.rooms.values():
            track.asking = False  # the resume's catch-up fills any gap
        try:
            resumed = await self.request(m.Resume(token=self.resume_token, rooms=self._cursors()))
        except UnknownSessionError:
            # the session is gone (grace period over, server restarted), and its rooms with
            # it: what is left is this connection's own session, which a login makes resumable
            self._adopt_welcome()
            self._leave_all()
            raise
        self.session, self.resume_token = resumed.session, resumed.resume_token
        self.player = resumed.player
        return resumed

    async def _read_loop(self) -> None:
        assert self.ws is not None
        ws = self.ws
        try:
            async for frame in ws:
                self._frame(frame)
        except ConnectionClosed:
            pass
        finally:
            self.close_code = ws.close_code
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionLost(f"closed with {ws.close_code}"))
            self._pending.clear()
            self.closed.set()
            self._arrived.set()
            if self._should_reconnect():
                self._reconnecting = asyncio.create_task(self._reconnect_by_itself())

    def _frame(self, frame: str | bytes) -> None:
        try:
            msg = decode_server_fast(frame, _CLIENT_LIMITS)
        except ProtocolError:
            return  # a newer server's message we cannot read
        self._receive(msg)

    def _should_reconnect(self) -> bool:
        """After a server's shutdown (a restart) or a drop, not after logout, a session
        replaced elsewhere, or an abuse close (PROTOCOL.md, close codes)."""
        bye = self._goodbye
        return (
            self.auto_reconnect > 0
            and not self._stopped
            and self.player is not None
            and (bye is None or bye.reason == "shutdown")
        )

    async def _reconnect_by_itself(self) -> None:
        """Resume the session as soon as the server is back: after ``reconnect_after_ms``
        (a shutdown's goodbye says when), then again and again (at most a second apart)
        for :attr:`auto_reconnect` seconds. Gives up on ``unknown_session``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.auto_reconnect
        bye = self._goodbye
        delay = (bye.reconnect_after_ms or 200) / 1000 if bye is not None else 0.1
        try:
            await self._keep_reconnecting(deadline, delay)
        finally:
            self._arrived.set()  # next() waiting on the way: it looks again

    async def _keep_reconnecting(self, deadline: float, delay: float) -> None:
        loop = asyncio.get_running_loop()
        while not self._stopped:
            await asyncio.sleep(delay)
            try:
                await self.reconnect()
            except UnknownSessionError:
                return
            except (OSError, TimeoutError, WebSocketException, ConnectionLost):
                if loop.time() + delay > deadline:
                    return  # (closed stays set: the caller sees it is over)
                delay = min(delay * 2, 1.0)
                continue
            self.reconnects += 1
            return

    def _receive(self, msg: Any) -> None:
        if isinstance(msg, m.Goodbye):
            self._goodbye = msg
        if isinstance(msg, (m.Resumed, m.LoggedIn)) and msg.rooms is not None:
            for room, track in self.rooms.items():  # the session's rooms, as the server says
                track.live = room in msg.rooms
        if isinstance(msg, m.RoomState):
            track = self.rooms.setdefault(msg.room, RoomTrack())
            track.state = msg
            track.seq = max(track.seq, msg.seq)
        replayed: list[Any] = []
        if isinstance(msg, m.CatchUp):
            replayed = [ev for ev in msg.events if self._room_event(ev)]
        elif msg.type in m.ROOM_EVENT_TYPES and not self._room_event(msg):
            return  # a duplicate of an event already seen, or one kept until a gap is filled
        self._accept(msg, replayed)
        room = getattr(msg, "room", None)
        track = None if room is None else self.rooms.get(room)
        if track is not None:
            if isinstance(msg, (m.RoomState, m.CatchUp)) or msg.type in m.ROOM_EVENT_TYPES:
                track.live = msg.type != "room_closed"  # a closed room's session left it
                track.last = next(self._ticks)
            if isinstance(msg, (m.RoomState, m.CatchUp)) and not getattr(msg, "more", False):
                track.asking = False
            if track.ahead:
                self._fill_gap(room, track)  # type: ignore[arg-type]

    def _accept(self, msg: Any, replayed: list[Any]) -> None:
        """Answer the request ``msg`` replies to, and queue it (and ``replayed``) for next()."""
        re = getattr(msg, "re", None)
        if re is not None and re in self._pending:
            fut = self._pending.pop(re)
            if not fut.done():
                if isinstance(msg, m.Error):
                    fut.set_exception(error_from(msg))
                else:
                    fut.set_result(msg)
        listener = self.listener
        if listener is not None:
            listener(msg)
            for ev in replayed:
                listener(ev)
        else:
            self._inbox.append(msg)
            # events caught up on are seen by next() as if they had arrived live
            self._inbox.extend(replayed)
        self._arrived.set()

    # -- requests ---------------------------------------------------------------------------
    async def send(self, msg: BaseModel) -> None:
        """Send without waiting for a reply."""
        await self.send_wire(to_wire(msg))

    async def send_wire(self, data: dict[str, Any]) -> None:
        """Send a message given as wire data (:func:`protocol.codec.to_wire`'s form)."""
        if self.ws is None:
            raise ConnectionLost("not connected")
        try:
            await self.ws.send(encode_wire(data, binary=self.binary))
        except ConnectionClosed as exc:
            raise ConnectionLost(str(exc)) from None

    async def request(self, msg: BaseModel, timeout: float = 10.0) -> Any:
        """Send ``msg`` with a fresh id and return the reply (raise its error); a patient
        client waits out ``rate_limited`` refusals and sends it again."""
        return await self._request_wire(to_wire(msg), timeout)

    async def _request_wire(self, wire: dict[str, Any], timeout: float) -> Any:
        for _ in range(PATIENT_TRIES if self.patient else 0):
            try:
                return await self._request_once(wire, timeout)
            except RateLimitedError as exc:
                await asyncio.sleep((exc.retry_after or 50) / 1000)
        return await self._request_once(wire, timeout)

    async def _request_once(self, wire: dict[str, Any], timeout: float) -> Any:
        sent = self._open_request(wire)
        try:
            await self.send_wire(sent.data)
        except BaseException:  # (not sent: nothing will answer it, nothing is to wait)
            self._pending.pop(sent.id, None)
            raise
        return await self.reply(sent, timeout)

    def _open_request(self, wire: dict[str, Any]) -> Sent:
        rid = next(self._ids)
        data = {"type": wire["type"], "id": rid} | wire  # (the model's order: type, id...)
        data["id"] = rid
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        return Sent(rid, data, fut)

    async def reply(self, sent: Sent, timeout: float = 10.0) -> Any:
        """The reply to a request sent (raises its error, or :class:`TimeoutError`)."""
        try:
            async with asyncio.timeout(timeout):  # (wait_for would wrap fut in a task)
                return await sent.reply
        finally:
            self._pending.pop(sent.id, None)

    def move_now(self, room: str, move: str) -> Sent | None:
        """Send a move at once from a callback, with no task and no turn of the loop (the
        runner sends an engine's answer as its line is read); :meth:`reply` waits for the
        server's answer. ``None``, having sent nothing, when :meth:`move` is needed (not
        connected, a send under way, the socket's buffer not empty). ``move`` comes from
        the server's legal moves, so it is not checked against the protocol's pattern."""
        ws = self.ws
        if not isinstance(ws, DirectConnection) or self.closed.is_set():
            return None
        sent = self._open_request(make_move_wire(room, move, "event"))
        if not ws.send_now(encode_wire(sent.data, binary=self.binary)):
            self._pending.pop(sent.id, None)
            return None
        return sent

    async def next(
        self,
        type: str | tuple[str, ...] | None = None,
        room: str | None = None,
        where: Callable[[Any], bool] | None = None,
        timeout: float = 10.0,
    ) -> Any:
        """The next message received (after those already returned) matching the filters.

        Messages skipped over stay in :attr:`received`. Raises :class:`TimeoutError`,
        or :class:`ConnectionLost` if the connection closes first.
        """
        types = (type,) if isinstance(type, str) else type

        def ok(msg: Any) -> bool:
            return (
                (types is None or msg.type in types)
                and (room is None or getattr(msg, "room", None) == room)
                and (where is None or where(msg))
            )

        async def scan() -> Any:
            if not self.keep_events and self._pos > 1000:
                del self._inbox[: self._pos]  # long-running bots: forget what was scanned
                self._pos = 0
            while True:
                while self._pos < len(self._inbox):
                    msg = self._inbox[self._pos]
                    self._pos += 1
                    if ok(msg):
                        return msg
                reconnecting = self._reconnecting is not None and not self._reconnecting.done()
                if self.closed.is_set() and not reconnecting:
                    raise ConnectionLost(f"closed with {self.close_code}")
                self._arrived.clear()
                await self._arrived.wait()

        async with asyncio.timeout(timeout):
            return await scan()

    @property
    def received(self) -> list[Any]:
        """Every message received on this client, in order (replies included)."""
        return self._inbox

    def events(self, room: str) -> list[Any]:
        """The room events this client saw for ``room``, in seq order, without duplicates."""
        return list(self.rooms.get(room, RoomTrack()).events)

    # -- session ------------------------------------------------------------------------------
    async def login(self, name: str, token: str | None = None, bot: bool = False) -> m.Player:
        """Log in on this connection; its session (the one :meth:`reconnect` resumes
        from now on) is the one of this connection's ``welcome``, or the player's own
        dropped session when the login took it over (``logged_in.resume_token``; its rooms,
        :attr:`taken_over`, have their snapshots in when this returns, so that a caller
        counts their games before it asks for more)."""
        tick = next(self._ticks)
        reply = await self.request(m.Login(name=name, token=token, bot=bot))
        self.player = reply.player
        self.taken_over = list(reply.rooms or [])
        if reply.resume_token is not None and reply.session is not None:
            self.session, self.resume_token = reply.session, reply.resume_token
            await self._snapshots(self.taken_over, tick)
        else:
            self._adopt_welcome()
        return reply.player

    async def logout(self) -> None:
        await self.request(m.Logout())
        self._leave_all()
        await self.close()

    async def ping(self) -> None:
        await self.request(m.Ping())

    # -- room (the rest: clients/calls.py) -----------------------------------------------
    async def leave(self, room: str) -> None:
        await self.request(m.LeaveRoom(room=room))
        track = self.rooms.get(room)
        if track is not None:
            track.live = False  # not listed in a resume any more

    async def move(self, room: str, move: str) -> None:
        """Play a move; returns once the server accepted (and logged) it.

        Asks for the move's own ``move_made`` as the reply (``reply: "event"``), one
        frame fewer than an ``ack``; a server that answers ``ack`` instead is fine too.
        """
        m.MakeMove(room=room, move=move)  # (checked: a bad move is refused here, typed)
        await self._request_wire(make_move_wire(room, move, "event"), 10.0)


from protocol.limits import DecodeLimits  # noqa: E402

#: a client accepts frames as large as the server may send (snapshots of big boards)
_CLIENT_LIMITS = DecodeLimits(max_frame_bytes=1 << 20)
