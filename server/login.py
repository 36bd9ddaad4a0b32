"""The session messages: hello, login (with a takeover of the player's dropped session),
resume, logout, ping."""

from __future__ import annotations

import secrets
from typing import Any

from protocol import messages as m
from protocol.errors import CloseCode, ErrorCode, ProtocolError
from protocol.session import Phase
from protocol.versions import PROTOCOL_VERSIONS, choose_version
from server.connection import Connection
from server.host import Handler, Host
from server.names import name_key, normalize
from server.sessions import Session

SOFTWARE = "collapsi-arena/0.1"
#: additive protocol extensions this server supports (welcome.features, PROTOCOL.md)
FEATURES = ("move_reply", "list_records")


class Login:
    """Handlers of the session messages."""

    def __init__(self, arena: Host) -> None:
        self.arena = arena

    def handlers(self) -> dict[str, Handler]:
        return {
            "hello": self.on_hello,
            "login": self.on_login,
            "resume": self.on_resume,
            "logout": self.on_logout,
            "ping": self.on_ping,
        }

    async def on_hello(self, conn: Connection, msg: m.Hello) -> None:
        version = choose_version(msg.versions, PROTOCOL_VERSIONS)
        sid, token = f"s{secrets.token_hex(8)}", secrets.token_urlsafe(24)
        s = Session(sid, token, self.arena.node)
        await self.arena.presence.sessions.create(sid, token, s.data(), ttl=86400)
        self.arena.sessions[sid] = s
        s.conn = conn
        conn.session = sid
        conn.log = conn.log.bind(session=sid)
        cfg = self.arena.config
        conn.send(
            m.Welcome(
                re=msg.id,
                version=version,
                server=m.ServerInfo(name="collapsi-arena", software=SOFTWARE, node=self.arena.node),
                session=sid,
                resume_token=token,
                limits=m.Limits(
                    max_frame_bytes=cfg.max_frame_bytes,
                    rate=m.Rate(burst=cfg.rate_burst, per_second=cfg.rate_per_second),
                    max_rooms_per_player=cfg.max_rooms_per_player,
                    resume_grace_ms=int(cfg.grace * 1000),
                    ping_interval_ms=int((cfg.ping_interval or 0) * 1000),
                ),
                games=self.arena.games,
                features=list(FEATURES),
            )
        )
        conn.phase = Phase.ANONYMOUS
        conn.log.info("hello", software=msg.software, binary=conn.binary)

    async def on_login(self, conn: Connection, msg: m.Login) -> None:
        s = self.arena.session_service.of_conn(conn)
        name = normalize(msg.name)  # bad_request for a name the server refuses
        key = name_key(name)
        # one answer whether the name is claimed, online, or the token is wrong: the
        # server does not say whether a name exists (PROTOCOL.md)
        taken = ProtocolError(ErrorCode.NAME_TAKEN, f"{name} is not available")
        if msg.token is not None:
            await self.arena.logins.check(conn, key, msg.token)  # weak token, throttled
            if not await self.arena.presence.names.claim(name, msg.token):
                self.arena.logins.failed(conn, key)
                raise taken
        elif await self.arena.presence.names.claimed(name):
            raise taken
        holder = self.arena.online_names.get(key)
        held = None if holder is None or holder == s.id else self.arena.sessions.get(holder)
        if held is not None:
            if msg.token is not None and self._dropped_player(held):
                # the player's own session, dropped (a client restarted without its resume
                # token): proven by the name's token, this login takes it over as a resume
                await self._take_over(conn, s, held, msg)
                return
            raise taken
        self.arena.online_names[key] = s.id
        s.player = {"name": name, "guest": msg.token is None, "bot": msg.bot}
        await self.arena.presence.sessions.update(s.id, s.data())
        await self.arena.challenges.online(s)
        self.arena.metrics.sessions.set(len(self.arena.sessions))
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
        sessions = self.arena.session_service
        await sessions.keep(held)  # before any change: a failure here changes nothing
        if not held.token:  # restored after a restart (server.restore): a new resume token
            held.token = secrets.token_urlsafe(24)
            await self.arena.presence.sessions.create(held.id, held.token, held.data(), 86400)
        sessions.attach(conn, held, {})  # at once: a resume coming later replaces this one
        await sessions.end_fresh(fresh, held)
        reply = m.LoggedIn(
            re=msg.id,
            player=m.Player(**held.player),  # type: ignore[arg-type]
            session=held.id,
            resume_token=held.token,
            rooms=sorted(held.rooms),
        )
        try:
            await self.arena.session_service.resume_rooms(conn, held, reply, {})
        finally:
            if held.conn is conn:
                held.resuming.clear()
        conn.log.info("login_took_over", rooms=sorted(held.rooms))

    async def on_resume(self, conn: Connection, msg: m.Resume) -> None:
        found = await self.arena.presence.sessions.resume(msg.token)
        if found is not None and (found[0] == conn.session or not found[1].get("player")):
            # this connection's own session, or one that never logged in: nothing to resume
            # (PROTOCOL.md: a welcome's token becomes valid once its connection logged in)
            found = None
        old = None if found is None else self.arena.sessions.get(found[0])
        if old is None and found is not None and self.arena.cluster.adopts_sessions():
            old = self.arena.session_service.adopt(found[0], found[1], msg.token)
        if old is None or old.player is None:
            raise ProtocolError(ErrorCode.UNKNOWN_SESSION, "no such session (or it expired)")
        # before any change: a failure here changes nothing
        await self.arena.session_service.keep(old)
        if not old.token:  # restored after a restart (server.restore): the token proved it
            old.token = msg.token
        fresh = self.arena.sessions.get(conn.session or "")
        cursors = {c.room: c.seq for c in msg.rooms}
        # at once (its expiry cancelled), as a takeover
        self.arena.session_service.attach(conn, old, cursors)
        if fresh is not None:
            await self.arena.session_service.end_fresh(fresh, old)
        reply = m.Resumed(
            re=msg.id,
            player=m.Player(**old.player),
            session=old.id,
            resume_token=old.token,
            rooms=sorted(old.rooms),
        )
        try:
            await self.arena.session_service.resume_rooms(conn, old, reply, cursors)
        finally:
            if old.conn is conn:
                old.resuming.clear()
        conn.log.info("resumed", rooms=sorted(old.rooms))

    async def on_logout(self, conn: Connection, msg: m.Logout) -> None:
        s = self.arena.session_service.of_conn(conn)
        await self.arena.session_service.end(s)
        conn.session = None
        conn.send(m.Ack(re=msg.id))
        conn.send(m.Goodbye(reason="logout"))
        conn.close(CloseCode.NORMAL, "logout")

    async def on_ping(self, conn: Connection, msg: m.Ping) -> None:
        conn.send(m.Pong(re=msg.id))
