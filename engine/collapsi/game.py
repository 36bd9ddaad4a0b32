"""The Collapsi game object: rules, variants, notation, records.

See the package docstring (:mod:`engine.collapsi`) for the rule sets, the
variant and option names and the notations.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Self

from engine.base import (
    Game,
    GameOver,
    IllegalMove,
    NotationError,
    Result,
    SetupError,
    register,
)
from engine.collapsi.board import SHIFTS, Board, Table, board
from engine.collapsi.deck import (
    BIG_BOARD,
    CARD_CHARS,
    PRESETS,
    SOLO_3X3,
    STANDARD_4X4,
    Deck,
    check_deal,
    deck_from_counts,
    format_deal,
    parse_deal,
    shuffled,
)
from engine.collapsi.position import JACK, Position

RULES_VERSIONS = {"standard": "1.3.1", "classic": "1.1.0"}
BOARD_KINDS = ("base", "big-board", "custom", "solo")
MODIFIERS = ("shifting", "players-choice")
SEAT_NAMES = ("red", "blue", "green", "yellow")
SOLO_SEAT = "player"

#: pawn value of a seat eliminated from a 3-4 player game (ruling 3)
OUT = -1
#: the Big Board house rule (ruling 3): a stuck player goes out and the others play on
ELIMINATION = "elimination"
#: pawn value of a seat that has not chosen its start yet (Player's Choice, ruling 6)
UNPLACED = -2

_COLLAPSED_CHARS = "jabcd"  # collapsed J, 1, 2, 3, 4 in the position notation
_MOVE_RE = re.compile(r"^\s*(\d+)\s*([<>^v]?)\s*$")


def _set_bits(mask: int) -> list[int]:
    """The cells of a cell mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def open_destinations(table: Table, collapsed: int, others: int) -> list[int]:
    """The destinations of one cell's step table (ruling 2) that some walk reaches past
    no collapsed card and that no other pawn (``others``) stands on."""
    out = []
    for d, dbit, masks in table:
        if dbit & others:
            continue
        for m in masks:
            if not m & collapsed:
                out.append(d)
                break
    return out


#: cell numbers as text, made once (views and histories name cells on every move)
_CELL_TEXT = tuple(str(c) for c in range(12 * 12))


# --------------------------------------------------------------------------- setup


@dataclass(frozen=True, slots=True)
class Spec:
    """Everything fixed at setup: rule set, variant, deck, player count."""

    rules: str
    kind: str
    shifting: bool
    choice: bool
    deck: Deck
    players: int
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def variant(self) -> str:
        mods = [m for m, on in zip(MODIFIERS, (self.shifting, self.choice), strict=True) if on]
        if self.kind == "base" and mods:
            return "+".join(mods)
        return "+".join([self.kind, *mods])

    @property
    def solo(self) -> bool:
        return self.kind == "solo"


def _parse_variant(variant: str | None) -> tuple[str, bool, bool]:
    text = (variant or "base").strip().lower()
    kind = None
    mods: set[str] = set()
    for tok in text.split("+"):
        tok = tok.strip().replace("_", "-")
        tok = {"bigboard": "big-board", "big": "big-board", "choice": "players-choice"}.get(
            tok, tok
        )
        if tok in BOARD_KINDS:
            if kind is not None and kind != tok:
                raise SetupError(f"variant {variant!r} names two boards ({kind}, {tok})")
            kind = tok
        elif tok in MODIFIERS:
            mods.add(tok)
        else:
            raise SetupError(
                f"unknown variant {tok!r}; boards: {', '.join(BOARD_KINDS)}; "
                f"combine with '+': {', '.join(MODIFIERS)}"
            )
    kind = kind or "base"
    if kind == "solo" and mods:
        # the solo puzzle is published without them; a shifting puzzle has too many
        # lines for the solvable-deal guarantee of ruling 7
        raise SetupError("solo puzzles combine with neither shifting nor players-choice")
    return kind, "shifting" in mods, "players-choice" in mods


_OPTION_KEYS = {"size", "preset", "deck", "width", "height", ELIMINATION}


def make_spec(
    rules: str | None,
    variant: str | None,
    players: int | None,
    options: dict[str, Any] | None,
    deal: tuple[list[int], int, int] | None = None,
    mid_game: bool = False,
) -> Spec:
    """Validate (rules, variant, players, options) into a :class:`Spec`.

    ``deal`` (cards, width, height) lets a custom or solo game take its deck
    and size from an explicit deal when the options do not name them.
    ``mid_game`` (a position, not a deal) lifts the jacks-per-player checks.
    """
    rules = (rules or "standard").strip().lower()
    if rules not in RULES_VERSIONS:
        raise SetupError(f"unknown rule set {rules!r}; known: standard, classic")
    kind, shifting, choice = _parse_variant(variant)
    opts = dict(options or {})
    unknown = set(opts) - _OPTION_KEYS
    if unknown:
        raise SetupError(f"unknown option(s) {sorted(unknown)}; known: {sorted(_OPTION_KEYS)}")
    norm: dict[str, Any] = {}
    house = opts.pop(ELIMINATION, False)
    if house not in (True, False):
        raise SetupError(f"option {ELIMINATION!r} is true or false, not {house!r}")
    if house and kind != "big-board":
        raise SetupError(f"option {ELIMINATION!r} is a house rule of the big-board variant")
    if kind in ("base", "big-board"):
        if opts:
            raise SetupError(
                f"variant {kind!r} takes no deck options; use 'custom' for other boards"
            )
        deck = STANDARD_4X4 if kind == "base" else BIG_BOARD
    elif kind == "solo":
        if set(opts) - {"size"}:
            raise SetupError("solo takes only the option 'size' (3 or 4)")
        size = opts.get("size")
        if size is None and deal is not None:
            size = deal[1]
        size = 3 if size is None else size
        if size not in (3, 4):
            raise SetupError(f"solo size must be 3 or 4, got {size!r}")
        deck = SOLO_3X3 if size == 3 else Deck(4, 4, STANDARD_4X4.counts)
        norm = {"size": size}
    else:  # custom (ruling 8)
        if "preset" in opts:
            if set(opts) - {"preset"}:
                raise SetupError("give either a preset or a deck, not both")
            name = str(opts["preset"])
            if name not in PRESETS:
                raise SetupError(f"unknown preset {name!r}; presets: {', '.join(PRESETS)}")
            deck = PRESETS[name]
            norm = {"preset": name}
        elif "deck" in opts:
            counts = opts["deck"]
            if not isinstance(counts, dict):
                raise SetupError('deck must be counts like {"J": 2, "1": 6, ...}')
            size = opts.get("size")
            width = opts.get("width", size)
            height = opts.get("height", size if size is not None else width)
            if width is None and deal is not None:
                width, height = deal[1], deal[2]
            if not isinstance(width, int) or not isinstance(height, int):
                raise SetupError("a custom deck needs the board 'size' or 'width' and 'height'")
            deck = deck_from_counts(width, height, counts)
            norm = {"width": width, "height": height, "deck": deck.to_dict()}
        elif deal is not None and not opts:
            cards, w, h = deal
            deck = Deck(w, h, tuple(cards.count(v) for v in range(5))).check()  # type: ignore[arg-type]
            norm = {"width": w, "height": h, "deck": deck.to_dict()}
        else:
            raise SetupError(
                "custom variant needs options {'preset': name} or {'deck': counts, 'size': n}; "
                f"presets: {', '.join(PRESETS)}"
            )
    # players
    if kind == "solo":
        if players not in (None, 1):
            raise SetupError("solo is a one-player puzzle")
        if deck.jacks != 2 and not mid_game:
            raise SetupError("a solo deck needs exactly two jacks (start and exit)")
        n = 1
    else:
        if kind == "base":
            lo, hi = 2, 2
        elif choice or mid_game:
            lo, hi = 2, 4
        else:
            lo, hi = 2, min(4, deck.jacks)
        n = 2 if players is None else players
        if not isinstance(n, int) or not lo <= n <= hi:
            if hi < lo:
                raise SetupError(f"this deck has {deck.jacks} jack(s); 2 players need 2")
            span = str(lo) if lo == hi else f"{lo}-{hi}"
            raise SetupError(f"the {kind!r} board is for {span} players, not {players}")
        if n > deck.size - (deck.jacks if choice else 0):
            raise SetupError("not enough cards for that many players")
    if house:  # ruling 3: never the default, so named only when on
        norm[ELIMINATION] = True
    return Spec(rules, kind, shifting, choice, deck, n, norm)


def _deal_key(spec: Spec, seed: int) -> str:
    # a house rule does not change the deal: one seed, one board, either way
    dealt = {k: v for k, v in spec.options.items() if k != ELIMINATION}
    return f"collapsi/{spec.variant}/{json.dumps(dealt, sort_keys=True)}/{seed}"


def deal_cards(spec: Spec, seed: int) -> list[int]:
    """The deal of ``spec`` for ``seed``: a pure function of (variant, options, seed).

    The rule set does not enter the shuffle, so one seed gives the same board
    under both rule sets (handy for comparing them; ruling 9 only asks purity).
    Solo deals are redrawn (deterministically) until solvable (ruling 7).
    """
    base_key = _deal_key(spec, seed)
    if not spec.solo:
        return shuffled(spec.deck, base_key)
    return shuffled(spec.deck, f"{base_key}/{solo_attempt(spec, seed)}")


#: solo deals searched: (rules, deal key) -> the first solvable redraw (ruling 7). The
#: search takes up to about a second on 4x4, so a server runs it in a worker process
#: and hands the answer in (:meth:`CollapsiGame.remember_deal`): its loop never
#: searches. Bounded; the oldest answers go first (they are only a cache).
_SOLO_FOUND: dict[str, int] = {}
SOLO_FOUND_MAX = 4096


def solo_attempt(spec: Spec, seed: int) -> int:
    """Which redraw of ``seed``'s solo deal is the first solvable one (a search, once)."""
    base_key = _deal_key(spec, seed)
    found = _SOLO_FOUND.get(f"{spec.rules}|{base_key}")
    if found is not None:
        return found
    for attempt in range(10_000):
        cards = shuffled(spec.deck, f"{base_key}/{attempt}")
        if solo_solvable(CollapsiGame._build(spec, cards, None, "")):
            remember_solo_attempt(spec, seed, attempt)
            return attempt
    raise SetupError("no solvable solo deal found")  # pragma: no cover


def remember_solo_attempt(spec: Spec, seed: int, attempt: int) -> None:
    """Take in :func:`solo_attempt`'s answer found elsewhere (trusted: the caller's own
    worker computed it with this very function)."""
    if len(_SOLO_FOUND) >= SOLO_FOUND_MAX:
        _SOLO_FOUND.pop(next(iter(_SOLO_FOUND)))
    _SOLO_FOUND[f"{spec.rules}|{_deal_key(spec, seed)}"] = attempt


# --------------------------------------------------------------------------- game


@register
class CollapsiGame(Game):
    """Collapsi by Mark S. Ball; see :mod:`engine.collapsi` for the notations."""

    name = "collapsi"
    rule_sets = ("standard", "classic")
    rules_versions = RULES_VERSIONS
    variants = ("base", "big-board", "shifting", "players-choice", "solo", "custom")
    eliminations = True  # ruling 3: with 3-4 players a forfeiter goes out, the others play on

    _spec: Spec
    _board: Board
    _tables: tuple[tuple[Table, ...], ...]  # by card value: step table per cell
    _cards: list[int]
    _collapsed: int
    _pawns: list[int]
    _occupied: int
    _turn: int
    _eliminated: list[int]
    _forfeits: list[dict[str, Any]]  # eliminations by forfeit, for records
    _result: Result | None
    _legal: list[int]
    _history: list[int | str]  # plain moves as ints, shifted ones as text
    _variant: str
    _solo: bool
    _plain_off: bool  # solo or shifting: no inlined fast path
    _shifting: bool
    _elimination: bool  # the Big Board house rule (ruling 3)
    _undo: list[tuple]
    _exit: int
    _seed: int | None
    _setup: str

    # -- construction -------------------------------------------------------
    @classmethod
    def new(
        cls,
        rules: str | None = None,
        variant: str | None = None,
        seed: int = 0,
        players: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> Self:
        spec = make_spec(rules, variant, players, options)
        cards = deal_cards(spec, seed)
        return cls._build(spec, cards, seed, format_deal(cards, spec.deck.width, spec.deck.height))

    @classmethod
    def deal_is_costly(cls, variant: str | None, options: dict[str, Any] | None) -> bool:
        try:
            return _parse_variant(variant)[0] == "solo"  # (ruling 7: a searched deal)
        except SetupError:
            return False

    @classmethod
    def search_deal(
        cls,
        rules: str | None,
        variant: str | None,
        players: int | None,
        options: dict[str, Any] | None,
        seed: int,
    ) -> int | None:
        spec = make_spec(rules, variant, players, options)
        return solo_attempt(spec, seed) if spec.solo else None

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
        spec = make_spec(rules, variant, players, options)
        if spec.solo and isinstance(found, int):
            remember_solo_attempt(spec, seed, found)

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
        """A game from a deal (``J1234...``) or from a position (see :meth:`position`)."""
        if " " in setup.strip():
            return cls.from_position(setup, rules, variant, players, options, seed=seed)
        width = None
        if options and isinstance(options.get("width"), int):
            width = options["width"]
        parsed = parse_deal(setup, width)
        spec = make_spec(rules, variant, players, options, deal=parsed)
        cards, w, h = parsed
        check_deal(cards, w, h, spec.deck)
        if spec.deck.jacks < (0 if spec.choice else spec.players):
            raise SetupError(f"deal has {spec.deck.jacks} jack(s) for {spec.players} players")
        return cls._build(spec, cards, seed, format_deal(cards, w, h))

    @classmethod
    def _blank(cls, spec: Spec, cards: list[int], seed: int | None) -> Self:
        """A game with everything but the pawns, collapsed cards and turn set up."""
        self = object.__new__(cls)
        self._spec = spec
        self._variant = spec.variant  # a computed name: once per game, not per view()
        self._solo = spec.solo
        self._shifting = spec.shifting
        self._plain_off = spec.solo or spec.shifting
        self._elimination = bool(spec.options.get(ELIMINATION))
        self._board = board(spec.deck.width, spec.deck.height)
        self._tables = _tables_for(self._board, spec.rules)
        self._cards = list(cards)
        self._face: list[str] | None = None  # the cards face up as text (_face_up)
        self._seed = seed
        self._history = []
        self._undo = []
        self._eliminated = []
        self._forfeits = []
        self._result = None
        self._legal = []
        self._turn = 0
        self._exit = -1
        return self

    @classmethod
    def _build(cls, spec: Spec, cards: list[int], seed: int | None, setup: str) -> Self:
        self = cls._blank(spec, cards, seed)
        self._setup = setup
        jacks = [i for i, v in enumerate(cards) if v == JACK]
        collapsed = 0
        if spec.choice:
            # ruling 6: every jack collapses; each player then picks a start card
            pawns = [UNPLACED] * spec.players
            for j in jacks:
                collapsed |= 1 << j
        else:
            pawns = jacks[: spec.players]
            if spec.solo:
                self._exit = jacks[1]  # ruling 7: the second jack is the exit
                used = 2
            else:
                used = spec.players
            for j in jacks[used:]:  # ruling 4: unused jacks are turned face down
                collapsed |= 1 << j
        self._pawns = pawns
        self._collapsed = collapsed
        self._occupied = sum(1 << p for p in pawns if p >= 0)
        self._settle()
        return self

    # -- fast API for bots ------------------------------------------------------
    def legal_cells(self) -> list[int]:
        """Legal destination cells of the side to move (start cells while placing).

        The list is owned by the game: do not mutate it. In Shifting Board each
        cell is playable with any of the four shifts.
        """
        return self._legal

    def play_cell(self, dest: int, shift: int = -1) -> None:
        """Play to cell ``dest``; in Shifting Board ``shift`` indexes ``"<>^v"``."""
        if self._result is not None:
            raise GameOver("the game is over")
        if dest not in self._legal:
            raise IllegalMove(self._why_illegal(dest))
        if shift == -1 and not self._shifting:  # the common case, kept fast
            self._advance(dest, -1)
            self._history.append(dest)
            return
        placing = self._pawns[self._turn] == UNPLACED
        if self._spec.shifting and not placing:
            if not 0 <= shift < 4:
                raise IllegalMove(
                    "Shifting Board: a move is a destination plus a shift (<, >, ^ or v)"
                )
            note = f"{dest}{SHIFTS[shift]}"
        else:
            if shift != -1:
                raise IllegalMove(
                    "no shift here: "
                    + ("start cells are chosen without one" if placing else "not Shifting Board")
                )
            note = str(dest)
        self._advance(dest, shift)
        self._history.append(note)

    def undo(self) -> None:
        """Take back the last move (cheap: restores a few ints)."""
        if not self._undo:
            raise IllegalMove("nothing to undo")
        (
            cards,
            self._collapsed,
            pawns,
            self._occupied,
            self._turn,
            n_elim,
            self._result,
            self._legal,
            self._exit,
        ) = self._undo.pop()
        if cards is not None:
            self._cards = cards
        self._pawns = list(pawns)
        del self._eliminated[n_elim:]
        self._history.pop()

    def steps(self) -> str:
        """How far the side to move must go: ``"1"``.. ``"4"``, ``"1-4"`` (classic joker),
        ``"place"`` (choosing a start) or ``""`` once over."""
        if self._result is not None:
            return ""
        cell = self._pawns[self._turn]
        if cell == UNPLACED:
            return "place"
        v = self._cards[cell]
        if v == JACK:
            return "1-4" if self._spec.rules == "classic" else "1"
        return str(v)

    def paths(self) -> dict[int, list[int]]:
        """A witnessing path (cells from start to destination) for every legal destination:
        ``path_to(d)`` for each, found in one pass over the walks."""
        legal = self._legal
        start = self._pawns[self._turn]
        if start == UNPLACED or not legal:
            return {d: self.path_to(d) for d in legal}
        if not self._spec.solo:  # the common case: each destination's first free walk
            collapsed = self._collapsed
            out: dict[int, list[int]] = {}
            lengths = self._lengths(start)
            if len(lengths) == 1:
                walks = self._board.walks_by_dest(start, lengths[0])
                for d in legal:
                    for entered, walk in walks[d]:
                        if not entered & collapsed:
                            out[d] = list(walk)
                            break
                return out
            by_length = [self._board.walks_by_dest(start, k) for k in lengths]
            for d in legal:
                out[d] = next(
                    list(walk)
                    for walks in by_length
                    for entered, walk in walks.get(d, ())
                    if not entered & collapsed
                )
            return out
        found: dict[int, list[int]] = {}
        blocked = self._collapsed
        door = self._spec.solo and self._exit in legal
        if self._spec.solo:
            blocked |= 1 << self._exit
        wanted = len(legal) - door
        for k in self._lengths(start):
            for dest, entered, walk in self._board.walk_list(start, k):
                if not entered & blocked and dest not in found and dest in legal:
                    found[dest] = list(walk)
                    if len(found) == wanted:
                        break
            if len(found) == wanted:
                break
        if door:
            found[self._exit] = self.path_to(self._exit)
        return {d: found[d] for d in legal}

    def path_to(self, dest: int) -> list[int]:
        """One legal path from the mover's cell to ``dest`` (for animation): the first
        walk to it in :meth:`Board.walks` order (shortest first for a classic jack)."""
        if dest not in self._legal:
            raise IllegalMove(self._why_illegal(dest))
        start = self._pawns[self._turn]
        if start == UNPLACED:
            return [dest]
        blocked = self._collapsed
        lengths = self._lengths(start)
        walks = self._board.walk_list
        if self._spec.solo:
            if dest == self._exit:  # shortest door walk
                for k in range(1, max(lengths) + 1):
                    for d, entered, walk in walks(start, k):
                        if d == dest and not entered & blocked:
                            return list(walk)
            blocked |= 1 << self._exit
        for k in lengths:
            for d, entered, walk in walks(start, k):
                if d == dest and not entered & blocked:
                    return list(walk)
        raise AssertionError("a legal destination without a path")  # pragma: no cover

    # -- internals --------------------------------------------------------------
    def _lengths(self, cell: int) -> list[int]:
        v = self._cards[cell]
        if v == JACK:
            return [1, 2, 3, 4] if self._spec.rules == "classic" else [1]
        return [v]

    def _gen(self, seat: int) -> list[int]:
        cell = self._pawns[seat]
        collapsed = self._collapsed
        if cell >= 0 and not self._solo:  # the common case, kept fast
            others = self._occupied ^ (1 << cell)
            return open_destinations(self._tables[self._cards[cell]][cell], collapsed, others)
        if cell == UNPLACED:
            free = collapsed | self._occupied
            return [c for c in range(self._board.cells) if not free >> c & 1]
        table = self._tables[self._cards[cell]][cell]
        others = self._occupied ^ (1 << cell)
        # solo: the exit is not a waypoint
        out = open_destinations(table, collapsed | (1 << self._exit), others)
        if self._can_exit(cell):
            out.append(self._exit)
            out.sort()
        return out

    def _can_exit(self, cell: int) -> bool:
        """Solo: can the pawn reach the exit within its step count (a door: ruling 7)."""
        v = self._cards[cell]
        k = 4 if v == JACK and self._spec.rules == "classic" else max(v, 1)
        for d, _dbit, masks in self._board.upto[k][cell]:
            if d == self._exit:
                return any(not m & self._collapsed for m in masks)
        return False

    def _advance(self, dest: int, shift: int) -> None:
        """Apply a legal move (no checks) and settle whose turn it is."""
        pawns = self._pawns
        seat = self._turn
        self._undo.append(
            (
                list(self._cards) if self._shifting else None,
                self._collapsed,
                tuple(pawns),
                self._occupied,
                seat,
                len(self._eliminated),
                self._result,
                self._legal,
                self._exit,
            )
        )
        src = pawns[seat]
        if src >= 0 and not self._plain_off:
            # the common case (no shift, no solo exit), inlined for bots and playouts;
            # ruling 3: the starting card collapses after the move
            collapsed = self._collapsed | (1 << src)
            self._collapsed = collapsed
            occupied = self._occupied ^ ((1 << src) | (1 << dest))
            self._occupied = occupied
            pawns[seat] = dest
            nxt = seat + 1
            n = len(pawns)
            if nxt == n:
                nxt = 0
            while pawns[nxt] == OUT:
                nxt = (nxt + 1) % n
            self._turn = nxt
            cell = pawns[nxt]
            others = occupied ^ (1 << cell)
            out = []
            for d, dbit, masks in self._tables[self._cards[cell]][cell]:
                if dbit & others:
                    continue
                for m in masks:
                    if not m & collapsed:
                        out.append(d)
                        break
            if out:
                self._legal = out
            else:
                self._settle()
            return
        if src == UNPLACED:
            pawns[seat] = dest
            self._occupied |= 1 << dest
        else:
            # ruling 3: the starting card collapses after the move
            self._collapsed |= 1 << src
            self._occupied ^= (1 << src) | (1 << dest)
            pawns[seat] = dest
            if self._shifting:
                self._shift(dest, shift)
                pawns = self._pawns
            if self._solo and pawns[0] == self._exit:
                # ruling 7: won if every card but the exit has collapsed, else lost
                if self._collapsed | (1 << self._exit) == self._board.full:
                    self._result = Result(winner=0, order=(0,), reason="solved")
                else:
                    self._result = Result(winner=None, order=(0,), reason="failed")
                self._legal = []
                return
        n = len(pawns)
        nxt = (seat + 1) % n
        while pawns[nxt] == OUT:
            nxt = (nxt + 1) % n
        self._turn = nxt
        legal = self._gen(nxt)
        if legal:
            self._legal = legal
        else:
            self._settle()

    def _shift(self, dest: int, shift: int) -> None:
        # ruling 5: rotate the landing card's row or column one space; gaps and
        # pawns travel with their cards
        perm = self._board.shift[shift][dest]
        cards = self._cards
        new = [0] * len(cards)
        collapsed = 0
        old_c = self._collapsed
        for i, j in enumerate(perm):
            new[j] = cards[i]
            if old_c >> i & 1:
                collapsed |= 1 << j
        self._cards = new
        self._collapsed = collapsed
        self._pawns = [p if p < 0 else perm[p] for p in self._pawns]
        self._occupied = sum(1 << p for p in self._pawns if p >= 0)
        if self._exit >= 0:
            self._exit = perm[self._exit]

    def _settle(self) -> None:
        """Find the legal moves of the side to move; a stuck player ends the game
        (ruling 3), or goes out under the Big Board house rule ``elimination``."""
        pawns = self._pawns
        while True:
            seat = self._turn
            legal = self._gen(seat)
            if legal:
                self._legal = legal
                return
            self._legal = []
            if self._solo:
                self._result = Result(winner=None, order=(0,), reason="failed")
                return
            n = len(pawns)
            alive = [s for s in range(n) if pawns[s] != OUT]
            if len(alive) <= 2 or not self._elimination:
                # ruling 3: the game ends at once; the last player to move wins
                order = self._stuck_order(seat)
                self._result = Result(winner=order[0], order=order, reason="no_moves")
                return
            # house rule `elimination` (ruling 3) with 3-4 players: the stuck player is out
            # (their card stays face up, since they did not move); play goes on
            if pawns[seat] >= 0:
                self._occupied &= ~(1 << pawns[seat])
            pawns[seat] = OUT
            self._eliminated.append(seat)
            nxt = (seat + 1) % n
            while pawns[nxt] == OUT:
                nxt = (nxt + 1) % n
            self._turn = nxt

    def _stuck_order(self, stuck: int) -> tuple[int, ...]:
        """The finishing order when ``stuck`` cannot move (ruling 3): the players still
        in by how recently each completed a move, the stuck player last, then those out
        (by forfeit, or stuck under ``elimination``), the earliest out last.

        Turns go round the players still in, in seat order, so walking back from the
        stuck seat meets them from the most recent mover to the least recent (a player
        who never moved, at the start, ranks as if their move was before the first).
        """
        n = len(self._pawns)
        recent = [s for s in ((stuck - k) % n for k in range(1, n)) if self._pawns[s] != OUT]
        return (*recent, stuck, *reversed(self._eliminated))

    def _why_illegal(self, dest: int) -> str:
        b = self._board
        if not isinstance(dest, int) or not 0 <= dest < b.cells:
            return f"cell {dest} is off the board (0..{b.cells - 1})"
        seat = self._turn
        start = self._pawns[seat]
        if self._collapsed >> dest & 1:
            return f"cell {dest} has collapsed"
        if start == UNPLACED:
            return f"cell {dest} already holds a pawn"
        if dest == start:
            return f"cell {dest} is the starting card; a move may not end there (ruling 2)"
        if self._occupied >> dest & 1:
            return f"cell {dest} holds another pawn; a move may pass it but not end there"
        return (
            f"no path of {self.steps()} step(s) from cell {start} to cell {dest} "
            "that avoids collapsed cards and enters no card twice"
        )

    # -- Game interface ---------------------------------------------------------
    @property
    def rules(self) -> str:
        return self._spec.rules

    @property
    def rules_version(self) -> str:
        return RULES_VERSIONS[self._spec.rules]

    @property
    def variant(self) -> str:
        return self._variant

    @property
    def seed(self) -> int | None:
        return self._seed

    @property
    def num_players(self) -> int:
        return self._spec.players

    @property
    def width(self) -> int:
        return self._board.width

    @property
    def height(self) -> int:
        return self._board.height

    @property
    def board(self) -> Board:
        return self._board

    @property
    def exit_cell(self) -> int | None:
        """Solo: the exit card's cell (it moves in Shifting Board)."""
        return self._exit if self._spec.solo else None

    def seat_names(self) -> list[str]:
        if self._spec.solo:
            return [SOLO_SEAT]
        return list(SEAT_NAMES[: self._spec.players])

    def to_move(self) -> int | None:
        return None if self._result is not None else self._turn

    def legal_moves(self) -> list[str]:
        if self._result is not None:
            return []
        if self._spec.shifting and self._pawns[self._turn] != UNPLACED:
            return [f"{d}{s}" for d in self._legal for s in SHIFTS]
        text = _CELL_TEXT
        return [text[d] for d in self._legal]

    def parse_move(self, move: str) -> tuple[int, int]:
        """``"5"`` -> (5, -1); ``"5>"`` -> (5, 1). Raises :class:`NotationError`."""
        if isinstance(move, str) and move.isascii() and move.isdigit():  # the common case
            return int(move), -1
        m = _MOVE_RE.match(str(move))
        if not m:
            raise NotationError(
                f"bad move {move!r}: a move is a destination cell number"
                + (" plus a shift < > ^ v" if self._spec.shifting else "")
            )
        return int(m.group(1)), SHIFTS.index(m.group(2)) if m.group(2) else -1

    def play(self, move: str) -> None:
        dest, shift = self.parse_move(move)
        self.play_cell(dest, shift)

    def result(self) -> Result | None:
        return self._result

    def eliminated(self) -> list[int]:
        return list(self._eliminated)

    def forfeits(self) -> list[dict[str, Any]]:
        return [dict(f) for f in self._forfeits]

    def eliminate(self, seat: int, reason: str) -> None:
        """``seat`` forfeits (resigns, times out, abandons) a game of 3-4 players in which
        at least two others are still in: they are out as a stuck player is (ruling 3,
        ranked by when they went out; their card stays face up) and play goes on. On
        their turn the turn passes to the next player in (who may be stuck in turn).
        A forfeit cannot be taken back (:meth:`undo` stops here)."""
        if self._result is not None:
            raise GameOver("the game is over")
        pawns = self._pawns
        if self._solo or not isinstance(seat, int) or not 0 <= seat < len(pawns):
            raise IllegalMove(f"no seat {seat!r} to eliminate")
        if pawns[seat] == OUT:
            raise IllegalMove(f"seat {seat} is already out")
        alive = [s for s in range(len(pawns)) if pawns[s] != OUT]
        if len(alive) < 3:
            raise IllegalMove("with two players in, a forfeit ends the game")
        self._forfeits.append({"seat": seat, "ply": len(self._history), "reason": reason})
        self._undo.clear()
        if pawns[seat] >= 0:
            self._occupied &= ~(1 << pawns[seat])
        pawns[seat] = OUT
        self._eliminated.append(seat)
        if self._turn == seat:
            nxt = (seat + 1) % len(pawns)
            while pawns[nxt] == OUT:
                nxt = (nxt + 1) % len(pawns)
            self._turn = nxt
            self._settle()
        else:  # the mover may now end on the freed card
            self._legal = self._gen(self._turn)

    @property
    def history(self) -> list[str]:
        text = _CELL_TEXT  # plain moves are kept as ints
        return [text[m] if type(m) is int else m for m in self._history]

    def setup(self) -> str:
        return self._setup

    def options(self) -> dict[str, Any]:
        return dict(self._spec.options)

    def copy(self) -> Self:
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._cards = list(self._cards)
        other._pawns = list(self._pawns)
        other._eliminated = list(self._eliminated)
        other._forfeits = list(self._forfeits)
        other._history = list(self._history)
        other._undo = list(self._undo)
        return other

    # -- positions ----------------------------------------------------------------
    def _face_up(self) -> list[str]:
        """Every card as text, face up (not to be changed): made once per game, as the
        cards never move but in Shifting Board."""
        if self._shifting:
            return [CARD_CHARS[v] for v in self._cards]
        if self._face is None:
            self._face = [CARD_CHARS[v] for v in self._cards]
        return self._face

    def to_position(self) -> Position:
        """The primitive :class:`Position` (unplaced or eliminated seats are -1)."""
        return Position(
            rules=self._spec.rules,
            width=self._board.width,
            height=self._board.height,
            cards=tuple(self._cards),
            collapsed=self._collapsed,
            pawns=tuple(p if p >= 0 else -1 for p in self._pawns),
            to_move=self._turn,
        )

    def position(self) -> str:
        """The compact position notation (ruling 9), e.g. ``"J1a2/3c4J/1234/2314 0,7 0"``.

        Three space-separated fields: the board one character per card, rows
        separated by ``/`` (face up ``J1234``; collapsed ``j a b c d`` for J, 1, 2,
        3, 4); the pawns' cells in seat order (``?`` not yet placed in Player's
        Choice, ``xN`` eliminated as the N-th player out); the seat to move.
        """
        chars = list(self._face_up())
        cards = self._cards
        for i in _set_bits(self._collapsed):
            chars[i] = _COLLAPSED_CHARS[cards[i]]
        w = self._board.width
        rows = ["".join(chars[r * w : (r + 1) * w]) for r in range(self._board.height)]
        marks = []
        for s, p in enumerate(self._pawns):
            if p == UNPLACED:
                marks.append("?")
            elif p == OUT:
                marks.append(f"x{self._eliminated.index(s) + 1}")
            else:
                marks.append(str(p))
        return f"{'/'.join(rows)} {','.join(marks)} {self._turn}"

    @classmethod
    def from_position(
        cls,
        text: str | Position,
        rules: str | None = None,
        variant: str | None = None,
        players: int | None = None,
        options: dict[str, Any] | None = None,
        seed: int | None = None,
    ) -> Self:
        """A game starting from a position string (or a :class:`Position`).

        The game's :meth:`setup` is then that position, so records replay.
        """
        if isinstance(text, Position):
            return cls._from_primitive(text, variant, options)
        parts = text.split()
        if len(parts) != 3:
            raise NotationError(f"position {text!r}: expected 'BOARD PAWNS TO_MOVE'")
        board_text, pawn_text, turn_text = parts
        rows = board_text.split("/")
        if len(rows) == 1:  # a square board may be written without '/'
            side = math.isqrt(len(board_text))
            if side * side != len(board_text):
                raise NotationError(f"position {text!r}: separate the board's rows with '/'")
            rows = [board_text[i : i + side] for i in range(0, len(board_text), side)]
        w = len(rows[0])
        if any(len(r) != w for r in rows):
            raise NotationError(f"position {text!r}: rows have different lengths")
        flat = "".join(rows)
        cards: list[int] = []
        collapsed = 0
        for i, ch in enumerate(flat):
            if ch in CARD_CHARS:
                cards.append(CARD_CHARS.index(ch))
            elif ch in _COLLAPSED_CHARS:
                cards.append(_COLLAPSED_CHARS.index(ch))
                collapsed |= 1 << i
            else:
                raise NotationError(f"position {text!r}: bad card {ch!r}")
        h = len(rows)
        parsed = (cards, w, h)
        pawns: list[int] = []
        out_rank: dict[int, int] = {}
        for s, mark in enumerate(pawn_text.split(",")):
            if mark == "?":
                pawns.append(UNPLACED)
            elif mark.startswith("x") and mark[1:].isdigit():
                pawns.append(OUT)
                out_rank[s] = int(mark[1:])
            elif mark.isdigit() and int(mark) < w * h:
                pawns.append(int(mark))
            else:
                raise NotationError(f"position {text!r}: bad pawn {mark!r}")
        if not turn_text.isdigit() or int(turn_text) >= len(pawns):
            raise NotationError(f"position {text!r}: bad seat to move {turn_text!r}")
        spec = make_spec(rules, variant, players or len(pawns), options, deal=parsed, mid_game=True)
        if len(pawns) != spec.players:
            raise SetupError(f"position has {len(pawns)} pawns, variant needs {spec.players}")
        check_deal(cards, w, h, spec.deck)
        eliminated = sorted(out_rank, key=out_rank.__getitem__)
        if sorted(out_rank.values()) != list(range(1, len(out_rank) + 1)):
            raise NotationError(f"position {text!r}: elimination ranks must be 1..N")
        if UNPLACED in pawns and not spec.choice:
            raise SetupError("unplaced pawns ('?') only exist in players-choice")
        return cls._assemble(spec, cards, collapsed, pawns, int(turn_text), eliminated, seed, text)

    @classmethod
    def _from_primitive(
        cls, pos: Position, variant: str | None, options: dict[str, Any] | None
    ) -> Self:
        spec = make_spec(
            pos.rules,
            variant,
            len(pos.pawns),
            options,
            deal=(list(pos.cards), pos.width, pos.height),
            mid_game=True,
        )
        pawns = list(pos.pawns)
        eliminated = [s for s, p in enumerate(pawns) if p < 0]
        if eliminated and spec.choice:
            pawns = [UNPLACED if p < 0 else p for p in pawns]
            eliminated = []
        game = cls._assemble(
            spec, list(pos.cards), pos.collapsed, pawns, pos.to_move, eliminated, None, ""
        )
        game._setup = game.position()
        return game

    @classmethod
    def _assemble(
        cls,
        spec: Spec,
        cards: list[int],
        collapsed: int,
        pawns: list[int],
        turn: int,
        eliminated: list[int],
        seed: int | None,
        setup: str,
    ) -> Self:
        self = cls._blank(spec, cards, seed)
        self._collapsed = collapsed
        self._pawns = list(pawns)
        placed = [p for p in pawns if p >= 0]
        if len(set(placed)) != len(placed):
            raise SetupError("two pawns on one card")
        if any(collapsed >> p & 1 for p in placed):
            raise SetupError("a pawn stands on a collapsed card")
        if pawns[turn] == OUT:
            raise SetupError("the seat to move is out of the game")
        self._occupied = sum(1 << p for p in placed)
        self._turn = turn
        self._eliminated = list(eliminated)
        if spec.solo:
            jacks = [i for i, v in enumerate(cards) if v == JACK and not collapsed >> i & 1]
            others = [j for j in jacks if j != pawns[0]]
            self._exit = others[0] if others else pawns[0]
            if self._exit == pawns[0]:
                solved = collapsed | (1 << self._exit) == self._board.full
                self._result = Result(
                    winner=0 if solved else None,
                    order=(0,),
                    reason="solved" if solved else "failed",
                )
        if self._result is None:
            self._settle()
        self._setup = self.position()
        return self

    # -- text and structured views ---------------------------------------------
    def render(self) -> str:
        """A plain-text board: ``R3`` red pawn on a 3, ``.`` collapsed, ``E`` solo exit."""
        letters = "P" if self._spec.solo else "RBGY"
        w = self._board.width
        lines = []
        for r in range(self._board.height):
            cells = []
            for q in range(w):
                i = r * w + q
                if self._collapsed >> i & 1:
                    cells.append(" .")
                    continue
                mark = " "
                for s, p in enumerate(self._pawns):
                    if p == i:
                        mark = letters[s]
                if self._spec.solo and i == self._exit and mark == " ":
                    mark = "E"
                cells.append(mark + CARD_CHARS[self._cards[i]])
            lines.append(" ".join(cells))
        names = self.seat_names()
        if self._result is not None:
            res = self._result
            if self._spec.solo:
                lines.append(f"puzzle {res.reason}")
            else:
                lines.append(
                    f"{names[res.winner]} wins ({res.reason}); order: "
                    + ", ".join(names[s] for s in res.order)
                )
        else:
            steps = self.steps()
            what = "choose a start card" if steps == "place" else f"move {steps}"
            lines.append(f"{names[self._turn]} to {what}")
        return "\n".join(lines)

    def view(self) -> dict[str, Any]:
        """Structured data for clients: cards, collapsed cells, pawns, turn, moves, paths."""
        names = self.seat_names()
        over = self._result is not None
        placing = not over and self._pawns[self._turn] == UNPLACED
        return {
            "game": self.name,
            "rules": self.rules,
            "rules_version": self.rules_version,
            "variant": self.variant,
            "width": self._board.width,
            "height": self._board.height,
            "cards": list(self._face_up()),
            "collapsed": _set_bits(self._collapsed),
            "pawns": [p if p >= 0 else None for p in self._pawns],
            "seats": names,
            "eliminated": list(self._eliminated),
            "exit": self.exit_cell,
            "phase": "over" if over else ("place" if placing else "move"),
            "to_move": None if over else self._turn,
            "steps": self.steps(),
            "legal_moves": self.legal_moves(),
            "legal_cells": list(self._legal) if not over else [],
            "paths": {_CELL_TEXT[d]: p for d, p in self.paths().items()} if not over else {},
            "position": self.position(),
            "history": self.history,
            "result": None if self._result is None else self._result.to_dict(),
        }

    def position_view_moves(self) -> tuple[str, dict[str, Any], list[str]]:
        view = self.view()  # it holds the position and the legal moves
        return view["position"], view, view["legal_moves"]

    def snapshot(self) -> dict[str, Any]:
        return {
            "game": self.name,
            "rules": self.rules,
            "variant": self.variant,
            "players": self.num_players,
            "options": self.options(),
            "seed": self._seed,
            "setup": self._setup,
            "moves": self.history,
            "forfeits": self.forfeits(),
            "position": self.position(),
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Self:
        game = cls.from_setup(
            data["setup"],
            rules=data["rules"],
            variant=data["variant"],
            players=data.get("players"),
            options=data.get("options") or None,
            seed=data.get("seed"),
        )
        forfeits = list(data.get("forfeits") or [])
        for ply, move in enumerate([*data.get("moves", []), None]):
            while forfeits and forfeits[0]["ply"] == ply:
                f = forfeits.pop(0)
                game.eliminate(f["seat"], f.get("reason", "resign"))
            if move is not None:
                game.play(move)
        if "position" in data and game.position() != data["position"]:
            raise NotationError("snapshot does not replay to its recorded position")
        return game


_TABLE_CACHE: dict[tuple[int, int, str], tuple[tuple[Table, ...], ...]] = {}


def _tables_for(b: Board, rules: str) -> tuple[tuple[Table, ...], ...]:
    """Step tables indexed by card value: a jack moves 1 (standard) or 1-4 (classic)."""
    key = (b.width, b.height, rules)
    tables = _TABLE_CACHE.get(key)
    if tables is None:
        jack = b.upto[4] if rules == "classic" else b.exact[1]
        tables = (jack, b.exact[1], b.exact[2], b.exact[3], b.exact[4])
        _TABLE_CACHE[key] = tables
    return tables


def solo_count(game: CollapsiGame) -> tuple[int, int]:
    """Solo: (winning lines, all complete lines) from this position, by full search.

    Memoised on (collapsed cards, pawn): solo combines with no modifier, so the
    cards and the exit never move and that is the whole state. The game is
    restored before returning.
    """
    memo: dict[tuple[int, int], tuple[int, int]] = {}

    def count() -> tuple[int, int]:
        res = game._result
        if res is not None:
            return (1 if res.reason == "solved" else 0), 1
        key = (game._collapsed, game._pawns[0])
        hit = memo.get(key)
        if hit is not None:
            return hit
        wins = total = 0
        for d in list(game._legal):
            game._advance(d, -1)
            game._history.append("")
            w, t = count()
            game.undo()
            wins += w
            total += t
        memo[key] = (wins, total)
        return wins, total

    return count()


def solo_solvable(game: CollapsiGame) -> bool:
    """Solo: does some line from this position solve the puzzle?

    A dedicated search on (collapsed mask, pawn cell) with the step tables
    and a memo of dead states; used to deal only solvable puzzles (ruling 7).
    """
    if game._result is not None:
        return game._result.reason == "solved"
    b = game._board
    cards = game._cards
    tables = game._tables
    exit_cell = game._exit
    exit_bit = 1 << exit_cell
    full = b.full
    classic = game._spec.rules == "classic"
    exit_masks: list[tuple[int, ...]] = []
    for c in range(b.cells):
        v = cards[c]
        k = 4 if v == JACK and classic else max(v, 1)
        exit_masks.append(next((ms for d, _b, ms in b.upto[k][c] if d == exit_cell), ()))
    dead: set[int] = set()
    shift = b.cells

    def win(collapsed: int, pawn: int) -> bool:
        key = collapsed << shift | pawn
        if key in dead:
            return False
        after = collapsed | (1 << pawn)
        if after | exit_bit == full:
            return any(not m & collapsed for m in exit_masks[pawn])
        block = collapsed | exit_bit
        for d, _dbit, masks in tables[cards[pawn]][pawn]:
            for m in masks:
                if not m & block:
                    if win(after, d):
                        return True
                    break
        dead.add(key)
        return False

    return win(game._collapsed, game._pawns[0])
