"""Collecto as a :class:`engine.base.Game`: two seats, seat 0 moves first."""

from __future__ import annotations

from typing import Any, Self

from engine.base import Game, GameOver, IllegalMove, NotationError, Result, SetupError, register
from engine.collecto import board as B
from engine.collecto.deal import deal

SEATS = ("first", "second")


@register
class CollectoGame(Game):
    """A Collecto game: the board, both players' collections, whose turn, the history.

    The board and the legal moves of the side to move are kept as plain ints
    (see :mod:`engine.collecto.board`); moves cross the interface as ``"N"``
    or ``"a,b"`` (ruling 15), positions as 49 digits.
    """

    name = "collecto"
    rule_sets = ("standard",)
    variants = ("base",)
    RULES_VERSION = "2020"
    rules_versions = {"standard": RULES_VERSION}

    def __init__(self, board: B.Board, seed: int | None) -> None:
        self._setup = B.format_board(board)
        self._seed = seed
        self._board = list(board)
        self._collected = [[0] * (B.COLOURS + 1) for _ in SEATS]
        self._to_move = 0
        self._history: list[str] = []
        self._singles: list[int] = []
        self._doubles: list[tuple[int, int]] = []
        self._result: Result | None = None
        self._refresh()

    # -- construction -------------------------------------------------------
    @classmethod
    def _check_setup(
        cls,
        rules: str | None,
        variant: str | None,
        players: int | None,
        options: dict[str, Any] | None,
    ) -> None:
        if rules not in (None, *cls.rule_sets):
            raise SetupError(f"Collecto has one rule set, 'standard'; got {rules!r}")
        if variant not in (None, *cls.variants):
            raise SetupError(f"Collecto has no variants besides 'base'; got {variant!r}")
        if players not in (None, len(SEATS)):
            raise SetupError(f"Collecto is a two-player game; got {players} players")
        if options:
            raise SetupError(f"Collecto takes no options; got {sorted(options)}")

    @classmethod
    def new(
        cls,
        rules: str | None = None,
        variant: str | None = None,
        seed: int = 0,
        players: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> Self:
        cls._check_setup(rules, variant, players, options)
        if not isinstance(seed, int):
            raise SetupError(f"a Collecto seed is an integer; got {seed!r}")
        return cls(deal(seed), seed)

    @classmethod
    def from_setup(
        cls,
        setup: str,
        rules: str | None = None,
        variant: str | None = None,
        players: int | None = None,
        options: dict[str, Any] | None = None,
        seed: int | None = None,
    ) -> Self:
        cls._check_setup(rules, variant, players, options)
        return cls(B.parse_board(setup), seed)

    # -- state --------------------------------------------------------------
    @property
    def rules(self) -> str:
        return self.rule_sets[0]

    @property
    def rules_version(self) -> str:
        return self.RULES_VERSION

    @property
    def variant(self) -> str:
        return self.variants[0]

    @property
    def seed(self) -> int | None:
        return self._seed

    @property
    def num_players(self) -> int:
        return len(SEATS)

    def seat_names(self) -> list[str]:
        return list(SEATS)

    def to_move(self) -> int | None:
        return None if self._result is not None else self._to_move

    def legal_moves(self) -> list[str]:
        if self._result is not None:
            return []
        if self._singles:
            return [str(m) for m in self._singles]
        return [f"{a},{b}" for a, b in self._doubles]

    def legal_codes(self) -> tuple[list[int], list[tuple[int, int]]]:
        """(singles, doubles) as numbers; doubles only when there is no single (ruling 13)."""
        return list(self._singles), list(self._doubles)

    def play(self, move: str) -> None:
        if self._result is not None:
            raise GameOver("the game is over: no valid single or double move is left (ruling 13)")
        code = B.parse_move(move)
        legal = (
            code[0] in self._singles
            if len(code) == 1
            else not self._singles and code in self._doubles
        )
        if not legal:
            B.apply_move(self._board, code)  # raises the specific reason
            raise IllegalMove(f"move {move!r} is not legal here")  # pragma: no cover
        for m in code:
            B.push(self._board, m)
        taken = B.collect(self._board)
        mine = self._collected[self._to_move]
        for colour in range(1, B.COLOURS + 1):
            mine[colour] += taken[colour]
        self._history.append(B.format_move(code))
        self._to_move = 1 - self._to_move
        self._refresh()

    def _refresh(self) -> None:
        """List the moves of the side to move; none means the game is over (ruling 13)."""
        self._singles, self._doubles = B.legal_moves(self._board)
        if self._singles or self._doubles:
            self._result = None
            return
        pts = self.points()
        balls = self.balls()
        key = [(pts[s], balls[s]) for s in range(len(SEATS))]
        if key[0] == key[1]:
            self._result = Result(winner=None, order=(0, 1), reason="score", scores=tuple(pts))
        else:
            winner = 0 if key[0] > key[1] else 1  # points, then balls (ruling 14)
            self._result = Result(
                winner=winner, order=(winner, 1 - winner), reason="score", scores=tuple(pts)
            )

    def result(self) -> Result | None:
        return self._result

    def points(self) -> list[int]:
        """Points per seat: one per full three balls of a colour (ruling 14)."""
        return [B.points(c) for c in self._collected]

    def balls(self) -> list[int]:
        return [sum(c[1:]) for c in self._collected]

    def collected(self, seat: int) -> dict[str, int]:
        """Balls ``seat`` has collected, by colour digit ("1"-"6"), every colour listed."""
        return {str(c): self._collected[seat][c] for c in range(1, B.COLOURS + 1)}

    def board(self) -> list[int]:
        """The 49 cells row by row (0 empty, 1-6 colours)."""
        return self._board[: B.CELLS]

    @property
    def history(self) -> list[str]:
        return list(self._history)

    def setup(self) -> str:
        return self._setup

    def position(self) -> str:
        return B.format_board(self._board)

    def render(self) -> str:
        lines = [B.render(self._board)]
        pts = self.points()
        for seat, name in enumerate(SEATS):
            have = " ".join(
                f"{B.COLOUR_LETTERS[c]}{n}" for c, n in enumerate(self._collected[seat]) if n
            )
            lines.append(
                f"{name}: {pts[seat]} points, {sum(self._collected[seat])} balls"
                + (f" ({have})" if have else "")
            )
        if self._result is None:
            lines.append(f"to move: {SEATS[self._to_move]}")
        elif self._result.winner is None:
            lines.append("game over: draw")
        else:
            lines.append(f"game over: {SEATS[self._result.winner]} wins")
        return "\n".join(lines)

    def snapshot(self) -> dict[str, Any]:
        return {
            "game": self.name,
            "rules": self.rules,
            "rules_version": self.rules_version,
            "variant": self.variant,
            "seed": self._seed,
            "setup": self._setup,
            "moves": list(self._history),
            "board": self.position(),
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Self:
        """Rebuild by replaying the moves from the setup, checking the board matches."""
        game = cls.from_setup(data["setup"], rules=data.get("rules"), seed=data.get("seed"))
        for move in data.get("moves", []):
            game.play(move)
        if "board" in data and data["board"] != game.position():
            raise NotationError("snapshot board does not match its setup and moves")
        return game

    def view(self) -> dict[str, Any]:
        board = self.board()
        result = self._result
        return {
            "game": self.name,
            "rules": self.rules,
            "rules_version": self.rules_version,
            "variant": self.variant,
            "board": self.position(),
            "rows": [board[r * B.SIZE : (r + 1) * B.SIZE] for r in range(B.SIZE)],
            "colours": {str(c): B.COLOUR_NAMES[c] for c in range(1, B.COLOURS + 1)},
            "seats": list(SEATS),
            "to_move": self.to_move(),
            "collected": [self.collected(s) for s in range(len(SEATS))],
            "balls": self.balls(),
            "scores": self.points(),
            "legal": {
                "single": [] if result else list(self._singles),
                "double": [] if result else [list(d) for d in self._doubles],
            },
            "legal_moves": self.legal_moves(),
            "history": list(self._history),
            "result": None if result is None else result.to_dict(),
        }

    def copy(self) -> Self:
        other = object.__new__(type(self))
        other._setup = self._setup
        other._seed = self._seed
        other._board = list(self._board)
        other._collected = [list(c) for c in self._collected]
        other._to_move = self._to_move
        other._history = list(self._history)
        other._singles = list(self._singles)
        other._doubles = list(self._doubles)
        other._result = self._result
        return other
