"""What an engine program can do wrong, as typed errors with stable codes.

A runner applies its strike policy (ENGINE_PROTOCOL.md, "Misbehaving engines") by type,
without parsing messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar


class EngineProcessError(Exception):
    """Base of what an engine program can do wrong; ``code`` is stable."""

    code: ClassVar[str] = "engine_error"


class EngineNotFound(EngineProcessError):
    """The program could not be started (no such file, not executable)."""

    code = "engine_not_found"


class EngineOptionUnknown(EngineNotFound):
    """An option set for the program (``--engine-option``) that it does not declare, or
    a value its declaration does not take: it cannot be run as asked (ENGINE_PROTOCOL.md:
    ``setoption`` only for declared options, as declared)."""

    code = "engine_option_unknown"


class EngineCrashed(EngineProcessError):
    """The program exited (or closed its output) when it should have answered."""

    code = "engine_crashed"

    def __init__(self, message: str, returncode: int | None = None, stderr: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class EngineTimeout(EngineProcessError):
    """No answer in time. ``late_move`` is the ``bestmove`` it gave after ``stop``, if any;
    ``hung`` is true when it did not even answer ``stop`` (the process is then killed)."""

    code = "engine_timeout"

    def __init__(self, message: str, late_move: str | None = None, hung: bool = False) -> None:
        super().__init__(message)
        self.late_move = late_move
        self.hung = hung


class EngineGarbled(EngineProcessError):
    """A line that breaks the protocol where an answer was due (``bestmove`` with no move...)."""

    code = "engine_garbled"

    def __init__(self, message: str, line: str = "") -> None:
        super().__init__(message)
        self.line = line


class EngineIllegalMove(EngineProcessError):
    """A ``bestmove`` that is not among the legal moves it was sent."""

    code = "engine_illegal_move"

    def __init__(self, message: str, move: str, legal: Sequence[str]) -> None:
        super().__init__(message)
        self.move = move
        self.legal = tuple(legal)


class EngineRefused(EngineProcessError):
    """The engine answered ``error ...`` (a game or variant it does not play)."""

    code = "engine_refused"
