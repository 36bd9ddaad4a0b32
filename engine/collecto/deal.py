"""Reproducible Collecto deals (ruling 10), built in one bounded pass.

Cells are filled row by row, each from the colours still in the bag that
differ from its left and upper neighbours, weighted by how many balls of each
are left (as if drawing from the bag). When the bag holds only clashing
colours, one earlier ball is swapped in instead (a bounded scan). Only
``random.Random``'s ``random()`` and ``shuffle()`` are used, whose streams
Python keeps stable, so a seed gives the same board on every machine.

A board with no valid single move is dealt again from the same stream
(ruling 10); after a fixed number of attempts a fixed valid board, with its
colours permuted by the seed, is used, so dealing never loops unboundedly.
"""

from __future__ import annotations

import random

from engine.collecto.board import (
    BALLS_PER_COLOUR,
    CELLS,
    CENTRE,
    COLOURS,
    NEIGHBOURS,
    SIZE,
    Board,
    parse_board,
    valid_singles,
)

#: attempts (fill plus the single-move check) before the fallback board is used
MAX_ATTEMPTS = 32

#: a valid deal with a valid single move (tests check both), used after MAX_ATTEMPTS
FALLBACK = "6432425235623641656515640313356252421414313612514"

_FILL_ORDER = tuple(c for c in range(CELLS) if c != CENTRE)


def _fits(board: Board, cell: int, colour: int) -> bool:
    return all(board[n] != colour for n in NEIGHBOURS[cell])


def _fill(rng: random.Random) -> Board | None:
    """One constructive fill; ``None`` in the rare case the swap repair finds nothing."""
    board = [0] * (CELLS + 1)
    left = [BALLS_PER_COLOUR] * (COLOURS + 1)
    left[0] = 0
    for cell in _FILL_ORDER:
        row, col = divmod(cell, SIZE)
        west = board[cell - 1] if col else 0
        north = board[cell - SIZE] if row else 0
        choices = [c for c in range(1, COLOURS + 1) if left[c] and c != west and c != north]
        if choices:
            total = sum(left[c] for c in choices)
            x = rng.random() * total
            colour = choices[-1]
            for c in choices:
                x -= left[c]
                if x < 0:
                    colour = c
                    break
            board[cell] = colour
            left[colour] -= 1
            continue
        # Only clashing colours are left: move an earlier ball here and put a
        # clashing one in its place, if some earlier cell takes it.
        need = next(c for c in range(1, COLOURS + 1) if left[c])
        for other in _FILL_ORDER:
            if other >= cell:
                return None
            moved = board[other]
            if other in NEIGHBOURS[cell] or moved in (west, north, need):
                continue
            if _fits(board, other, need):
                board[other] = need
                board[cell] = moved
                left[need] -= 1
                break
    return board


def deal(seed: int, attempts: int = MAX_ATTEMPTS) -> Board:
    """The board dealt from ``seed``: 8 balls of each colour, centre empty, no touching pair.

    ``attempts`` bounds the fills tried before the fallback board (tests lower it).
    """
    rng = _rng(seed)
    for _ in range(attempts):
        board = _fill(rng)
        if board is not None and valid_singles(board):
            return board
    return _fallback(rng)


def _rng(seed: int) -> random.Random:
    """The deal's generator. ``random.Random(-n)`` is ``random.Random(n)`` (ints are
    seeded by their absolute value), so a negative seed is seeded by its text
    instead: every seed deals a board of its own."""
    return random.Random(seed if seed >= 0 else str(seed))


def _fallback(rng: random.Random) -> Board:
    board = parse_board(FALLBACK)
    perm = list(range(1, COLOURS + 1))
    rng.shuffle(perm)
    return [perm[v - 1] if v else 0 for v in board]
