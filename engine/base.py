"""The game-agnostic interface every game of the arena implements.

Rooms, bots, tournaments and the protocol only ever talk to a game through
:class:`Game`, so Collapsi and Collecto (and any later game) are hosted alike.
Moves and positions cross this boundary as text in the game's own notation;
each game keeps its fast internal representation (bit masks) to itself.

Pure Python: no I/O, no asyncio, no third-party imports.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self


class EngineError(Exception):
    """Base of every error the engine raises; ``code`` is stable for the wire."""

    code: ClassVar[str] = "engine_error"


class IllegalMove(EngineError):
    """A move that the rules do not allow here; the message says why."""

    code = "illegal_move"


class GameOver(IllegalMove):
    """A move was offered after the game ended."""

    code = "game_over"


class NotationError(EngineError):
    """Text that does not parse as a move, deal or position of this game."""

    code = "bad_notation"


class SetupError(EngineError):
    """An impossible setup: unknown rule set or variant, a deck that does not fit the board."""

    code = "bad_setup"


@dataclass(frozen=True, slots=True)
class Result:
    """How a game ended.

    ``winner`` is a seat index, or ``None`` for a draw (or a lost solo puzzle).
    ``order`` lists seats from first place to last; seats that tie share no
    order, so a draw lists seats in seat order. ``reason`` is one of
    ``no_moves`` (a player could not move), ``score`` (Collecto final count),
    ``solved``/``failed`` (solo puzzles), or the room's outcomes
    ``resign``, ``timeout``, ``abandon``, ``aborted``.
    ``scores`` holds per-seat numbers where the game has them (Collecto points).
    """

    winner: int | None
    order: tuple[int, ...]
    reason: str
    scores: tuple[int, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "winner": self.winner,
            "order": list(self.order),
            "reason": self.reason,
            "scores": None if self.scores is None else list(self.scores),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        scores = data.get("scores")
        return cls(
            winner=data["winner"],
            order=tuple(data["order"]),
            reason=data["reason"],
            scores=None if scores is None else tuple(scores),
        )

    @classmethod
    def forfeit(
        cls,
        loser: int,
        players: int,
        reason: str,
        alive: list[int] | None = None,
        out: list[int] | tuple[int, ...] = (),
    ) -> Result:
        """The result when ``loser`` resigns, times out or abandons.

        With two players the other one wins. With more, the remaining players
        in ``alive`` (default: everyone else) keep their seat order ahead of
        the loser, and the first of them is named winner; ``out`` (the seats
        eliminated before, first out first) follow the loser, the last out
        first (ruling 3: ranked by elimination time).
        """
        rest = [s for s in (alive if alive is not None else range(players)) if s != loser]
        order = (*rest, loser, *reversed([s for s in out if s != loser]))
        return cls(winner=rest[0] if rest else None, order=order, reason=reason)


@dataclass(slots=True)
class GameRecord:
    """Everything needed to replay a game to its identical final state."""

    game: str
    rules: str
    rules_version: str
    variant: str
    seed: int | None
    setup: str  # the initial position in the game's notation (the deal)
    players: list[str]
    moves: list[str] = field(default_factory=list)
    result: Result | None = None
    options: dict[str, Any] = field(default_factory=dict)
    #: players who went out by forfeit while the game went on (3-4 player games):
    #: ``{"seat", "ply", "reason"}``, out after ``ply`` moves; a forfeit that ended the
    #: game is not listed (it is the result). Left out of :meth:`to_dict` when empty.
    forfeits: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "game": self.game,
            "rules": self.rules,
            "rules_version": self.rules_version,
            "variant": self.variant,
            "seed": self.seed,
            "setup": self.setup,
            "players": list(self.players),
            "moves": list(self.moves),
            "result": None if self.result is None else self.result.to_dict(),
            "options": dict(self.options),
        }
        if self.forfeits:
            out["forfeits"] = [dict(f) for f in self.forfeits]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        result = data.get("result")
        return cls(
            game=data["game"],
            rules=data["rules"],
            rules_version=data["rules_version"],
            variant=data["variant"],
            seed=data.get("seed"),
            setup=data["setup"],
            players=list(data["players"]),
            moves=list(data.get("moves", [])),
            result=None if result is None else Result.from_dict(result),
            options=dict(data.get("options", {})),
            forfeits=[dict(f) for f in data.get("forfeits") or []],
        )


class Game(ABC):
    """One game in progress. Subclasses register themselves with :func:`register`.

    A game is created by :meth:`new` from (rules, variant, seed, options), or
    from an explicit setup string by :meth:`from_setup`; both are pure
    functions of their arguments, so every deal is reproducible.
    """

    #: registry name, e.g. ``"collapsi"``
    name: ClassVar[str]
    #: rule set names this game knows, the first is the default
    rule_sets: ClassVar[tuple[str, ...]]
    #: variant names this game knows, the first is the default
    variants: ClassVar[tuple[str, ...]]
    #: rule set name -> the published version of the rules it implements
    rules_versions: ClassVar[dict[str, str]]
    #: a player of three or more can go out while the others play on (:meth:`eliminate`);
    #: without, any forfeit ends the game
    eliminations: ClassVar[bool] = False

    @classmethod
    def version_of(cls, rules: str | None) -> str:
        """The rules version a game of rule set ``rules`` (None: the default) plays.

        Lets a room name its rules version before any game is dealt.
        """
        name = cls.rule_sets[0] if rules is None else rules
        try:
            return cls.rules_versions[name]
        except KeyError:
            raise SetupError(f"unknown rule set {name!r} for {cls.name}") from None

    # -- construction -------------------------------------------------------
    @classmethod
    @abstractmethod
    def new(
        cls,
        rules: str | None = None,
        variant: str | None = None,
        seed: int = 0,
        players: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> Self:
        """A fresh game dealt from ``seed``; raises :class:`SetupError`."""

    @classmethod
    @abstractmethod
    def from_setup(
        cls,
        setup: str,
        rules: str | None = None,
        variant: str | None = None,
        players: int | None = None,
        options: dict[str, Any] | None = None,
        seed: int | None = None,
    ) -> Self:
        """A fresh game from an explicit deal in the game's notation.

        ``seed`` is only carried along (for records) when the deal came from one.
        """

    # -- costly deals: a server deals these ahead, off its event loop -------
    @classmethod
    def deal_is_costly(cls, variant: str | None, options: dict[str, Any] | None) -> bool:
        """Can :meth:`new` take long for this variant (a search for a good deal, as
        ruling 7's solvable solo puzzles)?"""
        return False

    @classmethod
    def search_deal(
        cls,
        rules: str | None,
        variant: str | None,
        players: int | None,
        options: dict[str, Any] | None,
        seed: int,
    ) -> Any:
        """The costly part of :meth:`new` for these arguments, as a picklable answer
        that :meth:`remember_deal` takes in (in this process or another one) so that
        :meth:`new` is then quick. None when there is nothing costly."""
        return None

    @classmethod
    def remember_deal(
        cls,
        rules: str | None,
        variant: str | None,
        players: int | None,
        options: dict[str, Any] | None,
        seed: int,
        found: Any,
    ) -> None:
        """Take in :meth:`search_deal`'s answer (nothing to take in by default)."""
        return None

    # -- state --------------------------------------------------------------
    @property
    @abstractmethod
    def rules(self) -> str: ...

    @property
    @abstractmethod
    def rules_version(self) -> str: ...

    @property
    @abstractmethod
    def variant(self) -> str: ...

    @property
    @abstractmethod
    def seed(self) -> int | None: ...

    @property
    @abstractmethod
    def num_players(self) -> int: ...

    @abstractmethod
    def seat_names(self) -> list[str]:
        """Display names of the seats in turn order, e.g. ``["red", "blue"]``."""

    @abstractmethod
    def to_move(self) -> int | None:
        """Seat index of the player to move, ``None`` once the game is over."""

    @abstractmethod
    def legal_moves(self) -> list[str]:
        """Every legal move of the side to move, in notation, in a stable order."""

    @abstractmethod
    def play(self, move: str) -> None:
        """Apply ``move``; raises :class:`IllegalMove` (or :class:`NotationError`)."""

    @abstractmethod
    def result(self) -> Result | None:
        """The result once the game is over, else ``None``."""

    def is_over(self) -> bool:
        return self.result() is not None

    @property
    @abstractmethod
    def history(self) -> list[str]:
        """Moves played so far, in notation."""

    @abstractmethod
    def setup(self) -> str:
        """The initial position (the deal) in notation."""

    @abstractmethod
    def position(self) -> str:
        """The current position in the game's compact notation."""

    @abstractmethod
    def render(self) -> str:
        """A plain-text picture of the position for terminals and logs."""

    @abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """A JSON-able dict from which :meth:`restore` rebuilds the identical state."""

    @classmethod
    @abstractmethod
    def restore(cls, data: dict[str, Any]) -> Self: ...

    def view(self) -> dict[str, Any]:
        """A structured, JSON-able description of the position for clients.

        Games override this with richer data; the default is the snapshot.
        """
        return self.snapshot()

    def position_view_moves(self) -> tuple[str, dict[str, Any], list[str]]:
        """``(position(), view(), legal_moves())`` at once: what a server sends after
        every move. Games whose view holds the other two override this to compute
        each once."""
        return self.position(), self.view(), self.legal_moves()

    @abstractmethod
    def copy(self) -> Self: ...

    # -- eliminations (games of three or more) -----------------------------------
    def eliminated(self) -> list[int]:
        """Seats out of a game that goes on without them, first out first."""
        return []

    def eliminate(self, seat: int, reason: str) -> None:
        """Take ``seat`` out by forfeit (``reason``: resign, timeout, abandon) while at
        least two others play on; raises :class:`IllegalMove` where the game cannot
        (then a forfeit ends the game)."""
        raise IllegalMove(f"{self.name} has no eliminations: a forfeit ends the game")

    def forfeits(self) -> list[dict[str, Any]]:
        """The :meth:`eliminate` calls so far, for records: ``{"seat", "ply", "reason"}``."""
        return []

    # -- records ------------------------------------------------------------
    def record(self, players: list[str] | None = None, result: Result | None = None) -> GameRecord:
        """The game's record; ``result`` overrides the board's own (resign, timeout)."""
        return GameRecord(
            game=self.name,
            rules=self.rules,
            rules_version=self.rules_version,
            variant=self.variant,
            seed=self.seed,
            setup=self.setup(),
            players=list(players) if players is not None else self.seat_names(),
            moves=list(self.history),
            result=result if result is not None else self.result(),
            options=self.options(),
            forfeits=self.forfeits(),
        )

    def options(self) -> dict[str, Any]:
        """Extra construction options needed to rebuild this game (deck, size...)."""
        return {}


_REGISTRY: dict[str, type[Game]] = {}


def register(cls: type[Game]) -> type[Game]:
    """Class decorator: make a game available by its ``name``."""
    _REGISTRY[cls.name] = cls
    return cls


_builtins_loaded = False


def _load_builtin_games() -> None:
    # Imported lazily so ``engine.base`` has no import cycle with the games; once, so that
    # game_class() on every request runs no import statement.
    global _builtins_loaded
    if _builtins_loaded:
        return
    import engine.collapsi
    import engine.collecto  # noqa: F401

    _builtins_loaded = True


def game_names() -> list[str]:
    _load_builtin_games()
    return sorted(_REGISTRY)


def game_class(name: str) -> type[Game]:
    _load_builtin_games()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise SetupError(f"unknown game {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def new_game(
    name: str,
    rules: str | None = None,
    variant: str | None = None,
    seed: int = 0,
    players: int | None = None,
    options: dict[str, Any] | None = None,
) -> Game:
    """Create a game by registry name: the one entry point rooms and tournaments use."""
    return game_class(name).new(
        rules=rules, variant=variant, seed=seed, players=players, options=options
    )


def replay(record: GameRecord) -> Game:
    """Rebuild a game from its record by replaying every move (and every forfeit that
    took a player out while the game went on); raises on any illegal move."""
    *_, game = replay_steps(record)
    return game


def replay_steps(record: GameRecord) -> Iterator[Game]:
    """The game of ``record`` at its start and after each move, in order (the same
    object, changed in place: read what you need before taking the next step)."""
    cls = game_class(record.game)
    game = cls.from_setup(
        record.setup,
        rules=record.rules,
        variant=record.variant,
        players=len(record.players),
        options=record.options or None,
        seed=record.seed,
    )
    forfeits = sorted(record.forfeits, key=lambda f: f["ply"])  # stable: same ply in order
    for ply, move in enumerate([*record.moves, None]):
        while forfeits and forfeits[0]["ply"] == ply:
            f = forfeits.pop(0)
            game.eliminate(f["seat"], f.get("reason", "resign"))
        yield game
        if move is not None:
            game.play(move)
    if forfeits:
        raise IllegalMove(f"a forfeit after ply {forfeits[0]['ply']}, past the record's moves")
