"""The arena server: one node's composition root, and :func:`running` to serve it.

:class:`Arena` builds the node's parts and holds what they share: its rooms, the
sessions connected to it, the presence store. Each concern is its own module:
:mod:`server.sessions` and :mod:`server.login` (sessions), :mod:`server.lobby`,
:mod:`server.matchmaking`, :mod:`server.registry` (rooms: create, find, leases),
:mod:`server.room_requests`, :mod:`server.standings`, :mod:`server.http`;
messages reach them through one table from message type to handler.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import secrets
import socket
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import structlog
from websockets.asyncio.server import Server, ServerConnection, serve

from engine.base import SetupError, game_class, game_names, new_game
from protocol import messages as m
from protocol.errors import CloseCode, ErrorCode, ProtocolError
from protocol.outgoing import Outgoing
from server import http
from server.address_budget import AddressBudget
from server.catch_up import CatchUpStream
from server.challenges import Challenges
from server.cluster import Cluster
from server.config import Config
from server.connection import Connection
from server.deal_pool import DealPool
from server.host import Handler
from server.keepalive import Keepalive
from server.lobby import Lobby
from server.login import Login
from server.login_throttle import LoginGuard
from server.matchmaking import Matchmaker
from server.metrics import Metrics
from server.presence import Presence, open_presence
from server.record_list import RecordListing
from server.records import RecordStore
from server.registry import RoomRegistry
from server.room import Room
from server.room_requests import RoomRequests
from server.router import LocalRouter
from server.sessions import Session, SessionService
from server.standings import Standings
from server.tasks import stop
from server.tournaments.director import Director
from server.tournaments.handlers import Tournaments
from server.tournaments.store import open_store
from server.web import WebPage
from server.write_batches import WriteBatches

__all__ = ["Arena", "Config", "Session", "running"]

log = structlog.get_logger("arena.server")


class Arena:
    def __init__(self, config: Config, presence: Presence | None = None) -> None:
        self.config = config
        self.node = config.node or f"node-{secrets.token_hex(3)}"
        self.presence = presence or open_presence(config.presence_url, config.prefix)
        # a store on disk keeps records itself; the memory store writes them as files
        durable = getattr(self.presence, "durable_records", False)
        self.records = RecordStore(self.presence, None if durable else config.data_dir)
        self.metrics = Metrics()
        self.logins = LoginGuard(config)
        self.web = None if config.web_dir is None else WebPage(config.web_dir)
        self.addresses = AddressBudget(
            config.max_conns_per_address,
            config.handshake_burst,
            config.handshake_per_second,
            config.anon_rate_burst,
            config.anon_rate_per_second,
            config.address_limits_exempt,
        )
        self.rooms: dict[str, Room] = {}
        self.invites: dict[str, str] = {}
        self.sessions: dict[str, Session] = {}
        self.online_names: dict[str, str] = {}  # name key -> session id
        self.connections: set[Connection] = set()
        #: connections subscribed to lobby events (the fan-out visits only these)
        self.lobby_conns: set[Connection] = set()
        #: frames of one loop step, one write per connection at the next (server.connection)
        self.write_batches = WriteBatches(self.presence.barrier, self.presence.poll_commits)
        self.presence.add_commit_listener(self.write_batches.release)
        self.deals = DealPool()
        #: WebSocket pings for every connection from one task (server.keepalive)
        self.keepalive = (
            Keepalive(config.ping_interval, config.ping_timeout) if config.ping_interval else None
        )
        self._tasks: list[asyncio.Task[Any]] = []
        #: the games hosted, as welcome lists them
        self.games = _game_infos()
        self.server: Server | None = None
        self._background: set[asyncio.Task[Any]] = set()
        #: set when shutdown begins: rooms given up are not taken back (server.cluster)
        self.stopping = False
        self.log = log.bind(node=self.node)
        self.metrics.attach(self)
        #: several nodes share the presence store: rooms reachable from any node (server.cluster)
        self.cluster: Cluster | LocalRouter = (
            Cluster(self) if self.presence.shared else LocalRouter()
        )
        self.session_service = SessionService(self)
        self.registry = RoomRegistry(self)
        self.lobby = Lobby(self)
        self.matchmaker = Matchmaker(self)
        self.challenges = Challenges(self)
        #: message type -> its handler
        self.handlers: dict[str, Handler] = {}
        #: hosted tournaments (server.tournaments)
        self.tournament_store = open_store(self.presence)
        self.director = Director(self, self.tournament_store)
        self.tournaments = Tournaments(self, self.tournament_store, self.director)
        for part in (
            Login(self),
            self.lobby,
            RoomRequests(self),
            self.matchmaker,
            self.challenges,
            Standings(self),
            RecordListing(self),
            self.tournaments,
        ):
            self.handlers.update(part.handlers())

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> None:
        await self.presence.start()
        await self.cluster.start()
        await self.tournament_store.start()
        loaded = await self.records.load()
        if hasattr(self.presence, "live_sessions"):  # a store that outlives the process
            from server.restore import restore_previous_run

            await restore_previous_run(self)
        for name, coro in (
            ("loop-lag", self.metrics.watch_loop_lag()),
            ("lobby-fanout", self.lobby.run()),
            ("matchmaker", self.matchmaker.run()),
            ("renew-leases", self.registry.run_leases()),
            ("tournaments", self.director.run()),
            ("tournament-pushes", self.tournaments.run_pushes()),
        ):
            self._tasks.append(asyncio.create_task(coro, name=name))
        if self.keepalive is not None:
            self._tasks.append(asyncio.create_task(self.keepalive.run(), name="keepalive"))
        self.log.info("arena_started", records=loaded)

    async def shutdown(self) -> None:
        """Tell every client, stop the rooms, finish the writes in flight."""
        self.stopping = True
        self.log.info("arena_stopping", connections=len(self.connections))
        conns = list(self.connections)
        for conn in conns:
            conn.send(
                m.Goodbye(
                    reason="shutdown", message="server shutting down", reconnect_after_ms=1000
                )
            )
            conn.close(CloseCode.GOING_AWAY, "server shutting down")
        stopped = await self._stop_rooms(set())
        await self.records.flush()
        await self._closed(conns)
        await self._stop_rooms(stopped)  # (any seated meanwhile: the matchmaker still ran)
        if self._background:
            await asyncio.wait(list(self._background), timeout=5)
        await stop(self._tasks)  # cancelled again if they go on (server.tasks)
        await self.deals.close()
        await self.cluster.stop()
        await self.tournament_store.close()
        await self.presence.close()
        self.log.info("arena_stopped")

    async def _stop_rooms(self, stopped: set[str]) -> set[str]:
        """Stop the rooms but those in ``stopped`` and release their leases (another node
        may take them over at once); every room stopped so far."""
        for room in list(self.rooms.values()):
            if room.id in stopped:
                continue
            stopped.add(room.id)
            await room.stop()
            with contextlib.suppress(Exception):
                await self.presence.leases.release(room.id, self.node)
        return stopped

    @staticmethod
    async def _closed(conns: list[Connection]) -> None:
        """Wait (5 s at most) until the connections' handlers have ended: a connection's
        loss writes its session's grace, which must reach the store before it closes."""
        waits = [asyncio.ensure_future(c.done.wait()) for c in conns]
        if waits:
            _, late = await asyncio.wait(waits, timeout=5)
            for w in late:
                w.cancel()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
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
                self.cluster.note(session, out)
        else:
            self.cluster.deliver(session, out)

    def stream_catch_up(self, session: str, stream: CatchUpStream) -> bool:
        """Serve ``stream`` by the session's connection here (server.catch_up); False if
        it has none here (a session of another node: that node serves it, cluster_catch_up)."""
        s = self.sessions.get(session)
        if s is None or s.conn is None or s.conn.closing:
            return False
        stream.note = functools.partial(self.cluster.note, session)
        s.conn.send_catch_up(stream)
        s.resuming.discard(stream.room)  # its live events from now on queue behind it
        return True

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
        return self.session_service.name_of(session)

    def forget_room(self, session: str, room_id: str) -> None:
        self.session_service.forget_room(session, room_id)

    async def room_closed(self, room: Room) -> None:
        await self.registry.room_closed(room)

    # -- connections ------------------------------------------------------------------------
    async def handle(self, ws: ServerConnection) -> None:
        if self.config.sndbuf:
            sock = ws.transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.config.sndbuf)
        conn = Connection(self, ws)
        self.addresses.opened(conn.address)
        self.connections.add(conn)
        if self.keepalive is not None:
            self.keepalive.add(conn)
        self.metrics.connections.inc()
        self.metrics.connections_total.inc()
        try:
            await conn.run()
        finally:
            self.addresses.closed(conn.address)
            self.connections.discard(conn)
            if self.keepalive is not None:
                self.keepalive.discard(conn)
            self.lobby_conns.discard(conn)
            self.metrics.connections.dec()
            try:
                await self.session_service.connection_lost(conn)
            finally:
                conn.done.set()

    async def dispatch(self, conn: Connection, msg: Any) -> None:
        handler = self.handlers.get(msg.type)
        if handler is None:
            raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"{msg.type} is not served here")
        await handler(conn, msg)

    def process_request(self, conn: ServerConnection, request: Any) -> Any:
        return http.answer(self, conn, request)


def _game_infos() -> list[m.GameInfo]:
    infos = []
    for name in game_names():
        cls = game_class(name)
        sizes = []
        for n in range(1, 9):
            try:
                new_game(name, players=n, variant=_variant_for(cls, n))
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


def _variant_for(cls: Any, players: int) -> str | None:
    if players > 2 and "big-board" in cls.variants:
        return "big-board"
    if players == 1 and "solo" in cls.variants:
        return "solo"
    return None


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
        ping_interval=None,  # one task pings every connection: arena.keepalive
        ping_timeout=None,
        close_timeout=2.0,
        compression=None,
    )
    arena.server = server
    if config.port == 0:
        config.port = server.sockets[0].getsockname()[1]
    metrics_server = None
    if config.metrics_port is not None:
        metrics_server = await http.serve_metrics(arena, config.metrics_host, config.metrics_port)
        config.metrics_port = metrics_server.sockets[0].getsockname()[1]
    try:
        yield arena
    finally:
        if metrics_server is not None:
            metrics_server.close()
        server.close(close_connections=False)
        await arena.shutdown()
        server.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                await server.wait_closed()
