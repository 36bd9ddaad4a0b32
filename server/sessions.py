"""Sessions: who is connected here, their rooms, saving them in presence, resuming them.

A session outlives its connection for the grace period; its data (player, rooms)
is saved in presence in batches, one call per loop step."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import structlog

from protocol import messages as m
from protocol.errors import CloseCode, ErrorCode, ProtocolError
from protocol.session import Phase
from server import node_messages as nm
from server import room_calls as rc
from server.connection import Connection
from server.host import Host
from server.names import name_key
from server.presence import PresenceError

log = structlog.get_logger("arena.server")


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
        #: its queue entry's ``since``: a pairing of an older entry leaves a newer one be
        self.queued_at: float | None = None
        #: held while its queue entry changes (queued, cancelled, put back, left): one at
        #: a time, so that a cancel never misses a put-back under way
        self.queue_lock = asyncio.Lock()
        self.expiry: asyncio.TimerHandle | None = None
        #: rooms whose catch-up the resumed connection still waits for (their events wait too)
        self.resuming: set[str] = set()

    def data(self) -> dict[str, Any]:
        return {"player": self.player, "rooms": sorted(self.rooms), "node": self.node}


class SessionService:
    """The sessions of this node: saves, drops, expiry, resume and takeover steps."""

    def __init__(self, arena: Host) -> None:
        self.arena = arena
        #: sessions whose data is to be saved, in one call per loop step (save_soon)
        self._unsaved: dict[str, Session] = {}
        self._saving: asyncio.Future[None] | None = None

    def name_of(self, session: str) -> str | None:
        s = self.arena.sessions.get(session)
        if s is None:
            return self.arena.cluster.name_of(session)
        return None if s is None or s.player is None else s.player["name"]

    def forget_room(self, session: str, room_id: str) -> None:
        s = self.arena.sessions.get(session)
        if s is not None and room_id in s.rooms:
            s.rooms.discard(room_id)
            self.save_soon(s)
        elif s is None:
            self.arena.cluster.forget(session, room_id)

    def drop(self, session: str) -> None:
        """The session was resumed on another node: let it go here without ending it."""
        s = self.arena.sessions.pop(session, None)
        if s is None:
            return
        if s.expiry is not None:
            s.expiry.cancel()
        self.release_name(s, moved=True)
        if s.conn is not None:
            s.conn.send(m.Goodbye(reason="session_replaced"))
            s.conn.close(CloseCode.SESSION_REPLACED, "session resumed on another node")
            s.conn.session = None
        self.arena.metrics.sessions.set(len(self.arena.sessions))

    def release_name(self, s: Session, moved: bool = False) -> None:
        """The session no longer holds its player's name online here: its challenges
        here, sent or received, end (``moved``: it goes on on another node, where the
        name stays reachable)."""
        self.arena.challenges.offline(s, moved)
        if s.player is not None:
            key = name_key(s.player["name"])
            if self.arena.online_names.get(key) == s.id:
                del self.arena.online_names[key]

    async def save(self, s: Session) -> None:
        """Save the session's data (its rooms) in presence; done when it is saved (or
        the save failed: ignored, as a session's rooms are saved again on each change)."""
        saved = self.save_soon(s)
        if saved is not None:
            await asyncio.shield(saved)

    def save_soon(self, s: Session) -> asyncio.Future[None] | None:
        """Save the session's data without waiting (None: its node saves it). The saves
        asked for in one loop step go to presence in one call (``update_sessions``),
        each session's data as it is then: under load, several per call."""
        if s.node and s.node != self.arena.node:  # another node's, matched from here
            self.arena.cluster.send(s.node, nm.Rooms(s.id, sorted(s.rooms), s.queued_at))
            return None
        self._unsaved[s.id] = s
        saving = self._saving
        if saving is None:
            saving = self._saving = asyncio.get_running_loop().create_future()
            # runs at the next step: the batch is taken then
            task = self.arena.spawn(self._save_batch())
            task.add_done_callback(lambda _: self._saved(saving))
        return saving

    async def _save_batch(self) -> None:
        batch, self._unsaved = self._unsaved, {}
        self._saving = None  # saves asked for from now on go in the next batch
        try:
            await self.arena.presence.sessions.update_many({i: s.data() for i, s in batch.items()})
        except PresenceError:
            pass  # (an outage) a session's rooms are saved again on each change
        except Exception:  # a bug: said, not hidden; the waiters go on all the same
            self.arena.log.exception("sessions_not_saved", sessions=len(batch))

    def _saved(self, saving: asyncio.Future[None]) -> None:
        """A batch's save ended, however: its waiters go on. A task cancelled before its
        first step (at exit) took no batch: the next save starts a new one."""
        if self._saving is saving:
            self._saving = None
        if not saving.done():
            saving.set_result(None)

    async def connection_lost(self, conn: Connection) -> None:
        s = self.arena.sessions.get(conn.session or "")
        if s is None or s.conn is not conn:
            return
        s.conn = None
        if s.queue is not None:
            with contextlib.suppress(Exception):
                await self.arena.presence.queues.cancel(s.queue, s.id)
            s.queue = None
        if conn.clean_close and s.player is not None:
            # a clean close is a goodbye: the name is free at once, grace is for drops
            await self.end(s)
            self.arena.metrics.sessions.set(len(self.arena.sessions))
            conn.log.info("connection_lost", session=s.id, clean=True)
            return
        for room_id in list(s.rooms):
            room = self.arena.registry.nowait(room_id)
            if room is not None:
                room.tell(rc.Disconnected(s.id))
        with contextlib.suppress(Exception):
            await self.arena.presence.sessions.touch(s.id, self.arena.config.grace)
        loop = asyncio.get_running_loop()
        s.expiry = loop.call_later(self.arena.config.grace, lambda: self.expire(s))
        conn.log.info("connection_lost", session=s.id)

    async def end(self, s: Session) -> None:
        """The player leaves (``logout``, or a clean close): every room is left (a
        running game forfeited, or aborted before everyone moved) and the name is free."""
        for room_id in list(s.rooms):
            room = await self.arena.registry.find_or_none(room_id)
            if room is not None:
                with contextlib.suppress(ProtocolError):
                    await room.request(rc.Leave(s.id))
        self.release_name(s)
        self.arena.sessions.pop(s.id, None)
        await self.arena.presence.sessions.end(s.id)

    def expire(self, s: Session) -> None:
        """The grace period ran out: the session is gone, and so are its seats."""
        if s.conn is not None:
            return
        self.arena.sessions.pop(s.id, None)
        self.arena.metrics.sessions.set(len(self.arena.sessions))
        self.release_name(s)
        for room_id in list(s.rooms):
            room = self.arena.registry.nowait(room_id)
            if room is not None:
                room.tell(rc.SessionGone(s.id))
        self.arena.spawn(self.arena.presence.sessions.end(s.id))
        log.info("session_expired", session=s.id)

    def of_conn(self, conn: Connection) -> Session:
        s = self.arena.sessions.get(conn.session or "")
        if s is None:
            raise ProtocolError(ErrorCode.NOT_AUTHENTICATED, "no session")
        return s

    async def keep(self, s: Session) -> None:
        """Keep a session that is resumed or taken over for a day in presence; unknown if
        its grace period ended meanwhile."""
        await self.arena.presence.sessions.touch(s.id, 86400)
        if self.arena.sessions.get(s.id) is not s:
            raise ProtocolError(ErrorCode.UNKNOWN_SESSION, "no such session (or it expired)")

    async def end_fresh(self, fresh: Session, old: Session) -> None:
        """The connection's own session ends as it takes over ``old``."""
        if fresh is old:
            return
        self.arena.sessions.pop(fresh.id, None)
        self.arena.spawn(self.arena.presence.sessions.end(fresh.id))
        for room_id in sorted(fresh.rooms):  # rooms it watched: no ghost spectator left
            room = self.arena.registry.nowait(room_id)
            if room is not None:
                with contextlib.suppress(ProtocolError, PresenceError):
                    await room.request(rc.Leave(fresh.id))

    def attach(self, conn: Connection, old: Session, seen: dict[str, int]) -> None:
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
        self.arena.cluster.resumed(old.id, seen)  # what this connection has seen
        conn.session = old.id
        conn.log = conn.log.bind(session=old.id)
        self.arena.metrics.sessions.set(len(self.arena.sessions))

    async def resume_rooms(
        self, conn: Connection, old: Session, reply: Any, cursors: dict[str, int]
    ) -> None:
        """Send ``reply`` (``resumed``, or ``logged_in`` for a session a login took over),
        then each room's catch-up (its live events wait behind it). A room gone while the
        session was away, or closed while it is looked up, is left out of the reply's
        ``rooms`` (PROTOCOL.md: a client waits for the catch-up of each room listed)."""
        assert old.player is not None  # (logged-in sessions only are resumed or taken over)
        conn.phase = Phase.AUTHENTICATED
        found: dict[str, Any] = {}  # room id -> its room (None: its node is gone)
        for room_id in sorted(old.rooms):
            try:
                found[room_id] = await self.arena.registry.find_or_none(room_id)
            except PresenceError as exc:
                _unavailable(conn, room_id, exc)
                found[room_id] = None
                continue
            if found[room_id] is None:
                conn.log.info("resume_room_gone", room=room_id)
                del found[room_id]
                old.resuming.discard(room_id)
                self.forget_room(old.id, room_id)
        listed = [room_id for room_id in found if room_id in old.rooms]  # (none closed since)
        conn.send(reply.model_copy(update={"rooms": listed}))
        for room_id in listed:
            try:
                if (room := found[room_id]) is not None:
                    await room.request(rc.ResumeMember(old.id, cursors.get(room_id)))
            except PresenceError as exc:
                _unavailable(conn, room_id, exc)
            except ProtocolError as exc:  # it closed meanwhile: resumed was the one reply
                conn.log.info("resume_room_closed", room=room_id, error=str(exc))
            finally:
                old.resuming.discard(room_id)
        old.resuming.difference_update(found)  # (those closed during the look-ups)

    def adopt(self, sid: str, data: dict[str, Any], token: str) -> Session:
        """A session whose node is gone (or elsewhere) resumes here; its old node drops it."""
        s = Session(sid, token, self.arena.node)
        s.player = data.get("player")
        s.rooms = set(data.get("rooms") or [])
        self.arena.sessions[sid] = s
        if s.player is not None:
            self.arena.online_names[name_key(s.player["name"])] = sid
        previous = data.get("node")
        if previous and previous != self.arena.node:
            self.arena.cluster.send(previous, nm.Drop(sid))
        self.arena.spawn(self.save(s))
        self.arena.metrics.sessions.set(len(self.arena.sessions))
        return s


def _unavailable(conn: Connection, room_id: str, exc: PresenceError) -> None:
    """A room whose node is gone: the takeover will catch the session up."""
    conn.log.warning("resume_room_unavailable", room=room_id, error=str(exc))
