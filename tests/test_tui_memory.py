"""``arena tui`` does not keep the screens it closed (clients/tui/memory.py): Textual's
footer kept every key it ever composed, and its styles cache kept every widget drawn;
a long session's heap grew by about 12,000 objects a game, and every full garbage
collection paused the screen longer (bench/tui.py)."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from textual._styles_cache import StylesCache
from textual.widgets._footer import FooterKey

from clients.tui.app import ArenaTui
from clients.tui.lobby import LeaderboardScreen
from tests.tui_pilot import SIZE, game_screen, until


def alive(kind: type) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, kind))


@pytest.mark.timeout(60)
async def test_screens_opened_and_closed_are_freed() -> None:
    """A game screen, and a screen shown over it and closed eight times: as many footer
    keys and styles caches alive at the end as after the first time."""
    app = ArenaTui(
        "ws://127.0.0.1:9", offline=("collapsi", "random", None), config=Path(os.devnull)
    )
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: game_screen(app), "the game")
        counts = []
        for _ in range(8):
            await app.push_screen(LeaderboardScreen("collapsi", []))
            await pilot.pause()
            await app.pop_screen()  # the game screen again: its footer composes its keys
            await until(pilot, lambda: app.screen.query(FooterKey), "the footer's keys")
            await pilot.pause()
            counts.append((alive(FooterKey), alive(StylesCache)))
        assert counts[-1][0] <= counts[0][0] and counts[-1][1] <= counts[0][1], counts
