"""Perfect play for two-player Collapsi positions, under either rule set, on any board size.

Two questions are answered for any position (not only deals):

* who wins with perfect play (:func:`solve_winner`), and
* how long the game lasts under *game-length-perfect* play, where the winner
  shortens the game and the loser prolongs it (:func:`solve_length`), with
  the value of every legal move (:func:`analyse`).

Why it is fast enough in pure Python:

* Cards never change, only the collapsed mask and the two pawn cells do, so a
  position inside one search is the int ``collapsed << 2B | mover << B | other``.
  The game is symmetric between the seats, so values are kept from the
  mover's point of view and no side-to-move bit is needed.
* Move tables: every self-avoiding torus walk of 1-4 steps from every cell is
  enumerated once per board shape and grouped by destination with its minimal
  masks of entered cells (ruling 2). The destinations for a given collapsed
  mask are then memoised on the collapsed cells the walks can touch, so move
  generation is one dict lookup. These tables are deal-independent. On the
  4x4 torus (every published deal) the walks are not enumerated at run time:
  a memo miss reads a table shipped prebuilt (:mod:`engine.collapsi.torus4`),
  so a cold start costs little more than a warm one. A search node hands its
  children the move lists it computed for ordering, so none is looked up twice.
* Game-length values are stored as +/- "face-up cards at the end" (the paper's
  score): that number is path-independent, so negamax needs no ply
  adjustment and transposition-table values stay exact.
* Win/loss first (a boolean search with a transposition table, immediate-win
  detection, enhanced transposition cutoffs and mobility ordering), then the
  length search: fail-soft alpha-beta with a bounds table, driven by MTD(f)
  null-window probes inside the range the known sign allows (a win leaves an
  odd number of plies, a loss an even one, so every bound snaps to that
  parity), with one-ply bounds (no win in one ply means at least three),
  enhanced transposition cutoffs and the same ordering. Both searches skip,
  without visiting it, a move after which the opponent can leave us stuck at
  once (we would have no move, or one that the opponent can take): the
  mobility that orders the moves shows it, and it is the worst a move can be.
* :func:`best_move` finds one game-length-perfect move without valuing them
  all; :func:`canonical_deal` maps a layout to its least image under torus
  shifts, mirrors and (square boards) the transpose, as the paper's symmetry
  reduction does. It is not used inside a search: a position only maps onto
  itself when the whole layout is symmetric, which random deals almost never are.
* Budgets: when a search grows beyond ``max_nodes`` positions or ``max_seconds``
  of CPU time (:mod:`engine.clock`) it raises :class:`SolverBudgetExceeded`;
  the AI players then fall back on Monte Carlo tree search
  (:mod:`engine.ai.collapsi`), not on a depth-limited search. The tables stay
  sound, so a solver can be reused.
"""

from __future__ import annotations

import weakref
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from engine.base import NotationError, SetupError
from engine.clock import cpu_now
from engine.collapsi import torus4
from engine.collapsi.position import JACK, Position

__all__ = [
    "Analysis",
    "Solver",
    "SolverBudgetExceeded",
    "analyse",
    "best_move",
    "canonical_deal",
    "legal_destinations",
    "parse_deal",
    "play",
    "solve_length",
    "solve_winner",
]

RULE_SETS = ("standard", "classic")
DEFAULT_MAX_NODES = 3_000_000
_CHECK_EVERY = 1024
_MEMO_CAP = 200_000  # destinations memoised per (cell, value) before a reset


class SolverBudgetExceeded(Exception):
    """The position could not be solved within the node or time budget."""

    def __init__(self, nodes: int, seconds: float) -> None:
        super().__init__(f"unsolved: budget exceeded after {nodes} positions, {seconds:.2f} s")
        self.nodes = nodes
        self.seconds = seconds


# ---------------------------------------------------------------------------
# Move tables (ruling 2): self-avoiding walks on the torus, by destination
# ---------------------------------------------------------------------------


class MoveTables:
    """Deal-independent move tables for one board shape and rule set.

    ``dests(cell, value, collapsed)`` returns the destinations a pawn on ``cell``
    holding card ``value`` can reach when ``collapsed`` cells are face down,
    ignoring the other pawn (the caller drops its cell: a move may pass
    through the other pawn but not end there).

    Per ``idx = cell * 5 + value``: ``relevant[idx]`` the cells its walks can
    enter, ``memo[idx]`` its destinations by relevant collapsed cells, and
    ``miss[idx](collapsed)`` the function that fills the memo on a miss: it
    reads the prebuilt tables on the 4x4 torus (:mod:`engine.collapsi.torus4`)
    and matches the enumerated walks elsewhere. All are built on first use (a
    deal needs one value per cell, so a cold start builds a fifth of them).
    """

    def __init__(self, width: int, height: int, rules: str) -> None:
        if rules not in RULE_SETS:
            raise SetupError(f"unknown rule set {rules!r} (expected one of {', '.join(RULE_SETS)})")
        self.width = width
        self.height = height
        self.rules = rules
        n = width * height
        self.neighbours: list[tuple[int, ...]] = []
        for cell in range(n):
            r, c = divmod(cell, width)
            self.neighbours.append(
                (
                    ((r - 1) % height) * width + c,
                    ((r + 1) % height) * width + c,
                    r * width + (c - 1) % width,
                    r * width + (c + 1) % width,
                )
            )
        size = n * 5
        self.relevant: list[int] = [0] * size
        self.memo: list[dict[int, tuple[int, ...]]] = [{} for _ in range(size)]
        self.miss: list[Callable[[int], tuple[int, ...]] | None] = [None] * size
        self.torus4 = width == 4 and height == 4
        self._torus4_tables: list[array | None] = [None] * len(torus4.STEPS)

    def build(self, idx: int) -> None:
        """The relevant mask and miss function of ``idx`` = cell * 5 + value (once)."""
        if self.miss[idx] is not None:
            return
        value = idx % 5
        joker = value == JACK and self.rules == "classic"
        if self.torus4:
            self.miss[idx] = self._torus4_miss(idx, torus4.JOKER if joker else (value or 1) - 1)
        else:
            self.miss[idx] = self._walks_miss(idx, (1, 2, 3, 4) if joker else (value or 1,))

    def _torus4_miss(self, idx: int, t: int) -> Callable[[int], tuple[int, ...]]:
        """A miss read from prebuilt table ``t``: the key moved to frame 0, the entry back."""
        cell = idx // 5
        table = self._torus4_tables[t]
        if table is None:
            table = self._torus4_tables[t] = torus4.table(t)
        rel = self.relevant[idx] = torus4.from_frame0(torus4.RELEVANT[t], cell)
        memo = self.memo[idx]
        r, left, c, cc, lo, hi = torus4.frame(cell)
        r0, c0 = divmod(cell, 4)
        real = [((d >> 2) + r0) % 4 * 4 + ((d & 3) + c0) % 4 for d in torus4.DESTS[t]]
        # an entry's bits in the order of their cells on the board: tuples come out ascending
        bits = sorted(range(len(real)), key=real.__getitem__)
        by_entry: dict[int, tuple[int, ...]] = {}

        def miss(collapsed: int) -> tuple[int, ...]:
            key = collapsed & rel
            k = key >> r | key << left
            entry = table[((k >> c) & lo | (k << cc) & hi) >> 1]
            got = by_entry.get(entry)
            if got is None:
                got = by_entry[entry] = tuple([real[b] for b in bits if entry >> b & 1])
            if len(memo) > _MEMO_CAP:
                memo.clear()
            memo[key] = got
            return got

        return miss

    def _walks_miss(self, idx: int, steps: tuple[int, ...]) -> Callable[[int], tuple[int, ...]]:
        """A miss matched against the walks (ruling 2), enumerated here."""
        cell = idx // 5
        by_dest: dict[int, set[int]] = {}
        for k in steps:
            self._walks(cell, k, 1 << cell, 0, by_dest)
        pairs = []
        rel = 0
        for dest in sorted(by_dest):
            masks = sorted(by_dest[dest], key=lambda m: (m.bit_count(), m))
            minimal: list[int] = []
            for m in masks:
                if not any(p & m == p for p in minimal):
                    minimal.append(m)
            pairs += [(dest, m) for m in minimal]
            for m in minimal:
                rel |= m
        self.relevant[idx] = rel
        memo = self.memo[idx]

        def miss(collapsed: int) -> tuple[int, ...]:
            key = collapsed & rel
            out = []
            last = -1
            for d, m in pairs:  # grouped by destination: skip once found
                if d != last and not m & key:
                    out.append(d)
                    last = d
            got = tuple(out)
            if len(memo) > _MEMO_CAP:
                memo.clear()
            memo[key] = got
            return got

        return miss

    def _walks(self, at: int, left: int, entered: int, mask: int, out: dict[int, set[int]]) -> None:
        for nxt in self.neighbours[at]:
            b = 1 << nxt
            if entered & b:
                continue
            if left == 1:
                out.setdefault(nxt, set()).add(mask | b)
            else:
                self._walks(nxt, left - 1, entered | b, mask | b, out)

    def dests(self, cell: int, value: int, collapsed: int) -> tuple[int, ...]:
        idx = cell * 5 + value
        miss = self.miss[idx]
        if miss is None:
            self.build(idx)
            miss = self.miss[idx]
            assert miss is not None
        got = self.memo[idx].get(collapsed & self.relevant[idx])
        return miss(collapsed) if got is None else got


_TABLES: dict[tuple[int, int, str], MoveTables] = {}


def tables_for(width: int, height: int, rules: str) -> MoveTables:
    """The (cached, deal-independent) move tables of a board shape and rule set."""
    key = (width, height, rules)
    t = _TABLES.get(key)
    if t is None:
        t = _TABLES[key] = MoveTables(width, height, rules)
    return t


# ---------------------------------------------------------------------------
# Positions: validation, deals, moves
# ---------------------------------------------------------------------------


def _check(pos: Position) -> None:
    if pos.rules not in RULE_SETS:
        raise SetupError(f"unknown rule set {pos.rules!r} (expected one of {', '.join(RULE_SETS)})")
    if pos.width < 1 or pos.height < 1 or len(pos.cards) != pos.width * pos.height:
        raise SetupError("the cards do not fill a width x height board")
    if any(v not in (0, 1, 2, 3, 4) for v in pos.cards):
        raise SetupError("card values must be 0 (jack) or 1-4")
    if len(pos.pawns) != 2:
        raise SetupError("the solver handles two-player positions only")
    n = pos.width * pos.height
    a, b = pos.pawns
    if not (0 <= a < n and 0 <= b < n) or a == b:
        raise SetupError("both pawns must stand on distinct cells of the board")
    if pos.collapsed >> n or pos.collapsed & ((1 << a) | (1 << b)):
        raise SetupError("a pawn stands on a collapsed card, or the mask is off the board")
    if pos.to_move not in (0, 1):
        raise SetupError("to_move must be seat 0 or 1")


def legal_destinations(pos: Position) -> tuple[int, ...]:
    """The cells the side to move may move to (ruling 2), ascending."""
    _check(pos)
    me, opp = pos.pawns[pos.to_move], pos.pawns[1 - pos.to_move]
    t = tables_for(pos.width, pos.height, pos.rules)
    return tuple(d for d in t.dests(me, pos.cards[me], pos.collapsed) if d != opp)


def play(pos: Position, dest: int) -> Position:
    """The position after the side to move moves to ``dest`` (its start card collapses)."""
    if dest not in legal_destinations(pos):
        from engine.base import IllegalMove

        raise IllegalMove(f"cell {dest} is not a legal destination here")
    pawns = list(pos.pawns)
    start = pawns[pos.to_move]
    pawns[pos.to_move] = dest
    return Position(
        pos.rules,
        pos.width,
        pos.height,
        pos.cards,
        pos.collapsed | (1 << start),
        tuple(pawns),
        1 - pos.to_move,
    )


_CARD_CHARS = {"J": JACK, "1": 1, "A": 1, "2": 2, "3": 3, "4": 4}


def parse_deal(deal: str, rules: str = "standard", width: int = 0, height: int = 0) -> Position:
    """A deal in the compact notation (one character per card, row-major, ``J``/``1``-``4``).

    The first jack is red's (seat 0) start, the second blue's; red moves first.
    A square board is assumed unless ``width``/``height`` are given.
    """
    text = deal.strip().upper()
    n = len(text)
    if not width and not height:
        side = round(n**0.5)
        if side * side != n:
            raise NotationError(f"deal {deal!r}: {n} cards do not make a square board")
        width = height = side
    elif not height:
        height = n // width if width else 0
    elif not width:
        width = n // height
    if width * height != n or n == 0:
        raise NotationError(f"deal {deal!r}: {n} cards do not fill a {width}x{height} board")
    try:
        cards = tuple(_CARD_CHARS[ch] for ch in text)
    except KeyError as exc:
        raise NotationError(f"deal {deal!r}: unknown card {exc.args[0]!r} (use J, 1-4)") from None
    jacks = [i for i, v in enumerate(cards) if v == JACK]
    if len(jacks) != 2:
        raise NotationError(f"deal {deal!r}: a two-player deal needs exactly 2 jacks")
    pos = Position(rules, width, height, cards, 0, (jacks[0], jacks[1]), 0)
    _check(pos)
    return pos


def canonical_deal(cards: Iterable[int], width: int, height: int) -> tuple[int, ...]:
    """The least of a deal's images under torus translations and reflections.

    Rotating rows or columns of the torus, mirroring it, and (on square boards)
    transposing it changes nothing strategic, so equal canonical forms mean
    equal game values. The two start cells are the first and second jack, so
    only layouts are compared here; the caller fixes who starts where.
    """
    cards = tuple(cards)
    best = cards
    transforms = [(False, False, False), (True, False, False), (False, True, False)]
    transforms.append((True, True, False))
    if width == height:
        transforms += [(fr, fc, True) for fr, fc, _ in transforms]
    for dr in range(height):
        for dc in range(width):
            for flip_r, flip_c, transpose in transforms:
                img = [0] * len(cards)
                for cell, v in enumerate(cards):
                    r, c = divmod(cell, width)
                    r = (-r if flip_r else r) + dr
                    c = (-c if flip_c else c) + dc
                    r %= height
                    c %= width
                    if transpose:
                        r, c = c, r
                    img[r * width + c] = v
                t = tuple(img)
                if t < best:
                    best = t
    return best


# ---------------------------------------------------------------------------
# The search
# ---------------------------------------------------------------------------


@dataclass
class Analysis:
    """Everything :func:`analyse` finds out about one position.

    ``plies`` counts the plies still to be played under game-length-perfect
    play (0 when the side to move has no move); ``moves`` maps each legal
    destination to the same count if that move is played now.
    """

    to_move: int
    winner: int
    plies: int
    moves: dict[int, int] = field(default_factory=dict)
    nodes: int = 0

    @property
    def best_moves(self) -> list[int]:
        return [d for d, p in self.moves.items() if p == self.plies]


class Solver:
    """One search context: a board's fixed cards, its move tables and transposition tables.

    Reuse one solver for many positions of the same deal (a bot playing a
    game); a new deal needs a new solver. Not thread-safe.
    """

    def __init__(
        self,
        rules: str,
        width: int,
        height: int,
        cards: tuple[int, ...],
        *,
        max_nodes: int = DEFAULT_MAX_NODES,
        max_seconds: float | None = None,
    ) -> None:
        self.rules = rules
        self.width = width
        self.height = height
        self.cards = tuple(cards)
        self.tables = tables_for(width, height, rules)
        self.max_nodes = max_nodes
        self.max_seconds = max_seconds
        self.wtt: dict[int, bool] = {}
        self.ltt: dict[int, tuple[int, int]] = {}
        self._deadline = 0.0
        self._start = 0.0
        self._shift = max(1, (width * height - 1).bit_length())
        self._mark = [0, 0]  # table sizes at which the budget is checked next
        self._recursive: list[Callable[..., object]] = []  # cut loose in __del__
        self._win = self._build_win()
        self._value = self._build_value()

    @classmethod
    def for_position(
        cls, pos: Position, *, max_nodes: int = DEFAULT_MAX_NODES, max_seconds: float | None = None
    ) -> Solver:
        _check(pos)
        return cls(
            pos.rules,
            pos.width,
            pos.height,
            pos.cards,
            max_nodes=max_nodes,
            max_seconds=max_seconds,
        )

    def __del__(self) -> None:
        # A recursive search closure refers to itself through a cell: a reference cycle
        # that holds the tables, freed only by the garbage collector, whose pass (tens of
        # ms with big tables) then lands inside some later solve. Break it when the
        # solver is dropped (the closures are private: nobody calls them after this).
        for fn in getattr(self, "_recursive", ()):
            assert fn.__closure__ is not None
            fn.__closure__[fn.__code__.co_freevars.index(fn.__name__)].cell_contents = None

    def _over_budget_weak(self) -> Callable[[], None]:
        """``_over_budget`` for the search closures, without a reference back to the solver.

        A strong one would make the solver part of a cycle, and ``__del__`` would
        wait for the garbage collector.
        """
        ref = weakref.ref(self)

        def over() -> None:
            solver = ref()
            if solver is not None:
                solver._over_budget()

        return over

    def _begin(self) -> None:
        """Start the budget clock (each public search call is one budget)."""
        self._start = cpu_now()
        self._deadline = (
            self._start + self.max_seconds if self.max_seconds is not None else float("inf")
        )
        self._mark[0] = len(self.wtt) + _CHECK_EVERY
        self._mark[1] = len(self.ltt) + _CHECK_EVERY

    def _over_budget(self) -> None:
        # called every _CHECK_EVERY new positions of either table
        nodes = len(self.wtt) + len(self.ltt)
        now = cpu_now()
        if nodes > self.max_nodes or now > self._deadline:
            raise SolverBudgetExceeded(nodes, now - self._start)
        self._mark[0] = len(self.wtt) + _CHECK_EVERY
        self._mark[1] = len(self.ltt) + _CHECK_EVERY

    # -- win/loss -------------------------------------------------------------
    def wins(self, collapsed: int, me: int, opp: int) -> bool:
        """Whether the mover (on ``me``) wins against the pawn on ``opp``."""
        self._begin()
        return self._win(collapsed, me, opp)

    def _build_win(self) -> Callable[[int, int, int], bool]:
        s = self._shift
        s2 = s + s
        tt = self.wtt
        mark = self._mark
        mrel, mmemo, slow, sides = self._gen_parts()
        over = self._over_budget_weak()

        def win(
            col: int, me: int, opp: int, ds: tuple[int, ...], od: tuple[int, ...], key: int
        ) -> bool:
            # ds: the mover's destinations from col (the other pawn's cell may be among them);
            # od: the opponent's from col | 1 << me; key: the position's. The caller has them.
            r = tt.get(key)
            if r is not None:
                return r
            nod = len(od)
            if nod == 0:
                # whatever we play, the opponent is stuck: a win if we can move at all
                r = len(ds) > (opp in ds)
                tt[key] = r
                return r
            if nod == 1 and od[0] in ds:
                # the opponent's only move is ours to take: it is stuck
                tt[key] = True
                return True
            if len(tt) > mark[0]:
                over()
            nc = col | (1 << me)
            nc2 = nc | (1 << opp)
            base = nc << s2 | opp << s
            kids = []
            for d in ds:
                if d == opp:
                    continue
                cr = tt.get(base | d)
                if cr is False:
                    tt[key] = True  # enhanced transposition cutoff
                    return True
                if cr is None:
                    # our moves from d once the opponent has moved: the child's ``od``.
                    # Order: fewest replies for the opponent, then most room for us next
                    mine = mmemo[d].get(nc2 & mrel[d])
                    if mine is None:
                        mine = slow[d](nc2)
                    nm = len(mine)
                    if nm > 1 or (nm == 1 and mine[0] not in od):
                        kids.append(((nod - (d in od)) * 32 - nm, d, mine))
                    # else the opponent, who can move (nod > 1 or od[0] is not d), leaves
                    # us stuck: d loses, no need to visit it
            kids.sort()
            for _, d, mine in kids:
                if not win(nc, opp, d, od, mine, base | d):
                    tt[key] = True
                    return True
            tt[key] = False
            return False

        self._recursive.append(win)

        def root(col: int, me: int, opp: int) -> bool:
            ds, od = sides(col, me, opp)
            return win(col, me, opp, ds, od, (col << s2) | (me << s) | opp)

        return root

    def _gen_parts(
        self,
    ) -> tuple[
        list[int],
        list[dict[int, tuple[int, ...]]],
        list[Callable[[int], tuple[int, ...]]],
        Callable[[int, int, int], tuple[tuple[int, ...], tuple[int, ...]]],
    ]:
        """Per-cell views of the move-table memo for this deal's cards (for inlining).

        Returns the relevant masks, memos and miss functions (which fill the
        memo) by cell, and ``sides(col, me, opp)``: the mover's destinations and the
        opponent's after the mover's card collapses, as a search node takes them.
        """
        tabs = self.tables
        idx = [cell * 5 + v for cell, v in enumerate(self.cards)]
        for i in idx:
            tabs.build(i)
        mrel = [tabs.relevant[i] for i in idx]
        mmemo = [tabs.memo[i] for i in idx]
        slow = []
        for i in idx:
            miss = tabs.miss[i]
            assert miss is not None  # built above
            slow.append(miss)

        def sides(col: int, me: int, opp: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
            ds = mmemo[me].get(col & mrel[me])
            if ds is None:
                ds = slow[me](col)
            nc = col | (1 << me)
            od = mmemo[opp].get(nc & mrel[opp])
            if od is None:
                od = slow[opp](nc)
            return ds, od

        return mrel, mmemo, slow, sides

    # -- game length ----------------------------------------------------------
    def value(self, collapsed: int, me: int, opp: int, alpha: int, beta: int) -> int:
        """Game-length value from the mover's side: +/- face-up cards at the end.

        Positive when the mover wins. Exact when ``alpha < v < beta``; otherwise
        a bound on the correct side (fail-soft alpha-beta).
        """
        self._begin()
        return self._value(collapsed, me, opp, alpha, beta)

    def exact(self, collapsed: int, me: int, opp: int) -> int:
        """The exact game-length value of a position (see :meth:`value`).

        The win/loss search runs first: it is cheaper, fixes the sign, and fills
        the table the length search reads. Then MTD(f): null-window probes of
        the length search from a typical guess. A win leaves an odd number of
        plies and a loss an even one, so probes move by two.
        """
        self._begin()
        return self._exact(collapsed, me, opp)

    def _exact(self, collapsed: int, me: int, opp: int) -> int:
        faces = self.width * self.height - collapsed.bit_count()
        # a win ends after an odd number of plies, a loss after an even one, so the value
        # (+/- faces left) has the parity of ``ref``: every bound snaps inwards to it
        if self._win(collapsed, me, opp):
            ref = faces - 1
            lo, hi = 2 + (2 - ref) % 2, ref
            g = min(hi, lo + 2)
        else:
            ref = -faces
            lo, hi = ref, -2 - (-2 - ref) % 2
            g = max(lo, hi - 2)
        value = self._value
        while lo < hi:
            beta = g + 1 if g == lo else g
            g = value(collapsed, me, opp, beta - 1, beta)
            if g < beta:
                hi = g - (g - ref) % 2
            else:
                lo = g + (g - ref) % 2
        return lo

    def _build_value(self) -> Callable[[int, int, int, int, int], int]:
        s = self._shift
        s2 = s + s
        wtt = self.wtt
        ltt = self.ltt
        n = self.width * self.height
        mark = self._mark
        over = self._over_budget_weak()
        mrel, mmemo, slow, sides = self._gen_parts()

        def val(
            col: int,
            me: int,
            opp: int,
            faces: int,
            alpha: int,
            beta: int,
            ds: tuple[int, ...],
            od: tuple[int, ...],
            key: int,
        ) -> int:
            # ds, od and key as in the win/loss search: the caller has them at hand
            e = ltt.get(key)
            if e is not None:
                lo, hi = e
                if lo >= beta:
                    return lo
                if hi <= alpha:
                    return hi
                if lo == hi:
                    return lo
            nod = len(od)
            f1 = faces - 1
            if e is None:
                if len(ds) <= (opp in ds):
                    ltt[key] = (-faces, -faces)  # no move: lost now
                    return -faces
                if nod == 0 or (nod == 1 and od[0] in ds):
                    ltt[key] = (f1, f1)  # the opponent is stuck after our move
                    return f1
                # no win in one ply; a move exists, so no loss before two plies
                lo, hi = 2 - faces, faces - 3
                w = wtt.get(key)
                if w is not None:
                    if w:
                        lo = 2
                    else:
                        hi = -2
                if lo >= beta:
                    ltt[key] = (lo, hi)
                    return lo
                if hi <= alpha:
                    ltt[key] = (lo, hi)
                    return hi
            if len(ltt) > mark[1]:
                over()
            a0 = alpha if alpha > lo - 1 else lo - 1
            b = beta if beta < hi + 1 else hi + 1
            a = a0
            nc = col | (1 << me)
            nc2 = nc | (1 << opp)
            base = nc << s2 | opp << s
            kids = []
            best = -n - 1
            lost2 = 2 - faces
            for d in ds:
                if d == opp:
                    continue
                ce = ltt.get(base | d)
                if ce is not None:
                    # this move is worth between -chi and -clo to us
                    clo, chi = ce
                    if -chi >= b:
                        # enhanced transposition cutoff: this move alone is good enough
                        best = -chi
                        break
                    if -clo <= a or clo == chi:
                        if -clo > best:
                            best = -clo
                            if best > a:
                                a = best
                        continue
                # our moves from d once the opponent has moved: the child's ``od``
                mine = mmemo[d].get(nc2 & mrel[d])
                if mine is None:
                    mine = slow[d](nc2)
                nm = len(mine)
                if nm == 0 or (nm == 1 and mine[0] in od):
                    # the opponent (who can move) leaves us stuck at once: the least a
                    # move can be worth here, known without visiting it
                    if lost2 > best:
                        best = lost2
                        if best > a:
                            a = best
                    continue
                if ce is not None:
                    kids.append((chi * 64, d, mine))
                else:
                    cw = wtt.get(base | d)
                    if cw:
                        kids.append((4096, d, mine))
                    else:
                        k = (nod - (d in od)) * 64 - nm
                        kids.append((k - 4096 if cw is False else k, d, mine))
            else:
                kids.sort()
                for _, d, mine in kids:
                    if a >= b:
                        break
                    v = -val(nc, opp, d, f1, -b, -a, od, mine, base | d)
                    if v > best:
                        best = v
                        if best > a:
                            if best >= b:
                                break
                            a = best
            if best <= a0:
                ltt[key] = (lo, best if best < hi else hi)
            elif best >= b:
                ltt[key] = (best if best > lo else lo, hi)
            else:
                ltt[key] = (best, best)
            return best

        self._recursive.append(val)

        def value(col: int, me: int, opp: int, alpha: int, beta: int) -> int:
            ds, od = sides(col, me, opp)
            key = (col << s2) | (me << s) | opp
            return val(col, me, opp, n - col.bit_count(), alpha, beta, ds, od, key)

        return value


# ---------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------


def _sides(pos: Position) -> tuple[int, int]:
    return pos.pawns[pos.to_move], pos.pawns[1 - pos.to_move]


def solve_winner(
    pos: Position, *, max_nodes: int = DEFAULT_MAX_NODES, max_seconds: float | None = None
) -> int:
    """The seat that wins ``pos`` with perfect play; raises :class:`SolverBudgetExceeded`."""
    _check(pos)
    solver = Solver.for_position(pos, max_nodes=max_nodes, max_seconds=max_seconds)
    me, opp = _sides(pos)
    return pos.to_move if solver.wins(pos.collapsed, me, opp) else 1 - pos.to_move


def solve_length(
    pos: Position, *, max_nodes: int = DEFAULT_MAX_NODES, max_seconds: float | None = None
) -> tuple[int, int]:
    """(winner seat, plies still to play) under game-length-perfect play."""
    _check(pos)
    solver = Solver.for_position(pos, max_nodes=max_nodes, max_seconds=max_seconds)
    me, opp = _sides(pos)
    faces = pos.cells - pos.collapsed.bit_count()
    v = solver.exact(pos.collapsed, me, opp)
    winner = pos.to_move if v > 0 else 1 - pos.to_move
    return winner, faces - abs(v)


def analyse(
    pos: Position,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_seconds: float | None = None,
    solver: Solver | None = None,
) -> Analysis:
    """Winner, game length and the game length after each legal move of ``pos``.

    Pass a :class:`Solver` of the same deal to reuse its tables (and budget).
    """
    _check(pos)
    if solver is None:
        solver = Solver.for_position(pos, max_nodes=max_nodes, max_seconds=max_seconds)
    me, opp = _sides(pos)
    faces = pos.cells - pos.collapsed.bit_count()
    nc = pos.collapsed | (1 << me)
    moves: dict[int, int] = {}
    best = -faces  # no move: lost now
    solver._begin()
    for d in legal_destinations(pos):
        v = -solver._exact(nc, opp, d)
        moves[d] = faces - abs(v)
        best = max(best, v)
    winner = pos.to_move if best > 0 else 1 - pos.to_move
    return Analysis(
        to_move=pos.to_move,
        winner=winner,
        plies=faces - abs(best),
        moves=moves,
        nodes=len(solver.wtt) + len(solver.ltt),
    )


def best_move(
    pos: Position,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_seconds: float | None = None,
    solver: Solver | None = None,
) -> int | None:
    """A game-length-perfect move (the lowest such cell), or ``None`` with no legal move.

    Cheaper than :func:`analyse`: the root's value is found once, then each
    move only has to be shown to reach it (a null-window probe).
    """
    _check(pos)
    if solver is None:
        solver = Solver.for_position(pos, max_nodes=max_nodes, max_seconds=max_seconds)
    moves = legal_destinations(pos)
    if not moves:
        return None
    me, opp = _sides(pos)
    solver._begin()
    v = solver._exact(pos.collapsed, me, opp)
    nc = pos.collapsed | (1 << me)
    for d in moves:
        # the move is perfect iff the opponent's value there is at most -v
        if solver._value(nc, opp, d, -v, -v + 1) <= -v:
            return d
    raise AssertionError("no move reaches the position's value")  # pragma: no cover
