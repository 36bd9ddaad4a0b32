"""Directing tournaments: on each node, a loop looks at every unfinished tournament
whose lease it holds (one node at a time directs a tournament; another takes over
when that node dies): starts it, scores finished games from their records, plans
the next pairings (server.tournaments.rules) and opens a room for each pairing
whose players are both connected and free.

Results come from the records: a room saves its game's record before it says
``game_over`` (server.room), on whichever node ends the game, so a result is never
lost with a node, and a director that restarts reads what it missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from typing import Any

import structlog

from protocol.errors import ProtocolError
from server.host import Host
from server.names import name_key
from server.presence import PresenceError
from server.sessions import Session
from server.tasks import checkpoint
from server.tournaments import rules
from server.tournaments.seating import open_pairing
from server.tournaments.store import Doc, TournamentStore

log = structlog.get_logger("arena.tournaments")


def now_ms() -> int:
    return int(time.time() * 1000)


class Director:
    """The tournaments this node directs."""

    def __init__(self, arena: Host, store: TournamentStore) -> None:
        self.arena = arena
        self.store = store
        self.wake = asyncio.Event()
        #: tournaments known to be finished (never looked at again)
        self._finished: set[str] = set()
        #: told when a tournament's document changed here (subscribers' pushes)
        self.changed: asyncio.Event = asyncio.Event()
        self._seen: dict[str, int] = {}
        #: pairings whose room was refused (logged once)
        self._refused: set[tuple[str, tuple[str, ...]]] = set()

    async def run(self) -> None:
        down = False
        while True:
            checkpoint()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.arena.config.tournament_tick):
                    await self.wake.wait()
            self.wake.clear()
            try:
                await self.step_all()
            except PresenceError as exc:
                if not down:
                    log.warning("tournament_store_down", error=str(exc))
                down = True
            except Exception:
                log.exception("tournament_step_failed")
            else:
                down = False

    async def step_all(self) -> None:
        if self.arena.stopping:
            return
        ttl = self.arena.config.lease_ttl
        for tid in await self.store.ids():
            if tid in self._finished:
                continue
            if not await self.store.hold(tid, self.arena.node, ttl):
                continue
            doc = await self.step(tid)
            if doc is not None and doc["status"] == "finished":
                self._finished.add(tid)

    async def step(self, tid: str) -> Doc | None:
        """One look at a tournament: everything that can move on, moves on."""
        doc = await self.store.get(tid)
        if doc is None:
            return None
        if doc["status"] == "open":
            starts = doc["settings"].get("starts_at")
            due = doc.get("start") or (starts is not None and starts <= now_ms())
            if doc.get("cancel") or due:
                doc = await self._update(tid, self._start)
        if doc is None or doc["status"] != "running":
            return doc
        for g in [g for g in doc["games"] if g["status"] == "playing"]:
            outcome = await self._outcome(g["room"])
            if outcome is not None:
                record_id, result = outcome
                doc = await self._update(
                    tid, lambda d, g=g, r=record_id, res=result: rules.score(d, g["room"], r, res)
                )
        present = await self._present(doc)

        def plan(d: Doc) -> None:
            d["present"] = sorted(present)
            rules.advance(d, now_ms())

        doc = await self._update(tid, plan)
        if doc is None:
            return None
        for pending in list(doc["pending"]):
            if not all(n in present for n in pending["players"]):
                continue  # not paired until back (PROTOCOL.md, Tournaments)
            doc = await self._pair(tid, pending, present)
            if doc is None:
                return None
        return doc

    async def _pair(
        self, tid: str, pending: dict[str, Any], present: dict[str, Session]
    ) -> Doc | None:
        """Claim the pairing, open its room, record it as a game (see rules.claim)."""
        token = f"{self.arena.node}:{secrets.token_hex(4)}"
        ttl = int(max(5.0, 3 * self.arena.config.lease_ttl) * 1000)
        doc = await self._update(tid, lambda d: rules.claim(d, pending, token, now_ms(), ttl))
        mine = None if doc is None else rules.claimed(doc, token)
        if doc is None or mine is None:
            return doc  # another director has it
        room = await self._open(doc, mine, present)
        if room is None:
            return await self._update(tid, lambda d: rules.unclaim(d, token))
        doc = await self._update(tid, lambda d: rules.opened(d, mine, room))
        if doc is not None and not any(g["room"] == room for g in doc["games"]):
            log.warning("tournament_room_orphaned", tournament=tid, room=room)
        return doc

    async def _update(self, tid: str, change: Any) -> Doc | None:
        doc = await self.store.update(tid, change)
        if doc is not None and self._seen.get(tid) != doc["version"]:
            self._seen[tid] = doc["version"]
            self.changed.set()  # subscribers hear of it now, not at their next look
        return doc

    def _start(self, doc: Doc) -> None:
        if doc["status"] != "open":
            return
        if doc.get("cancel"):
            rules.finish(doc, now_ms(), cancelled=True)
        else:
            rules.start(doc, now_ms())
        log.info("tournament_started", tournament=doc["id"], status=doc["status"])

    async def _outcome(self, room: str) -> tuple[str | None, dict[str, Any] | None] | None:
        """``(record id, result)`` of the game in ``room`` once it ended; ``(None,
        None)`` if the room closed without a game; None while it goes on."""
        record_id = f"{room}-1"
        rec = await self.arena.records.get(record_id)
        if rec is not None:
            return record_id, rec["data"]["result"]
        if await self.arena.presence.rooms.get(room) is not None:
            return None
        rec = await self.arena.records.get(record_id)  # saved before the room went
        if rec is not None:
            return record_id, rec["data"]["result"]
        return None, None

    async def _present(self, doc: Doc) -> dict[str, Session]:
        """The entrants connected now, with their sessions."""
        out: dict[str, Session] = {}
        for name, e in doc["entrants"].items():
            if e.get("withdrawn"):
                continue
            s = await self._session(name, e.get("session", ""))
            if s is not None:
                out[name] = s
        return out

    async def _session(self, name: str, sid: str) -> Session | None:
        """The entrant's session if it is connected. (Several nodes: a session held by
        another live node counts as connected; one that dropped there is seen as such
        only when its grace period ends.)"""
        arena = self.arena
        key = name_key(name)
        s = arena.sessions.get(sid)
        if s is None:  # logged in again (a new session) on this node?
            s = arena.sessions.get(arena.online_names.get(key, ""))
        if s is not None:
            ok = s.conn is not None and s.player and name_key(s.player["name"]) == key
            return s if ok else None
        remote = await arena.cluster.remote_session(sid)  # connected to another node
        if remote is not None and name_key(remote.player["name"]) == key:
            return remote
        return None

    async def _open(
        self, doc: Doc, pending: dict[str, Any], present: dict[str, Session]
    ) -> str | None:
        order = [present[n] for n in pending["players"]]
        rnd = pending["round"]
        try:
            return await open_pairing(self.arena, doc["settings"], order, doc["id"], rnd)
        except ProtocolError as exc:  # a refused room (a player's room limit): again later
            key = (doc["id"], tuple(pending["players"]))
            if key not in self._refused:  # said once, not at every tick
                self._refused.add(key)
                log.warning("tournament_pairing_refused", tournament=doc["id"], code=str(exc.code))
            return None
