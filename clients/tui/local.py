"""Games without a server: offline play against an engine bot, and replaying a record.
Both go through the engine (:class:`engine.match.Match`, :func:`engine.base.replay`'s
rules) and show themselves as a :class:`RoomModel`, so the same game screen draws them."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from clients.tui.board import BoardView
from clients.tui.state import RoomModel, Seat
from engine.ai import make_player
from engine.base import Game, GameRecord, Result, replay
from engine.match import Match, TimeControl


class OfflineGame:
    """You (seat 0) against an engine bot level, through the same Match authority as a
    server room; the bot answers in a worker thread so the screen stays live."""

    def __init__(self, game: str, level: str, variant: str | None = None, seed: int = 0):
        self.match = Match.new(game, ["you", f"{level}-bot"], variant=variant, seed=seed)
        self.bot = make_player(game, level, seed=seed, iterations=2000)
        self.model = RoomModel(room="offline", game=game, variant=self.match.game.variant)
        self.model.you = 0
        labels = self.match.game.view().get("seats") or ["first", "second"]
        self.model.seats = [Seat(label=labels[0], name="you"), Seat(labels[1], f"{level}-bot")]
        self.on_change: Any = None
        self.match.start(self._now())
        self.model.status = "playing"
        self._sync(None)

    @staticmethod
    def _now() -> int:
        return int(time.monotonic() * 1000)

    def _sync(self, move: str | None) -> None:
        g = self.match.game
        m = self.model
        before = m.view or {}
        m.view = g.view()
        if move is not None:
            m.last_path = list(((before.get("paths") or {}).get(move)) or [])
            m.moves.append(f"{len(g.history)}. {move}")
        m.to_move = self.match.to_move()
        m.legal = [] if self.match.over else g.legal_moves()
        if self.match.over and self.match.result is not None:
            m._over(self.match.result, [], None)
        if self.on_change is not None:
            self.on_change()

    async def move(self, room: str, move: str) -> None:
        self.match.submit_move(0, move, self._now())
        self._sync(move)
        while not self.match.over and self.match.to_move() == 1:
            game = self.match.game
            reply = await asyncio.to_thread(self.bot.choose, game.copy())
            self.match.submit_move(1, reply, self._now())
            self._sync(reply)

    async def chat(self, room: str, text: str) -> None:
        self.model.chat.append(f"you: {text}")

    async def resign(self, room: str) -> None:
        self.match.resign(0, self._now())
        self._sync(None)

    async def abort_game(self, room: str) -> None:
        self.match.abort_by(0, self._now())
        self._sync(None)

    async def offer_rematch(self, room: str) -> None:
        return None

    async def leave(self, room: str) -> None:
        return None


class ReplayScreen(Screen[None]):
    """Step through a finished game's record: left/right a move, home/end."""

    BINDINGS = [
        Binding("left", "step(-1)", "back", priority=True),
        Binding("right", "step(1)", "forward", priority=True),
        Binding("home", "jump(0)", "start", priority=True),
        Binding("end", "jump(-1)", "end", priority=True),
        Binding("escape", "close", "close"),
    ]

    def __init__(self, record: dict[str, Any], title: str) -> None:
        super().__init__()
        self.record = GameRecord.from_dict(record)
        self.title_text = title
        self.ply = 0

    def compose(self) -> ComposeResult:
        yield Static(id="replay-info")
        yield BoardView(id="board")
        yield Footer()

    def on_mount(self) -> None:
        self.action_jump(0)

    def game_at(self, ply: int) -> Game:
        """The game after ``ply`` moves and the forfeits up to then (engine.base.replay)."""
        r = self.record
        forfeits = [f for f in r.forfeits if f["ply"] <= ply]
        return replay(dataclasses.replace(r, moves=r.moves[:ply], forfeits=forfeits))

    def action_step(self, delta: int) -> None:
        self.action_jump(max(0, min(len(self.record.moves), self.ply + delta)))

    def action_jump(self, ply: int) -> None:
        self.ply = len(self.record.moves) if ply < 0 else ply
        game = self.game_at(self.ply)
        before = self.game_at(self.ply - 1).view() if self.ply else {}
        last = self.record.moves[self.ply - 1] if self.ply else None
        path = list(((before.get("paths") or {}).get(last)) or []) if last else []
        self.query_one(BoardView).show(game.view(), [], path)
        total = len(self.record.moves)
        result = self.record.result
        end = ""
        if self.ply == total and isinstance(result, Result):
            end = f"  result: {result.reason}, winner seat {result.winner}"
        players = " vs ".join(self.record.players)
        self.query_one("#replay-info", Static).update(
            f"{self.title_text}: {players}\nmove {self.ply}/{total}"
            + (f" ({last})" if last else "")
            + end
        )

    def action_close(self) -> None:
        self.dismiss()


__all__ = ["OfflineGame", "ReplayScreen", "TimeControl"]
