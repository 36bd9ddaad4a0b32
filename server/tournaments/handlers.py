"""The tournament requests: listing, standings and their live pushes, entering and
withdrawing, and the operators' create/start/cancel (PROTOCOL.md, Tournaments)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from typing import Any

from engine.base import SetupError
from protocol import messages as m
from protocol.codec import to_wire
from protocol.errors import ErrorCode, ProtocolError
from server.connection import Connection
from server.host import Handler, Host
from server.tasks import checkpoint
from server.tournaments import table
from server.tournaments.director import Director, now_ms
from server.tournaments.store import Doc, TournamentStore

FORMATS = ("round_robin", "swiss", "arena")
#: formats a player may enter after the start (a round robin's schedule is fixed then)
LATE_ENTRY = ("swiss", "arena")


class Tournaments:
    """Handlers of the tournament messages, and the pushes to subscribers."""

    def __init__(self, arena: Host, store: TournamentStore, director: Director) -> None:
        self.arena = arena
        self.store = store
        self.director = director
        #: tournament id -> connections subscribed (and the version each saw last)
        self.subs: dict[str, dict[Connection, int]] = {}
        #: set when a tournament changed on this node: push without waiting for the tick
        self._poke = director.changed

    def handlers(self) -> dict[str, Handler]:
        return {
            "list_tournaments": self.on_list,
            "get_standings": self.on_get_standings,
            "join_tournament": self.on_join,
            "leave_tournament": self.on_leave,
            "tournament_subscribe": self.on_subscribe,
            "tournament_unsubscribe": self.on_unsubscribe,
            "create_tournament": self.on_create,
            "start_tournament": self.on_start,
            "cancel_tournament": self.on_cancel,
        }

    async def _doc(self, tid: str) -> Doc:
        doc = await self.store.get(tid)
        if doc is None:
            raise ProtocolError(ErrorCode.UNKNOWN_TOURNAMENT, f"no tournament {tid}")
        return doc

    async def _change(self, tid: str, change: Any) -> Doc:
        doc = await self.store.update(tid, change)
        if doc is None:
            raise ProtocolError(ErrorCode.UNKNOWN_TOURNAMENT, f"no tournament {tid}")
        self.director.wake.set()
        self._poke.set()
        return doc

    # -- anyone ------------------------------------------------------------------------
    async def on_list(self, conn: Connection, msg: m.ListTournaments) -> None:
        found = []
        for tid in reversed(await self.store.ids()):  # newest first
            doc = await self.store.get(tid)
            if doc is not None and (msg.game is None or doc["settings"]["game"] == msg.game):
                found.append(table.summary(doc))
            if len(found) >= 500:
                break
        conn.send(m.TournamentList(re=msg.id, tournaments=found))

    async def on_get_standings(self, conn: Connection, msg: m.GetStandings) -> None:
        conn.send(table.standings(await self._doc(msg.tournament), msg.id))

    async def on_subscribe(self, conn: Connection, msg: m.TournamentSubscribe) -> None:
        doc = await self._doc(msg.tournament)
        self.subs.setdefault(msg.tournament, {})[conn] = doc["version"]
        conn.send(table.standings(doc, msg.id))

    async def on_unsubscribe(self, conn: Connection, msg: m.TournamentUnsubscribe) -> None:
        self.subs.get(msg.tournament, {}).pop(conn, None)
        conn.send(m.Ack(re=msg.id))

    async def run_pushes(self) -> None:
        """Send subscribers the standings whenever a tournament's version moved (changed
        here or, several nodes, anywhere: looked at every tick)."""
        while True:
            checkpoint()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.arena.config.tournament_tick * 2):
                    await self._poke.wait()
            self._poke.clear()
            for tid, conns in list(self.subs.items()):
                for c in [c for c in conns if c.done.is_set() or c.closing]:
                    del conns[c]
                if not conns:
                    del self.subs[tid]
                    continue
                doc = await self.store.get(tid)
                if doc is None:
                    continue
                out = None
                for c, seen in list(conns.items()):
                    if seen != doc["version"]:
                        out = out or table.standings(doc)
                        c.send(out)
                        conns[c] = doc["version"]

    # -- players ------------------------------------------------------------------------
    async def on_join(self, conn: Connection, msg: m.JoinTournament) -> None:
        s = self.arena.session_service.of_conn(conn)
        player = s.player or {}
        if player.get("guest", True):
            raise ProtocolError(ErrorCode.FORBIDDEN, "tournaments need a claimed name (a token)")
        name = player["name"]

        def join(doc: Doc) -> None:
            e = doc["entrants"].get(name)
            started = doc["status"] != "open"
            if doc["status"] == "finished":
                raise ProtocolError(ErrorCode.FORBIDDEN, "the tournament is over")
            late = started and doc["settings"]["format"] not in LATE_ENTRY
            if (e is None or e.get("withdrawn")) and late:
                raise ProtocolError(ErrorCode.FORBIDDEN, "the round robin has started")
            if e is None:
                cap = doc["settings"].get("max_players")
                if cap is not None and len(doc["entrants"]) >= cap:
                    raise ProtocolError(ErrorCode.FORBIDDEN, "the tournament is full")
                e = doc["entrants"][name] = {"joined": now_ms()}
            e.update(session=s.id, bot=bool(player.get("bot")), withdrawn=False)

        await self._change(msg.tournament, join)
        conn.send(m.Ack(re=msg.id))

    async def on_leave(self, conn: Connection, msg: m.LeaveTournament) -> None:
        s = self.arena.session_service.of_conn(conn)
        name = (s.player or {}).get("name")

        def leave(doc: Doc) -> None:
            if name not in doc["entrants"]:
                return
            if doc["status"] == "open":
                del doc["entrants"][name]  # before the start: as if never entered
            else:
                doc["entrants"][name]["withdrawn"] = True

        await self._change(msg.tournament, leave)
        conn.send(m.Ack(re=msg.id))

    # -- operators --------------------------------------------------------------------
    def _admin(self, token: str) -> None:
        want = self.arena.config.admin_token
        if not want or not secrets.compare_digest(token.encode(), want.encode()):
            raise ProtocolError(ErrorCode.FORBIDDEN, "a wrong admin token (or none is set)")

    async def on_create(self, conn: Connection, msg: m.CreateTournament) -> None:
        self._admin(msg.admin_token)
        if msg.format not in FORMATS:
            raise ProtocolError(ErrorCode.BAD_REQUEST, f"format: one of {', '.join(FORMATS)}")
        if msg.format == "swiss" and msg.rounds is None:
            raise ProtocolError(ErrorCode.BAD_REQUEST, "a swiss tournament needs rounds")
        if msg.format == "arena" and msg.duration_ms is None:
            raise ProtocolError(ErrorCode.BAD_REQUEST, "an arena needs duration_ms")
        if msg.max_players is not None and msg.max_players < msg.min_players:
            raise ProtocolError(ErrorCode.BAD_REQUEST, "max_players is below min_players")
        rules, variant = self.arena.registry.check_game(msg.game, msg.rules, msg.variant)
        try:  # every pairing is a room of two
            self.arena.registry.seating(msg.game, rules, variant, 2, {})
        except SetupError as exc:
            raise ProtocolError(ErrorCode.BAD_SETUP, f"no game of two: {exc}") from None
        tid = f"t{secrets.token_hex(5)}"
        doc: Doc = {
            "id": tid,
            "settings": {
                "name": msg.name,
                "game": msg.game,
                "rules": rules,
                "variant": variant,
                "time_control": to_wire(msg.time_control),
                "rated": msg.rated,
                "format": msg.format,
                "rounds": msg.rounds if msg.format != "arena" else None,
                "duration_ms": msg.duration_ms if msg.format == "arena" else None,
                "starts_at": msg.starts_at,
                "max_players": msg.max_players,
                "min_players": msg.min_players,
            },
            "status": "open",
            "created_at": now_ms(),
            "round": 0,
            "entrants": {},
            "games": [],
            "pending": [],
        }
        await self.store.create(tid, doc)
        self.arena.log.info("tournament_created", tournament=tid, format=msg.format)
        self.director.wake.set()
        created = await self._doc(tid)
        conn.send(m.TournamentCreated(re=msg.id, tournament=table.summary(created)))

    async def on_start(self, conn: Connection, msg: m.StartTournament) -> None:
        self._admin(msg.admin_token)

        def start(doc: Doc) -> None:
            if doc["status"] != "open":
                raise ProtocolError(ErrorCode.FORBIDDEN, "the tournament is not open")
            need = doc["settings"].get("min_players", 2)
            have = sum(1 for e in doc["entrants"].values() if not e.get("withdrawn"))
            if have < need:
                raise ProtocolError(ErrorCode.FORBIDDEN, f"{have} entrants, {need} needed")
            doc["start"] = True

        await self._change(msg.tournament, start)
        conn.send(m.Ack(re=msg.id))

    async def on_cancel(self, conn: Connection, msg: m.CancelTournament) -> None:
        self._admin(msg.admin_token)

        def cancel(doc: Doc) -> None:
            if doc["status"] != "finished":
                doc["cancel"] = True

        await self._change(msg.tournament, cancel)
        conn.send(m.Ack(re=msg.id))
