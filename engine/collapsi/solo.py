"""Solo Collapsi puzzles (ruling 7): a solver, a solution-space count and a generator.

The puzzle is the engine's ``solo`` variant (see :mod:`engine.collapsi`): one
pawn starts on the first jack, the second jack is the exit, a door that a
move may reach within its step count (landing or passing); it wins only once
every other card has collapsed. Everything here drives the engine's own
moves (:meth:`CollapsiGame.legal_cells`, :meth:`~CollapsiGame.play_cell`,
:meth:`~CollapsiGame.undo`), so it follows the engine's reading of the rules
in every variant, Shifting Board included.

Why memoise: from a given state (collapsed cards, pawn, exit, and in Shifting
Board the layout) the lines that follow do not depend on how it was reached,
so :func:`count` is exact with a table and :func:`solve` never revisits a dead
end.

Difficulty comes from the solution space: the share of winning lines among
all complete lines (a player moving at random wins with roughly that
chance), split at fixed thresholds per board size measured on random
solvable deals (see :data:`THRESHOLDS`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from engine.base import SetupError
from engine.clock import cpu_now
from engine.collapsi.board import SHIFTS, board
from engine.collapsi.deck import SOLO_3X3, STANDARD_4X4, format_deal, shuffled
from engine.collapsi.game import CollapsiGame

DIFFICULTIES = ("easy", "medium", "hard")
SIZES = (3, 4)
#: share-of-winning-lines cut points per (size, rules): share >= easy_min is easy,
#: share < hard_max is hard, the rest medium. They are the tertiles of the solvable
#: deals among 400 (3x3) and 150 (4x4) seeded random deals, so each difficulty is
#: about a third of all solvable deals (about 97% of 3x3 deals are solvable, 25-30%
#: of 4x4 deals).
THRESHOLDS: dict[tuple[int, str], tuple[float, float]] = {
    (3, "standard"): (0.0303, 0.0195),
    (3, "classic"): (0.0234, 0.0159),
    (4, "standard"): (0.00258, 0.00117),
    (4, "classic"): (0.00141, 0.00070),
}
#: deals tried before a generator gives up (never reached for the shipped sizes)
MAX_ATTEMPTS = 20_000

Move = tuple[int, int]  # (destination, shift index or -1)


class SoloBudgetExceeded(Exception):
    """A search passed its deadline before it finished."""


def _moves(game: CollapsiGame) -> list[Move]:
    cells = game.legal_cells()
    if "shifting" in game.variant:
        return [(d, s) for d in cells for s in range(len(SHIFTS))]
    return [(d, -1) for d in cells]


def _key(game: CollapsiGame) -> tuple:
    pos = game.to_position()
    shifting = "shifting" in game.variant
    return (pos.collapsed, pos.pawns[0], game.exit_cell, pos.cards if shifting else None)


def _note(move: Move) -> str:
    d, s = move
    return f"{d}{SHIFTS[s]}" if s >= 0 else str(d)


def _check(game: CollapsiGame) -> CollapsiGame:
    if not isinstance(game, CollapsiGame) or "solo" not in game.variant:
        raise SetupError("solo puzzles are Collapsi games of the 'solo' variant")
    return game


class _Fixed:
    """Bit-mask search for boards whose cards stay put (every variant but Shifting Board).

    The same tables and tests as the engine's move generation for solo
    (``CollapsiGame._gen``): ordinary moves may not enter the exit, and the
    exit is reachable by any walk of up to the card's step count (the door).
    Tests check it against the engine-driven search and a brute force.
    """

    def __init__(self, game: CollapsiGame, deadline: float = math.inf) -> None:
        self.deadline = deadline
        pos = game.to_position()
        b = board(pos.width, pos.height)
        self.cards = pos.cards
        self.exit = game.exit_cell if game.exit_cell is not None else -1
        self.exit_bit = 1 << self.exit
        self.full = b.full
        jack = b.upto[4] if pos.rules == "classic" else b.exact[1]
        self.tables = (jack, b.exact[1], b.exact[2], b.exact[3], b.exact[4])
        reach = 4 if pos.rules == "classic" else 1
        self.door: list[tuple[int, ...]] = []  # per cell: minimal masks of walks to the exit
        for c, v in enumerate(pos.cards):
            table = b.upto[reach if v == 0 else v][c]
            self.door.append(next((ms for d, _b, ms in table if d == self.exit), ()))
        self.collapsed = pos.collapsed
        self.pawn = pos.pawns[0]
        self.memo: dict[int, tuple[int, int]] = {}

    def dests(self, collapsed: int, cell: int) -> list[int]:
        block = collapsed | self.exit_bit
        out = [
            d
            for d, _bit, masks in self.tables[self.cards[cell]][cell]
            if any(not m & block for m in masks)
        ]
        if any(not m & collapsed for m in self.door[cell]):
            out.append(self.exit)
        return out

    def outcome(self, collapsed: int) -> bool:
        """After a move to the exit with ``collapsed`` face down: solved?"""
        return collapsed | self.exit_bit == self.full

    def count(self, collapsed: int, cell: int) -> tuple[int, int]:
        key = collapsed << 8 | cell
        got = self.memo.get(key)
        if got is not None:
            return got
        nc = collapsed | (1 << cell)
        wins = total = 0
        for d in self.dests(collapsed, cell):
            if d == self.exit:
                wins += self.outcome(nc)
                total += 1
            else:
                w, t = self.count(nc, d)
                wins += w
                total += t
        if not total:
            total = 1  # stuck: one failed line
        self.memo[key] = (wins, total)
        if not len(self.memo) & 1023 and cpu_now() > self.deadline:
            raise SoloBudgetExceeded(f"solo search stopped at its deadline after {len(self.memo)}")
        return wins, total

    def line(self, collapsed: int, cell: int) -> list[str] | None:
        if not self.count(collapsed, cell)[0]:
            return None
        nc = collapsed | (1 << cell)
        for d in self.dests(collapsed, cell):
            if d == self.exit:
                if self.outcome(nc):
                    return [str(d)]
            elif self.count(nc, d)[0]:
                rest = self.line(nc, d)
                assert rest is not None
                return [str(d), *rest]
        raise AssertionError("a counted win without a line")  # pragma: no cover


def _fixed(game: CollapsiGame, deadline: float = math.inf) -> _Fixed | None:
    if "shifting" in game.variant or game.is_over():
        return None
    return _Fixed(game, deadline)


def solve(game: CollapsiGame, deadline: float = math.inf) -> list[str] | None:
    """A winning line (moves in notation) from the current position, or ``None`` if
    there is none (a proof: every line was followed to its end). ``game`` is unchanged.

    ``deadline`` (an :func:`engine.clock.cpu_now` value: CPU time) bounds the bit-mask search:
    past it, :class:`SoloBudgetExceeded` is raised (the AI's time budget).
    """
    _check(game)
    if game.is_over():
        return [] if game.result().reason == "solved" else None  # type: ignore[union-attr]
    fast = _fixed(game, deadline)
    if fast is not None:
        return fast.line(fast.collapsed, fast.pawn)
    return solve_by_engine(game)


def solve_by_engine(game: CollapsiGame) -> list[str] | None:
    """:func:`solve` through the engine's own move generation (any variant, slower)."""
    g = _check(game).copy()
    dead: set[tuple] = set()
    line: list[str] = []

    def search() -> bool:
        res = g.result()
        if res is not None:
            return res.reason == "solved"
        key = _key(g)
        if key in dead:
            return False
        for move in _moves(g):
            g.play_cell(*move)
            line.append(_note(move))
            if search():
                return True
            line.pop()
            g.undo()
        dead.add(key)
        return False

    return list(line) if search() else None


def count(game: CollapsiGame) -> tuple[int, int]:
    """(winning lines, all complete lines) from the current position; ``game`` is unchanged.

    A line is a sequence of moves to the end of the puzzle (solved or failed);
    it agrees with :func:`engine.collapsi.solo_count`, only faster.
    """
    _check(game)
    fast = _fixed(game)
    if fast is not None:
        return fast.count(fast.collapsed, fast.pawn)
    return count_by_engine(game)


def count_by_engine(game: CollapsiGame) -> tuple[int, int]:
    """:func:`count` through the engine's own move generation (any variant, slower)."""
    g = _check(game).copy()
    memo: dict[tuple, tuple[int, int]] = {}

    def walk() -> tuple[int, int]:
        res = g.result()
        if res is not None:
            return (1 if res.reason == "solved" else 0), 1
        key = _key(g)
        got = memo.get(key)
        if got is not None:
            return got
        wins = total = 0
        for move in _moves(g):
            g.play_cell(*move)
            w, t = walk()
            g.undo()
            wins += w
            total += t
        memo[key] = (wins, total)
        return wins, total

    return walk()


@dataclass(frozen=True)
class Analysis:
    """The solution space of a puzzle position."""

    winning_lines: int
    lines: int
    first_moves: int
    winning_first_moves: list[str]

    @property
    def share(self) -> float:
        """Winning lines among all complete lines."""
        return self.winning_lines / self.lines if self.lines else 0.0

    @property
    def solvable(self) -> bool:
        return self.winning_lines > 0


def analyse(game: CollapsiGame) -> Analysis:
    """Count the lines and find the winning first moves."""
    g = _check(game).copy()
    wins, total = count(g)
    firsts = []
    moves = _moves(g) if g.result() is None else []
    fast = _fixed(g)
    if fast is not None:
        nc = fast.collapsed | (1 << fast.pawn)
        for d, _s in moves:
            won = fast.outcome(nc) if d == fast.exit else fast.count(nc, d)[0] > 0
            if won:
                firsts.append(str(d))
        return Analysis(wins, total, len(moves), firsts)
    for move in moves:
        g.play_cell(*move)
        if count(g)[0]:
            firsts.append(_note(move))
        g.undo()
    return Analysis(wins, total, len(moves), firsts)


def rate(analysis: Analysis, size: int, rules: str = "standard") -> str | None:
    """``easy``, ``medium`` or ``hard`` from the share of winning lines; ``None`` if unsolvable."""
    if not analysis.solvable:
        return None
    easy_min, hard_max = THRESHOLDS[(size, rules)]
    if analysis.share >= easy_min:
        return "easy"
    if analysis.share < hard_max:
        return "hard"
    return "medium"


@dataclass(frozen=True)
class Puzzle:
    """A generated puzzle: its deal, rating, solution-space figures and one winning line."""

    size: int
    rules: str
    difficulty: str
    seed: int
    deal: str
    analysis: Analysis
    solution: list[str] = field(default_factory=list)

    def game(self) -> CollapsiGame:
        """A fresh game of this puzzle (start on the first jack, exit on the second)."""
        return puzzle_game(self.deal, self.size, self.rules)

    def to_dict(self) -> dict[str, Any]:
        a = self.analysis
        return {
            "size": self.size,
            "rules": self.rules,
            "difficulty": self.difficulty,
            "seed": self.seed,
            "deal": self.deal,
            "winning_lines": a.winning_lines,
            "lines": a.lines,
            "share": a.share,
            "first_moves": a.first_moves,
            "winning_first_moves": list(a.winning_first_moves),
            "solution": list(self.solution),
        }


def puzzle_game(deal: str, size: int, rules: str = "standard") -> CollapsiGame:
    return CollapsiGame.from_setup(deal, rules=rules, variant="solo", options={"size": size})


def generate(size: int, difficulty: str, seed: int, rules: str = "standard") -> Puzzle:
    """The puzzle of (size, difficulty, seed, rules): a pure function of its arguments.

    Deals are drawn from a seeded shuffle, attempt after attempt, until one is
    solvable and rated ``difficulty``; unsolvable deals are never returned.
    """
    if size not in SIZES:
        raise SetupError(f"solo puzzles are 3x3 or 4x4, not size {size!r}")
    if difficulty not in DIFFICULTIES:
        raise SetupError(f"difficulty must be one of {', '.join(DIFFICULTIES)}")
    if (size, rules) not in THRESHOLDS:
        raise SetupError(f"unknown rule set {rules!r}; known: standard, classic")
    deck = SOLO_3X3 if size == 3 else STANDARD_4X4
    for attempt in range(MAX_ATTEMPTS):
        cards = shuffled(deck, f"collapsi/solo-puzzle/{size}/{rules}/{difficulty}/{seed}/{attempt}")
        deal = format_deal(cards, size, size)
        game = puzzle_game(deal, size, rules)
        if game.is_over():
            continue
        stats = analyse(game)
        if rate(stats, size, rules) == difficulty:
            line = solve(game)
            assert line is not None  # solvable, as just counted
            return Puzzle(size, rules, difficulty, seed, deal, stats, line)
    raise SetupError(  # pragma: no cover - thresholds leave every class common
        f"no {difficulty} {size}x{size} puzzle found in {MAX_ATTEMPTS} deals"
    )
