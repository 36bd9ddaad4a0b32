"""Snapshot tests of ``arena tui`` screens (pytest-textual-snapshot): each screen is drawn
to an SVG and compared with the one kept under ``tests/__snapshots__``; a change in what
the screen shows fails until the snapshot is reviewed and updated
(``pytest tests/test_tui_snapshots.py --snapshot-update``). Offline games with fixed
seeds, so the pictures do not depend on a server's random deals or room ids. The
Collapsi one is the README's picture."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from clients.tui.app import ArenaTui

SIZE = (120, 36)


def offline(game: str, variant: str | None = None) -> ArenaTui:
    return ArenaTui("ws://127.0.0.1:9", offline=(game, "random", variant), config=Path(os.devnull))


def test_a_collapsi_game(snap_compare: Any) -> None:
    assert snap_compare(offline("collapsi"), terminal_size=SIZE, press=["right", "down"])


def test_a_big_board_game(snap_compare: Any) -> None:
    assert snap_compare(offline("collapsi", "big-board"), terminal_size=SIZE)


def test_a_collecto_game(snap_compare: Any) -> None:
    assert snap_compare(offline("collecto"), terminal_size=SIZE, press=["right", "right"])


def test_the_game_over_screen(snap_compare: Any) -> None:
    assert snap_compare(offline("collapsi"), terminal_size=SIZE, press=["ctrl+r", "y"])
