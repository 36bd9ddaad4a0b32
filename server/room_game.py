"""A room's game: start, moves, forfeits, the clock's deadline, the end (rated and
recorded), rematches and chat (mixed into :class:`server.room.Room`; the rules are
:class:`engine.match.Match`'s, the state changes :mod:`server.room_state`'s)."""

from __future__ import annotations

import time
from typing import Any

from engine.base import Result
from protocol import messages as m
from protocol.errors import ErrorCode, ProtocolError
from protocol.fastwire import game_started_wire, move_made_wire
from protocol.outgoing import Outgoing
from server import room_commands as rc
from server import room_state as rs
from server.private_records import private_record_fields
from server.ratings import Rating, rate_game


def now_ms() -> int:
    """Wall-clock milliseconds, for timestamps shown to people."""
    return int(time.time() * 1000)


class RoomGame:
    """The game of :class:`server.room.Room`."""

    def _seated(self, session: str) -> int:
        return rc.seated(self.state, session)

    async def _next_seed(self) -> int:
        """The next deal's seed: one dealt ahead off the loop when dealing is costly."""
        s = self.settings
        return await self.arena.deals.seed(s.game, s.rules, s.variant, s.seats, s.options)

    async def _maybe_start(self, require_ready: bool) -> None:
        if not rc.can_start(self.state, require_ready):
            return
        start = rc.Start(require_ready, seed=await self._next_seed())
        for ev in rc.decide(self.state, start, self._now()):
            await self._start_game(ev)  # type: ignore[arg-type]

    async def _start_game(self, ev: rs.GameStarted) -> None:
        s = self.settings
        outcome = self._apply(ev)
        match = self.state.match
        assert match is not None
        players = list(match.players)
        g = match.game
        # built directly (protocol.fastwire); tests/test_server_games.py compares every
        # logged event with its model's wire
        seq = self.state.seq + 1
        position, view, legal = g.position_view_moves()
        wire = game_started_wire(
            self.id,
            seq,
            game_number=self.state.game_number,
            seats=self.seat_wires(),
            setup=g.setup(),
            position=position,
            view=view,
            to_move=match.to_move(),
            legal_moves=legal if not match.over else [],
            clocks=match.clocks(),
        )
        await self._log_and_send(Outgoing(wire), seq, lobby=True)
        self.arena.metrics.games_started.labels(s.game).inc()
        self.arena.metrics.games_live.inc()
        self.log.info("game_started", game=s.game, number=self.state.game_number, players=players)
        await self._log_outcome(outcome)  # (a deal nobody can move in: game_over updates it)

    async def move(self, session: str, move: str, re: Any = None) -> None:
        """Play ``move``; with ``re`` (a ``move`` with ``reply: "event"``) the mover's
        ``move_made`` carries it as the reply."""
        (ev,) = rc.decide(self.state, rc.Move(session, move), self._now())
        outcome = self._apply(ev)  # the match refuses an illegal move before any change
        await self._log_outcome(outcome, None if re is None else (session, re))
        if outcome[0]["type"] != "move":  # a flag fell before the move arrived: not played
            seat = ev.seat  # type: ignore[union-attr]
            if self.state.match.over or seat in self.state.match.game.eliminated():  # type: ignore[union-attr]
                raise ProtocolError(ErrorCode.GAME_OVER, "time ran out before the move arrived")
            # (3-4 players) another player's time ran out first and the game goes on:
            # the move was sent out of turn; player_eliminated says who is to move now
            raise ProtocolError(
                ErrorCode.NOT_YOUR_TURN, "a player's time ran out before the move arrived"
            )

    async def resign(self, session: str) -> None:
        for ev in rc.decide(self.state, rc.Resign(session), self._now()):
            await self._log_outcome(self._apply(ev))

    async def abort(self, session: str) -> None:
        """A player ends the game without a result, before everyone has moved."""
        seat = self._seated(session)
        if self.match is None:
            raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
        await self._log_outcome(self.match.abort_by(seat, self._now()))

    async def _forfeit(self, seat: int, reason: str) -> None:
        await self._log_outcome(self._apply(rs.Forfeit(seat, reason, self._now())))

    async def _on_deadline(self) -> None:
        if self.state.match is not None:
            await self._log_outcome(self._apply(rs.FlagCheck(self._now())))

    async def _log_outcome(self, events: list[dict[str, Any]], reply: tuple | None = None) -> None:
        """Log and send what the match answered (its event dicts), in order.

        ``reply`` (session, request id): the ``move_made`` of that session's move is its reply.
        """
        assert self.state.match is not None
        for ev in events:
            if ev["type"] == "move":
                self._moves_metric.inc()
                seq = self.state.seq + 1
                await self._log_and_send(Outgoing(self.move_wire(seq, ev)), seq, reply)
            elif ev["type"] == "eliminated":
                # ruling 3: a forfeit with two others or more still in; the game goes on
                await self.emit(m.PlayerEliminated, **self.eliminated_fields(ev))
            elif ev["type"] == "game_over":
                if ev["clocks"] is not None and ev["result"]["reason"] == "timeout":
                    await self.emit(
                        m.ClockUpdate, clock=m.Clock(remaining_ms=ev["clocks"], running=None)
                    )
                await self._finish(Result.from_dict(ev["result"]))
        self.arm_deadline()

    def move_wire(self, seq: int, ev: dict[str, Any]) -> dict[str, Any]:
        """The ``move_made`` event as wire data, built directly on the hot path.

        Exactly ``to_wire(MoveMade(...))``, without building and dumping a model for
        every move (:func:`protocol.fastwire.move_made_wire`).
        """
        assert self.state.match is not None
        g = self.state.match.game
        over = self.state.match.over or g.is_over()
        position, view, legal = g.position_view_moves()
        return move_made_wire(
            self.id,
            seq,
            ply=ev["ply"],
            seat=ev["seat"],
            move=ev["move"],
            position=position,
            view=view,
            to_move=ev["to_move"],
            legal_moves=[] if over else legal,
            clocks=ev["clocks"],
        )

    def eliminated_fields(self, ev: dict[str, Any]) -> dict[str, Any]:
        """The ``player_eliminated`` event's fields for the match's ``eliminated`` event
        (the position as it is now: the event is applied before the next one happens)."""
        assert self.state.match is not None
        g = self.state.match.game
        over = self.state.match.over or g.is_over()
        position, view, legal = g.position_view_moves()
        clock = None
        if ev["clocks"] is not None:
            clock = m.Clock(remaining_ms=list(ev["clocks"]), running=ev["to_move"])
        return {
            "seat": ev["seat"],
            "reason": ev["reason"],
            "ply": ev["ply"],
            "position": position,
            "view": view,
            "to_move": ev["to_move"],
            "legal_moves": [] if over else legal,
            "clock": clock,
        }

    def arm_deadline(self) -> None:
        self._cancel_deadline()
        if self.state.match is None or self.state.closed:
            return
        deadline = self.state.match.deadline_ms()
        if deadline is not None:
            self._deadline = self._loop.call_at(
                deadline / 1000, lambda: self.post(self._on_deadline)
            )

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    async def finish_unfinished(self) -> None:
        """Rate and record a game that ended without its ``game_over`` logged (a restore)."""
        if self.state.unfinished:
            assert self.state.match is not None and self.state.match.result is not None
            await self._finish(self.state.match.result)

    async def _finish(self, result: Result) -> None:
        assert self.state.match is not None
        s = self.settings
        self._cancel_deadline()
        record_id = f"{self.id}-{self.state.game_number}"
        changes: list[dict[str, Any]] = []
        if s.rated and result.reason != "aborted":
            changes = await self._rate(result)
        finished = now_ms()
        record = self.state.match.record_dict()
        record["room"] = self.id
        await self.arena.records.save(
            record_id,
            {
                "game": s.game,
                "players": list(self.state.match.players),
                "data": record,
                "rated": s.rated,
                "ratings": changes,
                "finished_at": finished,
                "ended_at": finished,
                **private_record_fields(
                    s.private,
                    s.invite,
                    [(st.session, st.player) for st in self.state.seats if st is not None],
                ),
            },
        )
        self._apply(rs.GameOver(result.to_dict(), changes, record_id, self._now()))
        await self.emit_wire(
            "game_over",
            game_number=self.state.game_number,
            result=result.to_dict(),
            ratings=changes,
            record=record_id,
            lobby=True,
        )
        self.arena.metrics.games_finished.labels(s.game, result.reason).inc()
        self.arena.metrics.games_live.dec()
        self.log.info("game_over", number=self.state.game_number, result=result.to_dict())

    async def _rate(self, result: Result) -> list[dict[str, Any]]:
        """Rate the game; the changes as protocol ``RatingChange`` wire data."""
        presence = self.arena.presence
        game = self.settings.game
        names = list(self.state.match.players)  # type: ignore[union-attr]
        started = list(self.state.started_players)
        started += [None] * (len(names) - len(started))
        players = [
            st.player if st is not None and st.player["name"] == n else p
            for st, n, p in zip(self.state.seats, names, started, strict=False)
        ]
        before = [Rating.from_dict(await presence.ratings.get(game, n)) for n in names]
        after = rate_game(before, result)
        await presence.ratings.put(
            game,
            {
                n: {**a.to_dict(), "bot": bool(p and p.get("bot"))}
                for n, a, p in zip(names, after, players, strict=True)
            },
        )
        return [
            {"seat": i, "name": n, "before": round(b.rating, 2), "after": round(a.rating, 2)}
            for i, (n, b, a) in enumerate(zip(names, before, after, strict=True))
        ]

    async def offer_rematch(self, session: str, accept: bool) -> None:
        completes = rc.rematch_completes(self.state, session)
        seed = await self._next_seed() if completes else 0  # (drawn only for a new game)
        offer = rc.OfferRematch(session, accept, seed=seed)
        for ev in rc.decide(self.state, offer, self._now()):
            if isinstance(ev, rs.RematchOffered):
                self._apply(ev)
                await self.emit(m.RematchOffered, seat=ev.seat)
            else:
                assert isinstance(ev, rs.GameStarted)
                await self._start_game(ev)

    async def chat(self, session: str, name: str, text: str) -> None:
        role = self.state.members.get(session)
        if role is None:
            raise ProtocolError(ErrorCode.UNKNOWN_ROOM, "join the room to chat in it")
        await self.emit(m.ChatMessage, name=name, text=text, spectator=role == "spectator")
