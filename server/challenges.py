"""Challenges: one player (or bot) invites another, by name, to a game (issue 16).

The challenger's node looks the name up (its own sessions first, then, with several
nodes, the name's entry in presence, ``online/<name key>``, written at login) and
hands the challenge to the node holding the challenged session, which tells it at
once (``challenged``). That node keeps the challenge; an accept there seats both
players in a new room exactly as quick match does (``matched``, the seats, the
snapshot), the challenger through its own node. A decline, a cancel, or either side
going away ends it (``challenge_ended`` to the other side).

Node-to-node messages go over the cluster's node channels
(:class:`server.node_messages.ChallengeTo`, ``ChallengeOver``); on one node
everything stays local.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.base import SetupError
from protocol import messages as m
from protocol.codec import to_wire
from protocol.errors import ErrorCode, ProtocolError
from server import node_messages as nm
from server.matchmaking import time_control_of
from server.names import name_key

if TYPE_CHECKING:
    from server.connection import Connection
    from server.host import Handler, Host
    from server.sessions import Session

#: challenges one session may have open (sent and not yet answered)
MAX_OPEN = 16
#: presence "queue" listing the sessions logged in under a name, with their node: a
#: directory the matchmaker never pairs (it pairs only the queues sessions joined)
ONLINE = "online/"


@dataclass(slots=True)
class Open:
    """A challenge as the challenged player's node keeps it (and the challenger's, to cancel)."""

    id: str
    src_sid: str
    src_node: str
    src_player: dict[str, Any]
    dst_sid: str
    dst_node: str
    data: dict[str, Any]  # game, rules, variant, time_control (wire), rated


class Challenges:
    """The challenges this node knows: those to its sessions, and those they sent."""

    def __init__(self, arena: Host) -> None:
        self.arena = arena
        self.open: dict[str, Open] = {}

    def handlers(self) -> dict[str, Handler]:
        return {
            "challenge": self._with_player(self.challenge),
            "accept_challenge": self._with_player(self.accept),
            "decline_challenge": self._with_player(self.decline),
            "cancel_challenge": self._with_player(self.cancel),
        }

    def _with_player(self, fn: Any) -> Handler:
        async def handler(conn: Connection, msg: Any) -> None:
            s = self.arena.session_service.of_conn(conn)
            if s.player is None:
                raise ProtocolError(ErrorCode.NOT_AUTHENTICATED, "log in first")
            await fn(conn, s, msg)

        return handler

    @property
    def _shared(self) -> bool:
        """Several nodes share the presence store (a name may be online elsewhere)."""
        return bool(self.arena.presence.shared)

    # -- presence -----------------------------------------------------------------------
    async def online(self, s: Session) -> None:
        """A login: with several nodes, say where the name can be challenged."""
        if self._shared and s.player is not None:
            key = ONLINE + name_key(s.player["name"])
            await self.arena.presence.queues.add(key, s.id, 0.0, {"node": self.arena.node})

    def offline(self, s: Session, moved: bool = False) -> None:
        """The session's name leaves this node (logout, expiry; ``moved``: resumed on
        another node): its challenges here end, and unless it moved the name's
        directory entry goes (a moved session's entry leads to its new node, which
        presence keeps in the session's data)."""
        self.gone(s.id)
        if self._shared and s.player is not None and not moved:
            key = ONLINE + name_key(s.player["name"])
            self.arena.spawn(self.arena.presence.queues.cancel(key, s.id))

    async def _find(self, name: str) -> tuple[str, str] | None:
        """(session, node) of the online player ``name``, or None."""
        arena = self.arena
        sid = arena.online_names.get(name_key(name))
        if sid is not None and sid in arena.sessions:
            return sid, arena.node
        if not self._shared:
            return None
        for entry in await arena.presence.queues.waiting(ONLINE + name_key(name)):
            sid = entry["player"]
            data = await arena.presence.sessions.get(sid) or {}
            player = data.get("player") or {}
            node = data.get("node") or entry["data"].get("node")
            if not node or name_key(player.get("name", "")) != name_key(name):
                continue  # an entry left by a session that ended without a logout
            if (await arena.presence.bus.alive([node])).get(node):
                return sid, node
        return None

    # -- requests -----------------------------------------------------------------------
    async def challenge(self, conn: Connection, s: Session, msg: m.Challenge) -> None:
        arena = self.arena
        assert s.player is not None
        rules, variant = arena.registry.check_game(msg.game, msg.rules, msg.variant)
        try:  # the room an accept opens (two seats, no options) must be able to start
            arena.registry.seating(msg.game, rules, variant, 2, {})
        except SetupError as exc:
            raise ProtocolError(ErrorCode.BAD_SETUP, str(exc)) from None
        _claimed_if_rated(s, msg.rated)
        if name_key(msg.name) == name_key(s.player["name"]):
            raise ProtocolError(ErrorCode.BAD_REQUEST, "you cannot challenge yourself")
        if sum(1 for c in self.open.values() if c.src_sid == s.id) >= MAX_OPEN:
            raise ProtocolError(ErrorCode.RATE_LIMITED, f"at most {MAX_OPEN} open challenges")
        arena.registry.check_game_cap(s)
        found = await self._find(msg.name)
        if found is None:
            raise ProtocolError(ErrorCode.UNKNOWN_PLAYER, f"{msg.name} is not online")
        dst_sid, dst_node = found
        c = Open(
            id=f"c{secrets.token_hex(6)}",
            src_sid=s.id,
            src_node=arena.node,
            src_player=dict(s.player),
            dst_sid=dst_sid,
            dst_node=dst_node,
            data={
                "game": msg.game,
                "rules": rules,
                "variant": variant,
                "time_control": to_wire(msg.time_control),
                "rated": msg.rated,
            },
        )
        self.open[c.id] = c
        conn.send(m.ChallengeSent(re=msg.id, challenge=c.id, name=msg.name))
        if dst_node == arena.node:
            self._deliver(c)
        else:
            arena.cluster.send(dst_node, nm.ChallengeTo(_dump(c)))

    def _deliver(self, c: Open) -> None:
        """On the challenged player's node: keep it, tell the player."""
        self.open[c.id] = c
        s = self.arena.sessions.get(c.dst_sid)
        if s is None or s.conn is None:
            self._end(c, "gone", tell_src=True)
            return
        d = c.data
        s.conn.send(
            m.Challenged(
                challenge=c.id,
                player=m.Player(**c.src_player),
                game=d["game"],
                rules=d["rules"],
                variant=d["variant"],
                time_control=time_control_of(d),
                rated=d["rated"],
            )
        )

    def _mine(self, s: Session, cid: str, side: str) -> Open:
        c = self.open.get(cid)
        if c is None or getattr(c, f"{side}_sid") != s.id:
            raise ProtocolError(ErrorCode.UNKNOWN_CHALLENGE, f"no open challenge {cid}")
        return c

    async def accept(self, conn: Connection, s: Session, msg: m.AcceptChallenge) -> None:
        arena = self.arena
        c = self._mine(s, msg.challenge, "dst")
        _claimed_if_rated(s, c.data["rated"])  # (refused: the challenge stays open)
        arena.registry.check_game_cap(s)
        del self.open[c.id]
        if c.src_node == arena.node:
            src = arena.sessions.get(c.src_sid)
        else:
            src = await arena.cluster.remote_session(c.src_sid)
        if src is None or src.conn is None:
            conn.send(m.ChallengeEnded(challenge=c.id, reason="gone"))
            conn.send(m.Ack(re=msg.id))
            return
        conn.send(m.Ack(re=msg.id))
        self._forget_at_src(c)
        data = {**c.data, "since": time.monotonic()}  # (as a queue entry's, for a put-back)
        entries = [{"player": sid, "data": data, "rating": 0.0} for sid in (c.src_sid, s.id)]
        await arena.matchmaker._seat_matched(*entries, src, s, challenge=c.id)

    async def decline(self, conn: Connection, s: Session, msg: m.DeclineChallenge) -> None:
        c = self._mine(s, msg.challenge, "dst")
        conn.send(m.Ack(re=msg.id))
        self._end(c, "declined", tell_src=True, why=msg.reason)

    async def cancel(self, conn: Connection, s: Session, msg: m.CancelChallenge) -> None:
        c = self._mine(s, msg.challenge, "src")
        conn.send(m.Ack(re=msg.id))
        self._end(c, "canceled", tell_src=False)

    def gone(self, sid: str) -> None:
        """A session ended: its challenges, sent or received, end too."""
        for c in [c for c in self.open.values() if sid in (c.src_sid, c.dst_sid)]:
            self._end(c, "gone", tell_src=c.dst_sid == sid)

    # -- ending -------------------------------------------------------------------------
    def _end(self, c: Open, reason: str, tell_src: bool, why: str | None = None) -> None:
        """End ``c`` here and tell the other side (its node, if elsewhere); ``why``: a
        decline's reason (PROTOCOL.md, Challenges)."""
        self.open.pop(c.id, None)
        sid, node = (c.src_sid, c.src_node) if tell_src else (c.dst_sid, c.dst_node)
        self._tell(sid, node, c.id, reason, why)

    def _forget_at_src(self, c: Open) -> None:
        if c.src_node != self.arena.node:
            self.arena.cluster.send(c.src_node, nm.ChallengeOver(c.id, "", ""))

    def _tell(self, sid: str, node: str, cid: str, reason: str, why: str | None) -> None:
        arena = self.arena
        if node == arena.node:
            s = arena.sessions.get(sid)
            if s is not None and s.conn is not None:
                ended = m.ChallengeEnded(challenge=cid, reason=reason, decline_reason=why)
                s.conn.send(ended)
        elif self._shared:
            arena.cluster.send(node, nm.ChallengeOver(cid, sid, reason, why or ""))

    def remote(self, msg: nm.ChallengeTo | nm.ChallengeOver) -> None:
        """A node message about a challenge (the cluster's inbox hands them over)."""
        if isinstance(msg, nm.ChallengeTo):
            self._deliver(Open(**msg.challenge))
        else:
            self.open.pop(msg.id, None)
            if msg.session:
                self._tell(msg.session, self.arena.node, msg.id, msg.reason, msg.why or None)


def _claimed_if_rated(s: Session, rated: bool) -> None:
    """A rated game needs a claimed name on both sides: ``forbidden`` for a guest."""
    if rated and s.player is not None and s.player.get("guest"):
        raise ProtocolError(ErrorCode.FORBIDDEN, "rated games need a claimed name (a token)")


def _dump(c: Open) -> dict[str, Any]:
    return {
        "id": c.id,
        "src_sid": c.src_sid,
        "src_node": c.src_node,
        "src_player": c.src_player,
        "dst_sid": c.dst_sid,
        "dst_node": c.dst_node,
        "data": c.data,
    }
