"""arena bot builds a game of each spec it plays before its games start, so that the
engine's board tables (built on a board size's first game) are not built inside a move."""

from __future__ import annotations

import subprocess
import sys

from clients.bot.config import BotConfig

#: a fresh interpreter: which board sizes a config's warm-up builds (the cache is per process)
_SCRIPT = """
import sys
from clients.bot.config import BotConfig
from clients.bot.runner import warm_games
from engine.collapsi.board import board
cfg = BotConfig(url="ws://127.0.0.1:1", name="w", level="random", quick_match=sys.argv[1:])
warm_games(cfg.check().specs())
print(board.cache_info().currsize)
"""


def _boards_built(*specs: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, *specs], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[-1])


def test_each_named_spec_is_built_once_before_the_games() -> None:
    assert _boards_built("collecto") == 0  # (no Collapsi board)
    assert _boards_built("collapsi") == 1  # the 4x4 torus
    assert _boards_built("collapsi", "collapsi/big-board") == 2  # and the big board's


def test_the_specs_are_every_game_the_config_names() -> None:
    cfg = BotConfig(
        url="ws://127.0.0.1:1",
        name="w",
        level="random",
        challenge=["ann", "collapsi/shifting", "collecto", "collapsi//classic"],
    )
    assert cfg.check().specs() == [
        ("collapsi", "shifting", None),
        ("collecto", None, None),
        ("collapsi", None, "classic"),
    ]
