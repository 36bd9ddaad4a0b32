"""Prebuilt move tables of the 4x4 torus, the board every published two-player deal uses.

A pawn's destinations depend only on its card and on which cells are face
down (ruling 2), and the 4x4 torus looks the same from every cell: shifting
the board so that the pawn stands on cell 0 ("frame 0") turns every question
into one of five tables (1, 2, 3 or 4 steps, or the classic joker's any of
1-4), each indexed by the collapsed bits of cells 1-15. Enumerating the walks
and matching them against a collapsed mask costs more than a whole solve
(issue 20: a one-shot ``arena collapsi solve`` did that inside its solve), so
the tables ship prebuilt, zlib-compressed and base64-encoded, in
:mod:`engine.collapsi._torus4_data` (a plain Python module of about 70 KB:
loading it is an import, not file I/O; plain string literals, because
compiling bytes literals full of escapes took ~20 ms where no bytecode cache
is written). :func:`render` regenerates that module from the walks; a test
checks that the shipped one equals it.

An entry of table ``t`` is the set of ``DESTS[t]`` (frame-0 destinations,
ascending) still reachable, bit ``i`` for ``DESTS[t][i]``.
"""

from __future__ import annotations

import binascii
import sys
import zlib
from array import array

from engine.collapsi._torus4_data import DESTS, PACKED, RELEVANT

__all__ = ["DESTS", "JOKER", "RELEVANT", "STEPS", "frame", "from_frame0", "render", "table"]

#: the tables' step counts: 1, 2, 3, 4, and the classic joker's any of 1-4
STEPS: tuple[tuple[int, ...], ...] = ((1,), (2,), (3,), (4,), (1, 2, 3, 4))
JOKER = 4  # index of the classic joker's table in STEPS
SIZE = 1 << 15  # one entry per collapsed pattern of cells 1-15
_CODES = ("B", "B", "B", "B", "H")  # up to 8 destinations fit a byte; the joker has 15


def frame(cell: int) -> tuple[int, int, int, int, int, int]:
    """Shifts and masks that move a 16-bit mask into ``cell``'s frame 0.

    ``t = m >> R | m << L`` moves every row up by the pawn's row (on the torus),
    then ``t >> c & lo | t << cc & hi`` every column left by its column.
    """
    r0, c0 = divmod(cell, 4)
    keep = (1 << (4 - c0)) - 1  # columns that stay in their row when shifted left by c0
    lo = keep * 0x1111
    return 4 * r0, 16 - 4 * r0, c0, 4 - c0, lo, 0xFFFF ^ lo


def to_frame0(mask: int, cell: int) -> int:
    """``mask`` as seen from ``cell`` standing on cell 0."""
    r, left, c, cc, lo, hi = frame(cell)
    t = mask >> r | mask << left
    return (t >> c) & lo | (t << cc) & hi


def from_frame0(mask: int, cell: int) -> int:
    """The inverse of :func:`to_frame0`: a frame-0 mask back on the board."""
    r0, c0 = divmod(cell, 4)
    return to_frame0(mask, (-r0) % 4 * 4 + (-c0) % 4)  # the opposite shift


def table(index: int) -> array:
    """Table ``index`` of :data:`STEPS`, decompressed (the caller keeps it)."""
    a = array(_CODES[index])
    a.frombytes(zlib.decompress(binascii.a2b_base64(PACKED[index])))
    if a.itemsize > 1 and sys.byteorder == "big":
        a.byteswap()  # shipped little-endian
    return a


# -- building the tables (for render() and the test that checks the shipped ones) --------


def _neighbours(c: int) -> tuple[int, int, int, int]:
    r, col = divmod(c, 4)
    up, down = (r - 1) % 4 * 4 + col, (r + 1) % 4 * 4 + col
    return up, down, r * 4 + (col - 1) % 4, r * 4 + (col + 1) % 4


def walk_masks(steps: tuple[int, ...]) -> dict[int, list[int]]:
    """From cell 0: destination -> the cells each self-avoiding walk enters (ruling 2)."""
    out: dict[int, list[int]] = {}

    def go(at: int, left: int, entered: int) -> None:
        for nxt in _neighbours(at):
            b = 1 << nxt
            if entered & b:
                continue
            if left == 1:
                out.setdefault(nxt, []).append((entered | b) & ~1)
            else:
                go(nxt, left - 1, entered | b)

    for k in steps:
        go(0, k, 1)
    return out


def build() -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...], tuple[bytes, ...]]:
    """DESTS, RELEVANT and the uncompressed tables (little-endian entries), from the walks."""
    dests_all, relevant, tables = [], [], []
    for index, steps in enumerate(STEPS):
        walks = walk_masks(steps)
        dests = sorted(walks)
        rel = 0
        for ms in walks.values():
            for m in ms:
                rel |= m
        entries = array(_CODES[index])
        for i in range(SIZE):
            collapsed = i << 1
            entry = 0
            for bit, d in enumerate(dests):
                if any(not m & collapsed for m in walks[d]):
                    entry |= 1 << bit
            entries.append(entry)
        if entries.itemsize > 1 and sys.byteorder == "big":
            entries.byteswap()
        dests_all.append(tuple(dests))
        relevant.append(rel)
        tables.append(entries.tobytes())
    return tuple(dests_all), tuple(relevant), tuple(tables)


def render() -> str:
    """The source of :mod:`engine.collapsi._torus4_data`, generated from the walks.

    Regenerate with::

        .venv/bin/python -c "from engine.collapsi.torus4 import render; print(render(), end='')" \\
            > engine/collapsi/_torus4_data.py.new && mv engine/collapsi/_torus4_data.py.new \\
            engine/collapsi/_torus4_data.py
    """
    dests, relevant, tables = build()
    out = [
        '"""The 4x4 torus move tables, generated by ``engine.collapsi.torus4.render()``.',
        "",
        "Do not edit: see :mod:`engine.collapsi.torus4` for what they hold.",
        '"""',
        "",
        "DESTS = (",
        *(f"    {d!r}," for d in dests),
        ")",
        f"RELEVANT = {relevant!r}",
        "PACKED = (",
    ]
    for t in tables:
        packed = binascii.b2a_base64(zlib.compress(t, 9), newline=False).decode()
        out.append("    (")
        out += [f'        "{packed[i : i + 88]}"' for i in range(0, len(packed), 88)]
        out.append("    ),")
    out.append(")")
    return "\n".join(out) + "\n"
