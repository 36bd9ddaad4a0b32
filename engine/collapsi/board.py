"""Torus geometry of a Collapsi board: precomputed step tables and shift permutations.

Everything here depends only on the board's width and height, so it is
computed once per size and cached. Cells are numbered row-major from 0
(cell = row * width + column) and a set of cells is an ``int`` bit mask.

A move is a self-avoiding walk of N orthogonal steps on the torus (ruling 2):
the starting card counts as entered, so a walk never returns to it. What a
walk needs to be legal is that none of the cards it *enters* is collapsed
(passing over another pawn is allowed, only the destination must be free).
So for each (step count, start cell) the table keeps, per destination, only
the inclusion-minimal masks of entered cells: a destination is reachable iff
one of its masks misses every collapsed card.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

#: one destination of a step table: (destination cell, 1 << destination, minimal masks)
Entry = tuple[int, int, tuple[int, ...]]
#: a step table for one start cell: its destinations in increasing cell order
Table = tuple[Entry, ...]

MAX_STEPS = 4
MIN_SIDE = 2
MAX_SIDE = 12

#: Shifting Board directions (ruling 5): row left/right, column up/down.
SHIFTS = "<>^v"


def _minimal(masks: set[int]) -> tuple[int, ...]:
    kept: list[int] = []
    for m in sorted(masks, key=lambda x: (x.bit_count(), x)):
        if not any(k & m == k for k in kept):
            kept.append(m)
    return tuple(kept)


@dataclass(frozen=True, slots=True, eq=False)
class Board:
    """The geometry of a ``width`` x ``height`` torus; get one with :func:`board`."""

    width: int
    height: int
    cells: int
    full: int
    neighbours: tuple[tuple[int, ...], ...]
    #: exact[k][cell]: walks of exactly k steps (k = 1..4; index 0 unused)
    exact: tuple[tuple[Table, ...], ...]
    #: upto[k][cell]: walks of 1..k steps merged per destination (classic joker = upto[4])
    upto: tuple[tuple[Table, ...], ...]
    #: shift[d][cell]: permutation moving every card of the row/column through ``cell``
    #: one space in direction d (index into :data:`SHIFTS`); maps old cell -> new cell
    shift: tuple[tuple[tuple[int, ...], ...], ...]

    def cell_name(self, cell: int) -> str:
        return f"r{cell // self.width}c{cell % self.width}"

    def walks(self, start: int, steps: int, blocked: int) -> list[list[int]]:
        """Every self-avoiding walk of exactly ``steps`` steps from ``start`` avoiding
        ``blocked`` cells, each as the list of cells from start to end (slow; for
        witnesses and tests, not for search)."""
        out: list[list[int]] = []
        path = [start]

        def go(cell: int, left: int, seen: int) -> None:
            if left == 0:
                out.append(list(path))
                return
            for n in self.neighbours[cell]:
                bit = 1 << n
                if seen & bit or blocked & bit:
                    continue
                path.append(n)
                go(n, left - 1, seen | bit)
                path.pop()

        go(start, steps, 1 << start)
        return out

    def walk_list(self, start: int, steps: int) -> tuple[tuple[int, int, list[int]], ...]:
        """Every self-avoiding walk of exactly ``steps`` steps from ``start``, in the order
        of :meth:`walks`, as ``(destination, mask of entered cells, cells)``; cached.

        ``walks(start, steps, blocked)`` is exactly the walks here whose mask misses
        ``blocked``, so one pass over this list finds a witness for every destination.
        The cell lists are shared: copy one before changing it."""
        return _walk_list(self.width, self.height, start, steps)

    def walks_by_dest(self, start: int, steps: int) -> dict[int, tuple[tuple[int, list[int]], ...]]:
        """:meth:`walk_list` grouped by destination: ``dest -> ((entered mask, cells), ...)``
        in the same order; cached. A legal destination's witness is its first walk whose
        mask misses the collapsed cards: a lookup, not a search over every walk."""
        return _walks_by_dest(self.width, self.height, start, steps)


@cache
def _walks_by_dest(width: int, height: int, start: int, steps: int) -> dict:
    out: dict[int, list[tuple[int, list[int]]]] = {}
    for dest, entered, walk in _walk_list(width, height, start, steps):
        out.setdefault(dest, []).append((entered, walk))
    return {d: tuple(ws) for d, ws in out.items()}


@cache
def _walk_list(width: int, height: int, start: int, steps: int) -> tuple:
    b = board(width, height)
    return tuple((walk[-1], _entered(walk), walk) for walk in b.walks(start, steps, 0))


def _entered(walk: list[int]) -> int:
    mask = 0
    for c in walk[1:]:
        mask |= 1 << c
    return mask


def _walk_masks(neighbours: tuple[tuple[int, ...], ...], start: int, steps: int) -> dict:
    found: dict[int, set[int]] = {}

    def go(cell: int, left: int, seen: int, entered: int) -> None:
        if left == 0:
            found.setdefault(cell, set()).add(entered)
            return
        for n in neighbours[cell]:
            bit = 1 << n
            if not seen & bit:
                go(n, left - 1, seen | bit, entered | bit)

    go(start, steps, 1 << start, 0)
    return found


def _table(found: dict[int, set[int]]) -> Table:
    return tuple((d, 1 << d, _minimal(found[d])) for d in sorted(found))


@cache
def board(width: int, height: int) -> Board:
    """The (cached) geometry of a ``width`` x ``height`` torus."""
    if not (MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE):
        raise ValueError(f"board sides must be {MIN_SIDE}..{MAX_SIDE}, got {width}x{height}")
    cells = width * height
    neighbours = []
    for c in range(cells):
        r, q = divmod(c, width)
        ns = {
            r * width + (q - 1) % width,
            r * width + (q + 1) % width,
            ((r - 1) % height) * width + q,
            ((r + 1) % height) * width + q,
        }
        ns.discard(c)
        neighbours.append(tuple(sorted(ns)))
    nb = tuple(neighbours)
    exact: list[tuple[Table, ...]] = [()]
    upto: list[tuple[Table, ...]] = [()]
    merged: list[dict[int, set[int]]] = [{} for _ in range(cells)]
    for k in range(1, MAX_STEPS + 1):
        ex = []
        up = []
        for c in range(cells):
            found = _walk_masks(nb, c, k)
            ex.append(_table(found))
            for d, ms in found.items():
                merged[c].setdefault(d, set()).update(ms)
            up.append(_table(merged[c]))
        exact.append(tuple(ex))
        upto.append(tuple(up))
    shifts = []
    for d in SHIFTS:
        per_cell = []
        for c in range(cells):
            r, q = divmod(c, width)
            perm = list(range(cells))
            if d in "<>":
                delta = -1 if d == "<" else 1
                for j in range(width):
                    perm[r * width + j] = r * width + (j + delta) % width
            else:
                delta = -1 if d == "^" else 1
                for i in range(height):
                    perm[i * width + q] = ((i + delta) % height) * width + q
            per_cell.append(tuple(perm))
        shifts.append(tuple(per_cell))
    return Board(
        width=width,
        height=height,
        cells=cells,
        full=(1 << cells) - 1,
        neighbours=nb,
        exact=tuple(exact),
        upto=tuple(upto),
        shift=tuple(shifts),
    )
