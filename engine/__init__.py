"""Game rules for the arena: pure Python, no I/O, no third-party imports.

Use :func:`new_game` to create any registered game by name and
:func:`replay` to rebuild one from its record.
"""

from engine.base import (
    EngineError,
    Game,
    GameOver,
    GameRecord,
    IllegalMove,
    NotationError,
    Result,
    SetupError,
    game_class,
    game_names,
    new_game,
    register,
    replay,
)

__all__ = [
    "EngineError",
    "Game",
    "GameOver",
    "GameRecord",
    "IllegalMove",
    "NotationError",
    "Result",
    "SetupError",
    "game_class",
    "game_names",
    "new_game",
    "register",
    "replay",
]
