"""Quick match: queues in presence keyed by game, rules, clock and rating mode; pairs of
close ratings (the gap widens as they wait) get a room of two that starts when seated."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from typing import Any

import structlog

from engine.base import SetupError
from protocol import messages as m
from protocol.codec import to_wire
from protocol.errors import ErrorCode, ProtocolError
from server import node_messages as nm
from server.connection import Connection
from server.host import Handler, Host
from server.quick_seating import PairGone, left_queue, put_back, seat_pair, unseat
from server.ratings import Rating
from server.sessions import Session
from server.tasks import checkpoint

log = structlog.get_logger("arena.server")

#: the longest a ``cancel_quick_match`` waits for its session's pairing to be settled
PAIRING_WAIT_S = 5.0  # (below a client's 10 s for a reply)


class Matchmaker:
    """Quick-match requests and the pairing loop."""

    def __init__(self, arena: Host) -> None:
        self.arena = arena
        self._match_now = asyncio.Event()
        #: the queues whose pair is being taken off and seated (or put back), with the
        #: event set when that is settled: a cancel that found its entry gone waits for it
        self._pairing: dict[str, asyncio.Event] = {}

    def handlers(self) -> dict[str, Handler]:
        return {
            "quick_match": self.on_quick_match,
            "cancel_quick_match": self.on_cancel_quick_match,
        }

    @staticmethod
    def _queue_key(game: str, rules: str, variant: str, tc: Any, rated: bool) -> str:
        w = to_wire(tc)
        clock = ",".join(f"{k}={w[k]}" for k in sorted(w))
        return f"{game}/{rules}/{variant}/{clock}/{'rated' if rated else 'casual'}"

    async def on_quick_match(self, conn: Connection, msg: m.QuickMatch) -> None:
        s = self.arena.session_service.of_conn(conn)
        rules, variant = self.arena.registry.check_game(msg.game, msg.rules, msg.variant)
        try:  # the room a pairing opens (two seats, no options) must be able to start
            self.arena.registry.seating(msg.game, rules, variant, 2, {})
        except SetupError as exc:
            raise ProtocolError(ErrorCode.BAD_SETUP, str(exc)) from None
        if msg.rated and s.player and s.player.get("guest"):
            raise ProtocolError(ErrorCode.FORBIDDEN, "rated games need a claimed name (a token)")
        self.arena.registry.check_game_cap(s)
        key = self._queue_key(msg.game, rules, variant, msg.time_control, msg.rated)
        if not msg.bots and not s.player.get("bot"):  # type: ignore[union-attr]
            key += "/humans"  # the bot pool is the plain queue; this one has no bots
        rating = Rating.from_dict(await self.arena.presence.ratings.get(msg.game, s.player["name"]))  # type: ignore[index]
        async with s.queue_lock:
            if s.queue is not None:
                await self.arena.presence.queues.cancel(s.queue, s.id)
            s.queue, s.queued_at = key, time.monotonic()
            await self.arena.presence.queues.add(
                key,
                s.id,
                rating.rating,
                {
                    "since": s.queued_at,
                    "game": msg.game,
                    "rules": rules,
                    "variant": variant,
                    "time_control": to_wire(msg.time_control),
                    "rated": msg.rated,
                },
            )
        waiting = len(await self.arena.presence.queues.waiting(key))
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
        """Out of the queue. A pair already taken off it is not undone: its ``matched``
        is sent before this ``ack`` (a client that has the ack and no ``matched`` is in no
        game from the queue: PROTOCOL.md, Quick match). Not put back if its opponent
        left."""
        s = self.arena.session_service.of_conn(conn)
        async with s.queue_lock:  # (not across the wait below: a put-back takes it)
            key, s.queue = s.queue, None
            # not in the queue any more: the queue's pairing under way may have taken it
            # (on Redis, before this node's matchmaker has its pair back from pop_pair)
            gone = key is not None and not await self.arena.presence.queues.cancel(key, s.id)
        if gone and (pairing := self._pairing.get(key)) is not None:  # type: ignore[arg-type]
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(PAIRING_WAIT_S):
                    await pairing.wait()
        conn.send(m.Ack(re=msg.id))

    async def run(self) -> None:
        """Pair queued players: at once when someone queues, and every second (gaps widen)."""
        while True:
            checkpoint()  # (a cancellation lost in redis-py: server.tasks)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await self._match_now.wait()
            self._match_now.clear()
            queues = {s.queue for s in self.arena.sessions.values() if s.queue is not None}
            for key in queues:
                try:
                    await self._pair_queue(key)
                except Exception:
                    log.exception("matchmaking_failed", queue=key)

    async def _pair_queue(self, key: str) -> None:
        while True:
            entries = await self.arena.presence.queues.waiting(key)
            if len(entries) < 2:
                return
            oldest = min(e["data"]["since"] for e in entries)
            waited = max(0.0, time.monotonic() - oldest)
            gap = self.arena.config.match_gap + self.arena.config.match_widen_per_s * waited
            settled = self._pairing[key] = asyncio.Event()  # (one pair at a time per queue)
            try:
                pair = await self.arena.presence.queues.pop_pair(key, max_gap=gap)
                if pair is None:
                    return
                await self._start_matched(pair, key)
            finally:
                settled.set()
                if self._pairing.get(key) is settled:
                    del self._pairing[key]

    async def _start_matched(self, pair: tuple[dict[str, Any], dict[str, Any]], key: str) -> None:
        a, b = pair
        sa, sb = await self._session_of(a), await self._session_of(b)
        live = [x for x in (sa, sb) if x is not None and x.conn is not None]
        if len(live) < 2:  # someone left meanwhile: put the other back
            pairs = [(e, s) for e, s in ((a, sa), (b, sb)) if s is not None]
            await put_back(self.arena, pairs, key)
            return
        assert sa is not None and sb is not None
        full = [x for x in (sa, sb) if self.arena.registry.at_limit(x)]
        if full:  # joined rooms while queued: out of the queue; the other waits on
            for entry, s in ((a, sa), (b, sb)):
                if s in full:
                    await self._out_of_queue(s, entry["data"]["since"])
                    s.conn.send(  # type: ignore[union-attr]
                        m.Error(
                            code=ErrorCode.TOO_MANY_ROOMS,
                            message="you are in too many rooms: you left the quick-match queue",
                        )
                    )
                else:
                    await put_back(self.arena, [(entry, s)], key)
            return
        try:
            await self._seat_matched(a, b, sa, sb, key=key)
        except Exception as exc:  # both were dequeued: they must hear of it
            code = exc.code if isinstance(exc, ProtocolError) else ErrorCode.INTERNAL
            log.exception("matchmaking_failed", code=str(code))
            for entry, s in ((a, sa), (b, sb)):
                await self._out_of_queue(s, entry["data"]["since"])
                if s.conn is not None:
                    s.conn.send(
                        m.Error(code=code, message="quick match failed: please queue again")
                    )

    async def _out_of_queue(self, s: Session, since: float | None) -> None:
        """``s`` leaves its queue: if its entry is still the one of ``since``, or (None: a
        challenge's game) whatever it is. Another node's player by its node: told now
        for a challenge, before the room's first event, which the bus brings after it;
        an entry's seating tells it as the session is saved, where nothing else does."""
        if s.node in ("", self.arena.node):
            await left_queue(self.arena, s, since)
        elif since is None:
            self.arena.cluster.send(s.node, nm.LeaveQueue(s.id))

    async def _session_of(self, entry: dict[str, Any]) -> Session | None:
        """A queue entry's session: this node's, or a stand-in for another node's (queued
        there with this entry); None if it is gone."""
        s = self.arena.sessions.get(entry["player"])
        if s is None and (s := await self.arena.cluster.remote_session(entry["player"])):
            s.queued_at = entry["data"]["since"]
        return s

    async def _seat_matched(
        self,
        a: dict[str, Any],
        b: dict[str, Any],
        sa: Session,
        sb: Session,
        challenge: str | None = None,
        key: str | None = None,
    ) -> None:
        """Seat a pair, taken off the quick-match queue ``key`` or from an accepted
        ``challenge``."""
        d = a["data"]
        tc = time_control_of(d)
        order = [sa, sb] if secrets.randbelow(2) else [sb, sa]
        room = await self.arena.registry.create_room(
            order[0], d["game"], d["rules"], d["variant"], {}, 2, tc, d["rated"], False, True
        )
        for s in order:  # first: a logout from now on leaves this room (server.quick_seating)
            s.rooms.add(room.id)
        if challenge is not None:  # one game: out of their quick-match queues
            for s in order:
                await self._out_of_queue(s, None)
        try:
            await room.ask(seat_pair, self.arena, room, order, challenge)
        except (PairGone, ProtocolError) as exc:  # a player left meanwhile: expected
            self.arena.log.info("quick_match_abandoned", room=room.id, reason=str(exc))
            for s in order:
                s.rooms.discard(room.id)
            with contextlib.suppress(ProtocolError):
                await room.ask(unseat, room)
            await put_back(self.arena, [(a, sa), (b, sb)], key)
            return
        since = {e["player"]: e["data"]["since"] for e in (a, b)}
        for s in order:
            if key is not None:  # (a challenge's players left their queues before)
                await self._out_of_queue(s, since[s.id])
            await self.arena.session_service.save(s)


def time_control_of(d: dict[str, Any]) -> Any:
    """The protocol model of a queue entry's (or challenge's) wire time control,
    validated as a lobby summary's."""
    summary = {
        "room": "x",
        "game": d["game"],
        "rules": d["rules"],
        "variant": d["variant"],
        "seats": [],
        "time_control": d["time_control"],
        "rated": d["rated"],
        "status": "waiting",
    }
    return m.RoomSummary.model_validate(summary).time_control
