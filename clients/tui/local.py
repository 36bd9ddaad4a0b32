"""Games without a server: offline play against engine bots, a Solo puzzle, and
replaying a record. All go through the engine (:class:`engine.match.Match`,
:func:`engine.base.replay`'s rules) and show themselves as a :class:`RoomModel`, so the
same game screen draws them."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from clients.tui.board import BoardView
from clients.tui.memory import KeysFooter
from clients.tui.state import RoomModel, Seat
from engine.ai import make_player
from engine.base import Game, GameRecord, Result, replay
from engine.collapsi.solo import Puzzle, generate
from engine.match import Match, TimeControl


class LocalMatch:
    """A game played on this computer through a :class:`engine.match.Match` (the same
    authority as a server room), shown as a :class:`RoomModel`; you are seat 0."""

    def __init__(self, match: Match, model: RoomModel) -> None:
        self.match, self.model = match, model
        self.model.you, self.model.local = 0, True
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
            self.over()
        if self.on_change is not None:
            self.on_change()

    def over(self) -> None:
        """The game just ended (the model's banner is set): a subclass may say more."""

    async def move(self, room: str, move: str) -> None:
        self.match.submit_move(0, move, self._now())
        self._sync(move)

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


class OfflineGame(LocalMatch):
    """You (seat 0) against an engine bot level in every other seat (Big Board: 2-4
    players); the bots answer in a worker thread so the screen stays live."""

    def __init__(
        self, game: str, level: str, variant: str | None = None, seed: int = 0, players: int = 2
    ):
        names = ["you"] + [
            f"{level}-bot" + (f"-{i}" if players > 2 else "") for i in range(1, players)
        ]
        match = Match.new(game, names, variant=variant, seed=seed)
        self.bots = {
            i: make_player(game, level, seed=seed + i, iterations=2000) for i in range(1, players)
        }
        model = RoomModel(room="offline", game=game, variant=match.game.variant)
        labels = match.game.view().get("seats") or ["first", "second"]
        model.seats = [
            Seat(label=label, name=name) for label, name in zip(labels, names, strict=True)
        ]
        super().__init__(match, model)

    async def move(self, room: str, move: str) -> None:
        await super().move(room, move)
        while not self.match.over and (seat := self.match.to_move()) != 0 and seat is not None:
            game = self.match.game
            reply = await asyncio.to_thread(self.bots[seat].choose, game.copy())
            self.match.submit_move(seat, reply, self._now())
            self._sync(reply)


class OfflinePuzzle(LocalMatch):
    """A Solo puzzle (ruling 7): a generated, solvable 3x3 or 4x4 deal rated easy, medium
    or hard (:func:`engine.collapsi.solo.generate`), played alone through a one-seat
    :class:`Match`; the rematch key starts the same puzzle again."""

    def __init__(self, puzzle: Puzzle) -> None:
        self.puzzle = puzzle
        n = puzzle.size
        model = RoomModel(room="puzzle", game="collapsi", variant="solo")
        model.detail = (
            f"Solo puzzle {n}x{n}, difficulty {puzzle.difficulty} (seed {puzzle.seed}): "
            "collapse every other card, then reach the exit"
        )
        super().__init__(Match(puzzle.game(), ["you"]), model)
        self.model.seats = [Seat(label="player", name="you")]

    def over(self) -> None:
        result = self.match.result
        assert result is not None
        if result.reason == "solved":
            self.model.banner = f"Puzzle solved in {len(self.match.game.history)} moves"
        else:
            self.model.banner = f"Puzzle not solved ({result.reason}): Ctrl+T tries again"

    async def offer_rematch(self, room: str) -> None:
        """Try the same puzzle again from the start."""
        self.match = Match(self.puzzle.game(), ["you"])
        m = self.model
        m.moves, m.last_path, m.banner, m.result = [], [], None, None
        self.match.start(self._now())
        m.status = "playing"
        self._sync(None)


async def make_puzzle(size: int, difficulty: str, seed: int) -> OfflinePuzzle:
    """Generate the puzzle off the event loop (a 4x4 one takes a second or two)."""
    return OfflinePuzzle(await asyncio.to_thread(generate, size, difficulty, seed))


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
        yield KeysFooter()

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
            Text(
                f"{self.title_text}: {players}\nmove {self.ply}/{total}"
                + (f" ({last})" if last else "")
                + end
            )
        )

    def action_close(self) -> None:
        self.dismiss()


__all__ = [
    "LocalMatch",
    "OfflineGame",
    "OfflinePuzzle",
    "ReplayScreen",
    "TimeControl",
    "make_puzzle",
]
