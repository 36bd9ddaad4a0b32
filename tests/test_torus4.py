"""The prebuilt 4x4 torus move tables: regenerated equal, and equal to the walks on the board.

The solver's own tests (tests/test_solver.py) check whole searches against a
naive minimax; these check the tables themselves, cell by cell.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine.collapsi import torus4
from engine.collapsi.solver import MoveTables


def test_the_shipped_module_is_what_render_builds_from_the_walks():
    shipped = Path(torus4.__file__).with_name("_torus4_data.py").read_text()
    assert shipped == torus4.render(), "regenerate: see engine.collapsi.torus4.render()"


def test_frames_move_masks_to_cell_0_and_back():
    rng = random.Random(4)
    for cell in range(16):
        assert torus4.to_frame0(1 << cell, cell) == 1
        for _ in range(200):
            m = rng.getrandbits(16)
            f = torus4.to_frame0(m, cell)
            assert f.bit_count() == m.bit_count()
            assert torus4.from_frame0(f, cell) == m


@pytest.mark.parametrize("rules", ["standard", "classic"])
def test_tables_agree_with_the_enumerated_walks_on_every_cell_and_card(rules: str):
    fast = MoveTables(4, 4, rules)
    walks = MoveTables(4, 4, rules)
    walks.torus4 = False  # the enumeration every other board size uses
    assert fast.torus4
    rng = random.Random(rules)
    for cell in range(16):
        for value in range(5):
            for _ in range(150):
                collapsed = rng.getrandbits(16) & rng.getrandbits(16) & ~(1 << cell)
                got = fast.dests(cell, value, collapsed)
                assert got == walks.dests(cell, value, collapsed), (cell, value, collapsed)
                assert list(got) == sorted(got)
