"""The arena server: sessions, lobby, quick match, rooms, records, HTTP, all on one port.

:class:`Arena` holds this node's state (its rooms, the sessions connected to
it) and talks to everything shared through :mod:`server.presence`.
:func:`serve` runs it on a ``websockets`` server whose ``process_request``
answers ``/healthz`` and ``/metrics`` over plain HTTP on the same port.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import structlog
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from engine.base import SetupError, game_class, game_names, new_game
from protocol import messages as m
from protocol.codec import to_wire
from protocol.errors import CloseCode, ErrorCode, ProtocolError
from protocol.session import Phase
from protocol.versions import PROTOCOL_VERSIONS, choose_version
from server.connection import Connection, WriteBatches
from server.login_throttle import LoginGuard
from server.metrics import CONTENT_TYPE_LATEST, Metrics
from server.names import name_key, normalize
from server.outgoing import Outgoing
from server.presence import Presence, PresenceError, open_presence
from server.ratings import Rating
from server.records import RecordStore, record_views
from server.room import Room, RoomSettings, now_ms
from server.tasks import checkpoint, stop
from server.web import WebPage

log = structlog.get_logger("arena.server")

SOFTWARE = "collapsi-arena/0.1"
#: additive protocol extensions this server supports (welcome.features, PROTOCOL.md)
FEATURES = ("move_reply",)


@dataclass
class Config:
    host: str = "127.0.0.1"
    port: int = 8765
    data_dir: str | None = None
    presence_url: str | None = None
    prefix: str = "arena:"
    node: str = ""
    #: seconds a dropped session keeps its seats before it loses by abandonment
    grace: float = 60.0
    max_frame_bytes: int = 64 * 1024
    rate_burst: int = 40
    rate_per_second: float = 20.0
    #: refusals in a row (while rate limited) before the connection is closed as abuse
    abuse_after: int = 200
    #: undecodable frames (bad_frame, bad_request, unknown_type) in a row before the
    #: connection is closed as abuse (PROTOCOL.md: 4004, a stream of malformed frames)
    malformed_after: int = 100
    #: messages queued for one connection before it counts as not reading and is dropped
    out_queue: int = 512
    #: kernel send buffer per connection (bytes); None keeps the OS's autotuning
    sndbuf: int | None = None
    ping_interval: float | None = 20.0
    ping_timeout: float | None = 20.0
    hello_timeout: float = 10.0
    max_rooms_per_player: int = 8
    #: rating gap quick match accepts at first; it widens by this much per second waited
    match_gap: float = 150.0
    match_widen_per_s: float = 50.0
    lease_ttl: float = 15.0
    #: failed logins (wrong token) allowed per name, then one per this many seconds
    login_fails_per_name: int = 5
    login_fail_name_seconds: float = 10.0
    #: failed logins allowed per client address, then one per this many seconds
    login_fails_per_address: int = 20
    login_fail_address_seconds: float = 2.0
    #: folder of the web page's static files (served at /); None: no page
    web_dir: str | None = None


class Session:
    """A session as this node knows it (its connection comes and goes)."""

    def __init__(self, sid: str, token: str, node: str = "") -> None:
        self.id = sid
        self.token = token
        self.node = node  # the node holding its connection (several nodes share presence)
        self.player: dict[str, Any] | None = None
        self.conn: Connection | None = None
        self.rooms: set[str] = set()
        self.queue: str | None = None
        self.expiry: asyncio.TimerHandle | None = None
        #: rooms whose catch-up the resumed connection still waits for (their events wait too)
        self.resuming: set[str] = set()

    def data(self) -> dict[str, Any]:
        return {"player": self.player, "rooms": sorted(self.rooms), "node": self.node}


class Arena:
    def __init__(self, config: Config, presence: Presence | None = None) -> None:
        self.config = config
        self.node = config.node or f"node-{secrets.token_hex(3)}"
        self.presence = presence or open_presence(config.presence_url, config.prefix)
        self.records = RecordStore(self.presence, config.data_dir)
        self.metrics = Metrics()
        self.logins = LoginGuard(config)
        self.web = None if config.web_dir is None else WebPage(config.web_dir)
        self.rooms: dict[str, Room] = {}
        self.invites: dict[str, str] = {}
        self.sessions: dict[str, Session] = {}
        self.online_names: dict[str, str] = {}  # name key -> session id
        self.connections: set[Connection] = set()
        #: connections subscribed to lobby events (the fan-out visits only these)
        self.lobby_conns: set[Connection] = set()
        #: frames of one loop step, one write per connection at the next (server.connection)
        self.write_batches = WriteBatches()
        self._tasks: list[asyncio.Task[Any]] = []
        self._games = self._game_infos()
        self._seatings: dict[tuple[str, str, str, int | None], tuple[int, list[str]]] = {}
        self.server: Server | None = None
        self._match_now = asyncio.Event()
        self._background: set[asyncio.Task[Any]] = set()
        #: set when shutdown begins: rooms given up are not taken back (server.cluster)
        self.stopping = False
        #: sessions whose data is to be saved, in one call per loop step (_save_session)
        self._unsaved: dict[str, Session] = {}
        self._saving: asyncio.Future[None] | None = None
        self.log = log.bind(node=self.node)
        self.metrics.attach(self)
        #: several nodes share the presence store: rooms reachable from any node (server.cluster)
        self.cluster: Any = None
        if hasattr(self.presence, "publish_node"):
            from server.cluster import Cluster

            self.cluster = Cluster(self)

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> None:
        await self.presence.start()
        if self.cluster is not None:
            await self.cluster.start()
        loaded = await self.records.load()
        for name, coro in (
            ("loop-lag", self.metrics.watch_loop_lag()),
            ("lobby-fanout", self._lobby_fanout()),
            ("matchmaker", self._matchmaker()),
            ("renew-leases", self._renew_leases()),
        ):
            self._tasks.append(asyncio.create_task(coro, name=name))
        self.log.info("arena_started", records=loaded)

    async def shutdown(self) -> None:
        """Tell every client, stop the rooms, finish the writes in flight."""
        self.stopping = True
        self.log.info("arena_stopping", connections=len(self.connections))
        for conn in list(self.connections):
            conn.send(
                m.Goodbye(
                    reason="shutdown", message="server shutting down", reconnect_after_ms=1000
                )
            )
            conn.close(CloseCode.GOING_AWAY, "server shutting down")
        for room in list(self.rooms.values()):
            await room.stop()
            with contextlib.suppress(Exception):
                await self.presence.release_room(room.id, self.node)
        await self.records.flush()
        if self._background:
            await asyncio.wait(list(self._background), timeout=5)
        await stop(self._tasks)  # cancelled again if they go on (server.tasks)
        if self.cluster is not None:
            await self.cluster.stop()
        await self.presence.close()
        self.log.info("arena_stopped")

    def _game_infos(self) -> list[m.GameInfo]:
        infos = []
        for name in game_names():
            cls = game_class(name)
            sizes = []
            for n in range(1, 9):
                try:
                    new_game(name, players=n, variant=self._variant_for(cls, n))
                    sizes.append(n)
                except SetupError:
                    continue
            infos.append(
                m.GameInfo(
                    game=name,
                    rule_sets=list(cls.rule_sets),
                    variants=list(cls.variants),
                    min_players=min(sizes or [2]),
                    max_players=max(sizes or [2]),
                )
            )
        return infos

    @staticmethod
    def _variant_for(cls: Any, players: int) -> str | None:
        if players > 2 and "big-board" in cls.variants:
            return "big-board"
        if players == 1 and "solo" in cls.variants:
            return "solo"
        return None

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run ``coro`` in the background, keeping a reference; shutdown waits for it."""
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # -- delivery -------------------------------------------------------------------------
    def deliver(self, session: str, out: Outgoing) -> None:
        s = self.sessions.get(session)
        if s is not None:
            if s.conn is not None:
                if s.resuming and self.held(s, out):
                    return
                s.conn.send(out)
                if self.cluster is not None:
                    self.cluster.note(session, out)
        elif self.cluster is not None:
            self.cluster.deliver(session, out)

    @staticmethod
    def held(s: Session, out: Outgoing) -> bool:
        """Whether a resuming session's connection must not get ``out`` yet.

        Until a room's catch-up (or snapshot) has gone out, its live events would
        overtake it; they are left out, as that catch-up holds them (an event is
        logged before it is sent, and the room sends the catch-up after them).
        Except ``room_closed``: a room that closes before its catch-up sends none (it is
        gone, and its log with it), so its last event goes out on its own.
        """
        room = out.wire.get("room")
        if room not in s.resuming:
            return False
        if out.type in ("catch_up", "room_state", "room_closed"):
            s.resuming.discard(room)
            return False
        return True

    def session_name(self, session: str) -> str | None:
        s = self.sessions.get(session)
        if s is None and self.cluster is not None:
            return self.cluster.names.get(session)
        return None if s is None or s.player is None else s.player["name"]

    def forget_room(self, session: str, room_id: str) -> None:
        s = self.sessions.get(session)
        if s is not None and room_id in s.rooms:
            s.rooms.discard(room_id)
            self._save_session_soon(s)
        elif s is None and self.cluster is not None:
            self.cluster.forget(session, room_id)

    def drop_session(self, session: str) -> None:
        """The session was resumed on another node: let it go here without ending it."""
        s = self.sessions.pop(session, None)
        if s is None:
            return
        if s.expiry is not None:
            s.expiry.cancel()
        if s.player is not None and self.online_names.get(name_key(s.player["name"])) == s.id:
            del self.online_names[name_key(s.player["name"])]
        if s.conn is not None:
            s.conn.send(m.Goodbye(reason="session_replaced"))
            s.conn.close(CloseCode.SESSION_REPLACED, "session resumed on another node")
            s.conn.session = None
        self.metrics.sessions.set(len(self.sessions))

    def _room_nowait(self, room_id: str) -> Any:
        """The room if this node hosts it, else a stand-in for posting to its owner."""
        room = self.rooms.get(room_id)
        if room is None and self.cluster is not None:
            return self.cluster.cached_room(room_id)
        return room

    async def _save_session(self, s: Session) -> None:
        """Save the session's data (its rooms) in presence; done when it is saved (or
        the save failed: ignored, as a session's rooms are saved again on each change)."""
        saved = self._save_session_soon(s)
        if saved is not None:
            await asyncio.shield(saved)

    def _save_session_soon(self, s: Session) -> asyncio.Future[None] | None:
        """Save the session's data without waiting (None: its node saves it). The saves
        asked for in one loop step go to presence in one call (``update_sessions``),
        each session's data as it is then: under load, several per call."""
        if self.cluster is not None and s.node and s.node != self.node:  # matched from here
            self.cluster.send(s.node, {"k": "rooms", "s": s.id, "rooms": sorted(s.rooms)})
            return None
        self._unsaved[s.id] = s
        saving = self._saving
        if saving is None:
            saving = self._saving = asyncio.get_running_loop().create_future()
            # runs at the next step: the batch is taken then
            task = self.spawn(self._save_sessions())
            task.add_done_callback(lambda _: self._saved(saving))
        return saving

    async def _save_sessions(self) -> None:
        batch, self._unsaved = self._unsaved, {}
        self._saving = None  # saves asked for from now on go in the next batch
        try:
            await self.presence.update_sessions({i: s.data() for i, s in batch.items()})
        except PresenceError:
            pass  # (an outage) a session's rooms are saved again on each change
        except Exception:  # a bug: said, not hidden; the waiters go on all the same
            self.log.exception("sessions_not_saved", sessions=len(batch))

    def _saved(self, saving: asyncio.Future[None]) -> None:
        """A batch's save ended, however: its waiters go on. A task cancelled before its
        first step (at exit) took no batch: the next save starts a new one."""
        if self._saving is saving:
            self._saving = None
        if not saving.done():
            saving.set_result(None)

    async def room_closed(self, room: Room) -> None:
        self.rooms.pop(room.id, None)
        if room.settings.invite:
            self.invites.pop(room.settings.invite, None)
        self.metrics.rooms.set(len(self.rooms))
        await self.presence.drop_closed_room(room.id, self.node)

    # -- connections ------------------------------------------------------------------------
    async def handle(self, ws: ServerConnection) -> None:
        if self.config.sndbuf:
            sock = ws.transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.config.sndbuf)
        conn = Connection(self, ws)
        self.connections.add(conn)
        self.metrics.connections.inc()
        self.metrics.connections_total.inc()
        try:
            await conn.run()
        finally:
            self.connections.discard(conn)
            self.lobby_conns.discard(conn)
            self.metrics.connections.dec()
            await self._connection_lost(conn)
            conn.done.set()

    async def _connection_lost(self, conn: Connection) -> None:
        s = self.sessions.get(conn.session or "")
        if s is None or s.conn is not conn:
            return
        s.conn = None
        if s.queue is not None:
            with contextlib.suppress(Exception):
                await self.presence.queue_cancel(s.queue, s.id)
            s.queue = None
        for room_id in list(s.rooms):
            room = self._room_nowait(room_id)
            if room is not None:
                room.post(room.disconnected, s.id)
        with contextlib.suppress(Exception):
            await self.presence.touch_session(s.id, self.config.grace)
        loop = asyncio.get_running_loop()
        s.expiry = loop.call_later(self.config.grace, lambda: self._expire(s))
        conn.log.info("connection_lost", session=s.id)

    def _expire(self, s: Session) -> None:
        """The grace period ran out: the session is gone, and so are its seats."""
        if s.conn is not None:
            return
        self.sessions.pop(s.id, None)
        self.metrics.sessions.set(len(self.sessions))
        if s.player is not None:
            key = name_key(s.player["name"])
            if self.online_names.get(key) == s.id:
                del self.online_names[key]
        for room_id in list(s.rooms):
            room = self._room_nowait(room_id)
            if room is not None:
                room.post(room.session_gone, s.id)
        self.spawn(self.presence.end_session(s.id))
        log.info("session_expired", session=s.id)

    # -- dispatch ------------------------------------------------------------------------
    async def dispatch(self, conn: Connection, msg: Any) -> None:
        handler = getattr(self, f"on_{msg.type}", None)
        if handler is None:
            raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"{msg.type} is not served here")
        await handler(conn, msg)

    def _session(self, conn: Connection) -> Session:
        s = self.sessions.get(conn.session or "")
        if s is None:
            raise ProtocolError(ErrorCode.NOT_AUTHENTICATED, "no session")
        return s

    def _room(self, room_id: str) -> Room:
        room = self.rooms.get(room_id)
        if room is None or room.closed:
            raise ProtocolError(ErrorCode.UNKNOWN_ROOM, f"no room {room_id}")
        return room

    async def _find_room_or_none(self, room_id: str) -> Any:
        """This node's room, or (several nodes) a stand-in for the room on its owner."""
        room = self.rooms.get(room_id)
        if room is not None and not room.closed:
            return room
        if self.cluster is not None:
            return await self.cluster.find_room(room_id)
        return None

    async def _find_room(self, room_id: str) -> Any:
        room = await self._find_room_or_none(room_id)
        if room is None:
            raise ProtocolError(ErrorCode.UNKNOWN_ROOM, f"no room {room_id}")
        return room

    # session
    async def on_hello(self, conn: Connection, msg: m.Hello) -> None:
        version = choose_version(msg.versions, PROTOCOL_VERSIONS)
        sid, token = f"s{secrets.token_hex(8)}", secrets.token_urlsafe(24)
        s = Session(sid, token, self.node)
        await self.presence.create_session(sid, token, s.data(), ttl=86400)
        self.sessions[sid] = s
        s.conn = conn
        conn.session = sid
        conn.log = conn.log.bind(session=sid)
        cfg = self.config
        conn.send(
            m.Welcome(
                re=msg.id,
                version=version,
                server=m.ServerInfo(name="collapsi-arena", software=SOFTWARE, node=self.node),
                session=sid,
                resume_token=token,
                limits=m.Limits(
                    max_frame_bytes=cfg.max_frame_bytes,
                    rate=m.Rate(burst=cfg.rate_burst, per_second=cfg.rate_per_second),
                    max_rooms_per_player=cfg.max_rooms_per_player,
                    resume_grace_ms=int(cfg.grace * 1000),
                    ping_interval_ms=int((cfg.ping_interval or 0) * 1000),
                ),
                games=self._games,
                features=list(FEATURES),
            )
        )
        conn.phase = Phase.ANONYMOUS
        conn.log.info("hello", software=msg.software, binary=conn.binary)

    async def on_login(self, conn: Connection, msg: m.Login) -> None:
        s = self._session(conn)
        name = normalize(msg.name)  # bad_request for a name the server refuses
        key = name_key(name)
        # one answer whether the name is claimed, online, or the token is wrong: the
        # server does not say whether a name exists (PROTOCOL.md)
        taken = ProtocolError(ErrorCode.NAME_TAKEN, f"{name} is not available")
        if msg.token is not None:
            await self.logins.check(conn, key, msg.token)  # weak token, throttled
            if not await self.presence.claim_name(name, msg.token):
                self.logins.failed(conn, key)
                raise taken
        elif await self.presence.name_claimed(name):
            raise taken
        holder = self.online_names.get(key)
        held = None if holder is None or holder == s.id else self.sessions.get(holder)
        if held is not None:
            if msg.token is not None and self._dropped_player(held):
                # the player's own session, dropped (a client restarted without its resume
                # token): proven by the name's token, this login takes it over as a resume
                await self._take_over(conn, s, held, msg)
                return
            raise taken
        self.online_names[key] = s.id
        s.player = {"name": name, "guest": msg.token is None, "bot": msg.bot}
        await self.presence.update_session(s.id, s.data())
        self.metrics.sessions.set(len(self.sessions))
        conn.phase = Phase.AUTHENTICATED
        conn.log.info("login", name=name, guest=msg.token is None, bot=msg.bot)
        conn.send(m.LoggedIn(re=msg.id, player=m.Player(**s.player)))

    @staticmethod
    def _dropped_player(held: Session) -> bool:
        """A player's (not a guest's) session in its grace period: no connection."""
        return held.conn is None and held.player is not None and not held.player["guest"]

    async def _take_over(self, conn: Connection, fresh: Session, held: Session, msg: Any) -> None:
        """A login proven by the name's token takes over the player's dropped session: the
        connection becomes that session, as on resume, with a snapshot of each room (the
        client restarted: it has no seq to give)."""
        await self._keep_session(held)  # before any change: a failure here changes nothing
        self._attach(conn, held, {})  # at once: a resume coming later replaces this one
        await self._end_fresh_session(fresh, held)
        reply = m.LoggedIn(
            re=msg.id,
            player=m.Player(**held.player),  # type: ignore[arg-type]
            session=held.id,
            resume_token=held.token,
            rooms=sorted(held.rooms),
        )
        try:
            await self._resume_rooms(conn, held, reply, {})
        finally:
            if held.conn is conn:
                held.resuming.clear()
        conn.log.info("login_took_over", rooms=sorted(held.rooms))

    async def on_resume(self, conn: Connection, msg: m.Resume) -> None:
        found = await self.presence.resume_session(msg.token)
        if found is not None and (found[0] == conn.session or not found[1].get("player")):
            # this connection's own session, or one that never logged in: nothing to resume
            # (PROTOCOL.md: a welcome's token becomes valid once its connection logged in)
            found = None
        old = None if found is None else self.sessions.get(found[0])
        if old is None and found is not None and self.cluster is not None:
            old = self._adopt_session(found[0], found[1], msg.token)
        if old is None or old.player is None:
            raise ProtocolError(ErrorCode.UNKNOWN_SESSION, "no such session (or it expired)")
        await self._keep_session(old)  # before any change: a failure here changes nothing
        fresh = self.sessions.get(conn.session or "")
        cursors = {c.room: c.seq for c in msg.rooms}
        self._attach(conn, old, cursors)  # at once (its expiry cancelled), as a takeover
        if fresh is not None:
            await self._end_fresh_session(fresh, old)
        reply = m.Resumed(
            re=msg.id,
            player=m.Player(**old.player),
            session=old.id,
            resume_token=old.token,
            rooms=sorted(old.rooms),
        )
        try:
            await self._resume_rooms(conn, old, reply, cursors)
        finally:
            if old.conn is conn:
                old.resuming.clear()
        conn.log.info("resumed", rooms=sorted(old.rooms))

    async def _keep_session(self, s: Session) -> None:
        """Keep a session that is resumed or taken over for a day in presence; unknown if
        its grace period ended meanwhile."""
        await self.presence.touch_session(s.id, 86400)
        if self.sessions.get(s.id) is not s:
            raise ProtocolError(ErrorCode.UNKNOWN_SESSION, "no such session (or it expired)")

    async def _end_fresh_session(self, fresh: Session, old: Session) -> None:
        """The connection's own session ends as it takes over ``old``."""
        if fresh is old:
            return
        self.sessions.pop(fresh.id, None)
        self.spawn(self.presence.end_session(fresh.id))
        for room_id in sorted(fresh.rooms):  # rooms it watched: no ghost spectator left
            room = self._room_nowait(room_id)
            if room is not None:
                with contextlib.suppress(ProtocolError, PresenceError):
                    await room.ask(room.leave, fresh.id, "resign")

    def _attach(self, conn: Connection, old: Session, seen: dict[str, int]) -> None:
        """The connection is ``old``'s from now on (an open one it had is replaced); its
        rooms' live events wait for their catch-up (or snapshot)."""
        if old.expiry is not None:
            old.expiry.cancel()
            old.expiry = None
        if old.conn is not None and old.conn is not conn:
            old.conn.send(m.Goodbye(reason="session_replaced"))
            old.conn.close(CloseCode.SESSION_REPLACED, "session resumed elsewhere")
            old.conn.session = None
        old.conn = conn
        old.resuming = set(old.rooms)
        if self.cluster is not None:  # what this connection has seen, not the last one
            self.cluster.resumed(old.id, seen)
        conn.session = old.id
        conn.log = conn.log.bind(session=old.id)
        self.metrics.sessions.set(len(self.sessions))

    async def _resume_rooms(
        self, conn: Connection, old: Session, reply: Any, cursors: dict[str, int]
    ) -> None:
        """Send ``reply`` (``resumed``, or ``logged_in`` for a session a login took over),
        then each room's catch-up (its live events wait behind it)."""
        assert old.player is not None  # (logged-in sessions only are resumed or taken over)
        conn.phase = Phase.AUTHENTICATED
        conn.send(reply)
        for room_id in sorted(old.rooms):
            try:
                room = await self._find_room_or_none(room_id)
                if room is None:
                    continue
                await room.ask(room.resume_member, old.id, cursors.get(room_id))
            except PresenceError as exc:  # its node is gone: the takeover will catch us up
                conn.log.warning("resume_room_unavailable", room=room_id, error=str(exc))
            except ProtocolError as exc:  # it closed meanwhile: resumed was the one reply
                conn.log.info("resume_room_closed", room=room_id, error=str(exc))
            finally:
                old.resuming.discard(room_id)

    def _adopt_session(self, sid: str, data: dict[str, Any], token: str) -> Session:
        """A session whose node is gone (or elsewhere) resumes here; its old node drops it."""
        s = Session(sid, token, self.node)
        s.player = data.get("player")
        s.rooms = set(data.get("rooms") or [])
        self.sessions[sid] = s
        if s.player is not None:
            self.online_names[name_key(s.player["name"])] = sid
        previous = data.get("node")
        if previous and previous != self.node:
            self.cluster.send(previous, {"k": "drop", "s": sid})
        self.spawn(self._save_session(s))
        self.metrics.sessions.set(len(self.sessions))
        return s

    async def on_logout(self, conn: Connection, msg: m.Logout) -> None:
        s = self._session(conn)
        for room_id in list(s.rooms):
            room = await self._find_room_or_none(room_id)
            if room is not None:
                with contextlib.suppress(ProtocolError):
                    await room.ask(room.leave, s.id, "resign")
        if s.player is not None and self.online_names.get(name_key(s.player["name"])) == s.id:
            del self.online_names[name_key(s.player["name"])]
        self.sessions.pop(s.id, None)
        await self.presence.end_session(s.id)
        conn.session = None
        conn.send(m.Ack(re=msg.id))
        conn.send(m.Goodbye(reason="logout"))
        conn.close(CloseCode.NORMAL, "logout")

    async def on_ping(self, conn: Connection, msg: m.Ping) -> None:
        conn.send(m.Pong(re=msg.id))

    # lobby
    async def _public_rooms(self, game: str | None) -> list[dict[str, Any]]:
        rooms = await self.presence.lobby_list()
        rooms = [r for r in rooms if game is None or r.get("game") == game]
        rooms.sort(key=lambda r: r.get("created_at") or 0, reverse=True)
        return rooms

    async def on_list_rooms(self, conn: Connection, msg: m.ListRooms) -> None:
        rooms = await self._public_rooms(msg.game)
        conn.send(
            m.RoomList(
                re=msg.id,
                rooms=[m.RoomSummary.model_validate(r) for r in rooms[:500]],
                truncated=len(rooms) > 500,
            )
        )

    async def on_lobby_subscribe(self, conn: Connection, msg: m.LobbySubscribe) -> None:
        conn.lobby = True
        conn.lobby_game = msg.game
        self.lobby_conns.add(conn)
        await self.on_list_rooms(conn, m.ListRooms(id=msg.id, game=msg.game))

    async def on_lobby_unsubscribe(self, conn: Connection, msg: m.LobbyUnsubscribe) -> None:
        conn.lobby = False
        self.lobby_conns.discard(conn)
        conn.send(m.Ack(re=msg.id))

    async def _lobby_fanout(self) -> None:
        """One lobby subscription per node, fanned out to the subscribed connections.

        A subscription that ends (the store went away) is opened again."""
        while True:
            checkpoint()
            with contextlib.suppress(PresenceError):
                await self._lobby_fanout_once()
            await asyncio.sleep(0.25)

    async def _lobby_fanout_once(self) -> None:
        known: set[str] = set()
        async with await self.presence.subscribe_lobby() as sub:
            # (Re)subscribed: events may have been lost in between (a subscriber that fell
            # too far behind is dropped), so every subscriber gets the lobby as it is now.
            rooms = await self._public_rooms(None)
            known.update(r["room"] for r in rooms)
            snapshots: dict[str | None, Outgoing] = {}
            for conn in list(self.lobby_conns):
                game = conn.lobby_game
                if game not in snapshots:
                    mine = [r for r in rooms if game is None or r.get("game") == game]
                    snapshots[game] = Outgoing.of(
                        m.RoomList(
                            rooms=[m.RoomSummary.model_validate(r) for r in mine[:500]],
                            truncated=len(mine) > 500,
                        )
                    )
                conn.send(snapshots[game])
            async for ev in sub:
                if ev["op"] == "upsert":
                    room = ev["room"]["room"]
                    added = room not in known
                    known.add(room)
                    if not self.lobby_conns:  # nobody listens: no message to build
                        continue
                    summary = m.RoomSummary.model_validate(ev["room"])
                    cls = m.RoomAdded if added else m.RoomUpdated
                    out = Outgoing.of(cls(summary=summary))
                    game = summary.game
                else:
                    known.discard(ev["room_id"])
                    if not self.lobby_conns:
                        continue
                    out = Outgoing.of(m.RoomRemoved(room=ev["room_id"]))
                    game = None
                for conn in list(self.lobby_conns):
                    if game is None or conn.lobby_game in (None, game):
                        conn.send(out)

    def _check_game(self, game: str, rules: str | None, variant: str | None) -> tuple[str, str]:
        if game not in game_names():
            raise ProtocolError(ErrorCode.UNKNOWN_GAME, f"this server does not host {game!r}")
        cls = game_class(game)
        rules = rules or cls.rule_sets[0]
        variant = variant or cls.variants[0]
        if rules not in cls.rule_sets or variant not in cls.variants:
            raise ProtocolError(ErrorCode.UNKNOWN_GAME, f"{game} has no {rules}/{variant}")
        return rules, variant

    def _player_rooms(self, s: Session) -> int:
        return sum(
            1 for r in s.rooms if r in self.rooms and self.rooms[r].members.get(s.id) == "player"
        )

    def _seating(
        self, game: str, rules: str, variant: str, seats: int | None, options: dict[str, Any]
    ) -> tuple[int, list[str]]:
        """Seat count and labels of a room's game, from a trial deal (which raises
        :class:`SetupError` for a bad set-up); remembered for the usual rooms without options."""
        key = (game, rules, variant, seats)
        known = None if options else self._seatings.get(key)
        if known is None:
            probe = new_game(game, rules=rules, variant=variant, players=seats, options=options)
            known = probe.num_players, probe.seat_names()
            if not options and len(self._seatings) < 256:
                self._seatings[key] = known
        return known[0], list(known[1])

    async def create_room(
        self,
        s: Session,
        game: str,
        rules: str | None,
        variant: str | None,
        options: dict[str, Any],
        seats: int | None,
        time_control: Any,
        rated: bool,
        private: bool,
        quick: bool = False,
        seat: int | None = None,
    ) -> Room:
        """Open a room; ``seat``, the creator's, is checked first: a refused request
        leaves no room behind (errors are never partial)."""
        rules, variant = self._check_game(game, rules, variant)
        if rated and s.player and s.player.get("guest"):
            raise ProtocolError(ErrorCode.FORBIDDEN, "rated games need a claimed name (a token)")
        if self._player_rooms(s) >= self.config.max_rooms_per_player:
            raise ProtocolError(ErrorCode.TOO_MANY_ROOMS, "you are in too many rooms")
        try:
            num_players, labels = self._seating(game, rules, variant, seats, options)
        except SetupError as exc:
            raise ProtocolError(ErrorCode.BAD_SETUP, str(exc)) from None
        if seat is not None and seat >= num_players:
            raise ProtocolError(ErrorCode.BAD_REQUEST, f"no seat {seat} in this room")
        room_id = f"r{secrets.token_hex(5)}"
        invite = secrets.token_urlsafe(8) if private else None
        settings = RoomSettings(
            room_id=room_id,
            game=game,
            rules=rules,
            variant=variant,
            seats=num_players,
            time_control=time_control,
            rated=rated,
            private=private,
            options=dict(options),
            invite=invite,
            created_at=now_ms(),
            quick=quick,
        )
        meta = {**settings.to_dict(), "node": self.node}
        if not await self.presence.open_room(room_id, self.node, self.config.lease_ttl, meta):
            raise ProtocolError(ErrorCode.INTERNAL, "room id collision")
        room = Room(self, settings, labels)
        room.start()
        self.rooms[room_id] = room
        if invite:
            self.invites[invite] = room_id
        self.metrics.rooms.set(len(self.rooms))
        room.log.info("room_created", game=game, rules=rules, variant=variant, private=private)
        return room

    async def on_create_room(self, conn: Connection, msg: m.CreateRoom) -> None:
        s = self._session(conn)
        room = await self.create_room(
            s,
            msg.game,
            msg.rules,
            msg.variant,
            msg.options,
            msg.seats,
            msg.time_control,
            msg.rated,
            msg.private,
            seat=msg.seat,
        )
        s.rooms.add(room.id)
        await self._save_session(s)
        await room.ask(room.open_for, s.id, s.player, msg.seat, msg.id)

    async def on_join_room(self, conn: Connection, msg: m.JoinRoom) -> None:
        s = self._session(conn)
        if msg.invite is not None:
            room_id = self.invites.get(msg.invite)
            if room_id is None and self.cluster is not None:  # a room of another node?
                room_id = await self.presence.find_invite(msg.invite)
            if room_id is None:
                raise ProtocolError(ErrorCode.UNKNOWN_ROOM, "no room with that invite code")
        else:
            room_id = msg.room  # type: ignore[assignment]
        room = await self._find_room(room_id)
        if room.settings.private and msg.invite is None and s.id not in room.members:
            raise ProtocolError(ErrorCode.FORBIDDEN, "a private room needs its invite code")
        if msg.role == "player" and room.members.get(s.id) != "player":  # (a spectator too)
            if s.player is None:
                raise ProtocolError(ErrorCode.NOT_AUTHENTICATED, "log in to join as a player")
            if self._player_rooms(s) >= self.config.max_rooms_per_player:
                raise ProtocolError(ErrorCode.TOO_MANY_ROOMS, "you are in too many rooms")
        await room.ask(room.join, s.id, s.player, msg.role, msg.id)
        s.rooms.add(room.id)
        await self._save_session(s)

    async def on_watch(self, conn: Connection, msg: m.Watch) -> None:
        s = self._session(conn)
        room = await self._find_room(msg.room)
        await room.ask(room.watch, s.id, msg.since_seq, msg.id)
        s.rooms.add(room.id)
        await self._save_session(s)

    async def on_leave_room(self, conn: Connection, msg: m.LeaveRoom) -> None:
        await self._room_call(conn, msg, "leave", "resign")

    async def _room_call(self, conn: Connection, msg: Any, fn_name: str, *args: Any) -> None:
        """Call a room method for the session, then ``ack``: from inside the actor for a
        room of this node (the ack shares the write of the events it follows)."""
        s = self._session(conn)
        room = await self._find_room(msg.room)
        ack = Outgoing({"type": "ack"} if msg.id is None else {"type": "ack", "re": msg.id})
        if type(room) is Room:
            await room.ask_then(partial(conn.send, ack), getattr(room, fn_name), s.id, *args)
            return
        await room.ask(getattr(room, fn_name), s.id, *args)
        conn.send(ack)

    async def on_take_seat(self, conn: Connection, msg: m.TakeSeat) -> None:
        s = self._session(conn)
        await self._room_call(conn, msg, "take_seat", s.player, msg.seat)

    async def on_leave_seat(self, conn: Connection, msg: m.LeaveSeat) -> None:
        await self._room_call(conn, msg, "leave_seat")

    async def on_ready(self, conn: Connection, msg: m.Ready) -> None:
        await self._room_call(conn, msg, "set_ready", msg.ready)

    async def on_move(self, conn: Connection, msg: m.MakeMove) -> None:
        if msg.reply == "event":  # the move's own move_made, with re, is the reply: no ack
            s = self._session(conn)
            room = await self._find_room(msg.room)
            await room.ask(room.move, s.id, msg.move, msg.id)
            return
        await self._room_call(conn, msg, "move", msg.move)

    async def on_resign(self, conn: Connection, msg: m.Resign) -> None:
        await self._room_call(conn, msg, "resign")

    async def on_offer_rematch(self, conn: Connection, msg: m.OfferRematch) -> None:
        await self._room_call(conn, msg, "offer_rematch", False)

    async def on_accept_rematch(self, conn: Connection, msg: m.AcceptRematch) -> None:
        await self._room_call(conn, msg, "offer_rematch", True)

    async def on_chat(self, conn: Connection, msg: m.Chat) -> None:
        s = self._session(conn)
        name = (s.player or {}).get("name", "anonymous")
        await self._room_call(conn, msg, "chat", name, msg.text)

    # quick match
    @staticmethod
    def _queue_key(game: str, rules: str, variant: str, tc: Any, rated: bool) -> str:
        w = to_wire(tc)
        clock = ",".join(f"{k}={w[k]}" for k in sorted(w))
        return f"{game}/{rules}/{variant}/{clock}/{'rated' if rated else 'casual'}"

    async def on_quick_match(self, conn: Connection, msg: m.QuickMatch) -> None:
        s = self._session(conn)
        rules, variant = self._check_game(msg.game, msg.rules, msg.variant)
        try:  # the room a pairing opens (two seats, no options) must be able to start
            self._seating(msg.game, rules, variant, 2, {})
        except SetupError as exc:
            raise ProtocolError(ErrorCode.BAD_SETUP, str(exc)) from None
        if msg.rated and s.player and s.player.get("guest"):
            raise ProtocolError(ErrorCode.FORBIDDEN, "rated games need a claimed name (a token)")
        if self._player_rooms(s) >= self.config.max_rooms_per_player:
            raise ProtocolError(ErrorCode.TOO_MANY_ROOMS, "you are in too many rooms")
        if s.queue is not None:
            await self.presence.queue_cancel(s.queue, s.id)
        key = self._queue_key(msg.game, rules, variant, msg.time_control, msg.rated)
        rating = Rating.from_dict(await self.presence.get_rating(msg.game, s.player["name"]))  # type: ignore[index]
        s.queue = key
        await self.presence.queue_add(
            key,
            s.id,
            rating.rating,
            {
                "since": time.monotonic(),
                "game": msg.game,
                "rules": rules,
                "variant": variant,
                "time_control": to_wire(msg.time_control),
                "rated": msg.rated,
            },
        )
        waiting = len(await self.presence.queue_list(key))
        conn.send(
            m.Queued(
                re=msg.id,
                game=msg.game,
                rules=rules,
                variant=variant,
                time_control=msg.time_control,
                waiting=waiting,
            )
        )
        self._match_now.set()

    async def on_cancel_quick_match(self, conn: Connection, msg: m.CancelQuickMatch) -> None:
        s = self._session(conn)
        if s.queue is not None:
            await self.presence.queue_cancel(s.queue, s.id)
            s.queue = None
        conn.send(m.Ack(re=msg.id))

    async def _matchmaker(self) -> None:
        """Pair queued players: at once when someone queues, and every second (gaps widen)."""
        while True:
            checkpoint()  # (a cancellation lost in redis-py: server.tasks)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await self._match_now.wait()
            self._match_now.clear()
            queues = {s.queue for s in self.sessions.values() if s.queue is not None}
            for key in queues:
                try:
                    await self._pair_queue(key)
                except Exception:
                    log.exception("matchmaking_failed", queue=key)

    async def _pair_queue(self, key: str) -> None:
        while True:
            entries = await self.presence.queue_list(key)
            if len(entries) < 2:
                return
            oldest = min(e["data"]["since"] for e in entries)
            waited = max(0.0, time.monotonic() - oldest)
            gap = self.config.match_gap + self.config.match_widen_per_s * waited
            pair = await self.presence.queue_pop_pair(key, max_gap=gap)
            if pair is None:
                return
            await self._start_matched(pair)

    async def _start_matched(self, pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
        a, b = pair
        sa, sb = self.sessions.get(a["player"]), self.sessions.get(b["player"])
        if self.cluster is not None and (sa is None or sb is None):  # queued on another node
            sa = sa or await self.cluster.remote_session(a["player"], sb)
            sb = sb or await self.cluster.remote_session(b["player"], sa)
        live = [x for x in (sa, sb) if x is not None and x.conn is not None]
        if len(live) < 2:  # someone left meanwhile: put the other back
            for entry, s in ((a, sa), (b, sb)):
                if s is not None and s.conn is not None:
                    await self.presence.queue_add(
                        s.queue or "", s.id, entry["rating"], entry["data"]
                    )
            return
        assert sa is not None and sb is not None
        limit = self.config.max_rooms_per_player
        full = [x for x in (sa, sb) if self._player_rooms(x) >= limit]
        if full:  # joined rooms while queued: out of the queue; the other waits on
            for entry, s in ((a, sa), (b, sb)):
                if s in full:
                    s.queue = None
                    s.conn.send(  # type: ignore[union-attr]
                        m.Error(
                            code=ErrorCode.TOO_MANY_ROOMS,
                            message="you are in too many rooms: you left the quick-match queue",
                        )
                    )
                else:
                    await self.presence.queue_add(
                        s.queue or "", s.id, entry["rating"], entry["data"]
                    )
            return
        try:
            await self._seat_matched(a, sa, sb)
        except Exception as exc:  # both were dequeued: they must hear of it
            code = exc.code if isinstance(exc, ProtocolError) else ErrorCode.INTERNAL
            log.exception("matchmaking_failed", code=str(code))
            for s in (sa, sb):
                s.queue = None
                if s.conn is not None:
                    s.conn.send(
                        m.Error(code=code, message="quick match failed: please queue again")
                    )

    async def _seat_matched(self, a: dict[str, Any], sa: Session, sb: Session) -> None:
        d = a["data"]
        tc = m.RoomSummary.model_validate(
            {
                "room": "x",
                "game": d["game"],
                "rules": d["rules"],
                "variant": d["variant"],
                "seats": [],
                "time_control": d["time_control"],
                "rated": d["rated"],
                "status": "waiting",
            }
        ).time_control
        order = [sa, sb] if secrets.randbelow(2) else [sb, sa]
        room = await self.create_room(
            order[0], d["game"], d["rules"], d["variant"], {}, 2, tc, d["rated"], False, True
        )
        for s in order:
            s.queue = None
            await room.ask(room.join, s.id, s.player, "player", None, False)
            s.rooms.add(room.id)
            await self._save_session(s)
        for seat, s in enumerate(order):
            if s.conn is not None:
                s.conn.send(m.Matched(room=room.id, seat=seat))
        for seat, s in enumerate(order):
            await room.ask(room.take_seat, s.id, s.player, seat)
        for s in order:  # the snapshot after the seats: it has `you` (and the game started)
            await room.ask(room.send_state, s.id, None)

    # records and ratings
    async def on_get_record(self, conn: Connection, msg: m.GetRecord) -> None:
        rec = await self.records.get(msg.record)
        if rec is None:
            raise ProtocolError(ErrorCode.UNKNOWN_RECORD, f"no record {msg.record}")
        conn.send(
            m.Record(
                re=msg.id,
                record=msg.record,
                data=m.GameRecordData.model_validate(rec["data"]),
                rated=rec.get("rated", False),
                ratings=[m.RatingChange.model_validate(c) for c in rec.get("ratings", [])],
                finished_at=rec.get("finished_at"),
                views=await asyncio.to_thread(record_views, rec["data"]) if msg.views else None,
            )
        )

    async def on_get_leaderboard(self, conn: Connection, msg: m.GetLeaderboard) -> None:
        rows = await self.presence.leaderboard(msg.game, limit=msg.offset + msg.limit)
        rows = rows[msg.offset :]
        conn.send(
            m.Leaderboard(
                re=msg.id,
                game=msg.game,
                entries=[
                    m.LeaderboardEntry(
                        rank=msg.offset + i + 1,
                        name=r["player"],
                        rating=round(r["rating"], 2),
                        deviation=round(r.get("rd", 350.0), 2),
                        games=r.get("games", 0),
                        bot=bool(r.get("bot", False)),
                    )
                    for i, r in enumerate(rows)
                ],
            )
        )

    async def on_list_tournaments(self, conn: Connection, msg: m.ListTournaments) -> None:
        conn.send(m.TournamentList(re=msg.id, tournaments=[]))

    async def on_get_standings(self, conn: Connection, msg: Any) -> None:
        raise ProtocolError(ErrorCode.UNKNOWN_TOURNAMENT, "no tournaments are hosted yet")

    on_join_tournament = on_get_standings
    on_leave_tournament = on_get_standings

    # -- leases -----------------------------------------------------------------------
    async def _renew_leases(self) -> None:
        """This node owns its rooms through leases; renew them well before they lapse.

        Every room in one call: renewed one by one, each renewal waiting for a turn
        of a saturated loop, hundreds of rooms took longer than a lease lasts."""
        down = False  # the store is out: said once per outage, not per round
        while True:
            checkpoint()
            await asyncio.sleep(self.config.lease_ttl / 3)
            try:
                await self.renew_leases()
            except PresenceError as exc:
                if not down:
                    log.warning("lease_renew_failed", rooms=len(self.rooms), error=str(exc))
                down = True
            except Exception:  # the next round tries again
                log.exception("lease_renew_failed")
            else:
                if down:
                    log.info("lease_renew_recovered")
                down = False

    async def renew_leases(self) -> None:
        """Renew every room's lease; retire those whose lease went (PresenceError: none)."""
        rooms = dict(self.rooms)
        t0 = time.monotonic()
        lost = await self.presence.renew_rooms(list(rooms), self.node, self.config.lease_ttl)
        took = time.monotonic() - t0
        if took > self.config.lease_ttl / 6:
            log.warning("lease_renew_slow", rooms=len(rooms), seconds=round(took, 3))
        for room_id in lost:
            room = rooms[room_id]
            if room.closed or self.rooms.get(room_id) is not room:
                continue  # closed meanwhile: it released its lease itself
            log.warning("lease_lost", room=room_id)
            if self.cluster is not None:
                self.cluster.retire(room)

    # -- HTTP on the same port ----------------------------------------------------------------
    def process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return _http(200, b"ok\n", "text/plain; charset=utf-8")
        if path == "/metrics":
            self.metrics.rooms.set(len(self.rooms))
            return _http(200, self.metrics.render(), CONTENT_TYPE_LATEST)
        if "upgrade" not in request.headers.get("Connection", "").lower():
            page = self.web.response(path) if self.web is not None else None
            if page is not None:
                return page
            return _http(404, b"not found: try /healthz, /metrics or a WebSocket\n", "text/plain")
        return None


def _http(status: int, body: bytes, content_type: str) -> Response:
    reason = {200: "OK", 404: "Not Found"}.get(status, "")
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
        ]
    )
    return Response(status, reason, headers, body)


@contextlib.asynccontextmanager
async def running(config: Config, presence: Presence | None = None) -> AsyncIterator[Arena]:
    """Run an arena on ``config.host``/``config.port`` (0: a free port) until the block ends."""
    arena = Arena(config, presence)
    await arena.start()
    server = await serve(
        arena.handle,
        config.host,
        config.port,
        process_request=arena.process_request,
        max_size=config.max_frame_bytes,
        ping_interval=config.ping_interval,
        ping_timeout=config.ping_timeout,
        close_timeout=2.0,
        compression=None,
    )
    arena.server = server
    if config.port == 0:
        config.port = server.sockets[0].getsockname()[1]
    try:
        yield arena
    finally:
        server.close(close_connections=False)
        await arena.shutdown()
        server.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                await server.wait_closed()
