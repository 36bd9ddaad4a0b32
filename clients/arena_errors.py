"""The server's ``error`` replies as exceptions: one class per protocol error code.

Why a module of their own: everything that talks to a server catches them (the client
library, the bot runner, the terminal client), and :mod:`clients.client` re-exports
them, where users import them from.
"""

from __future__ import annotations

from typing import Any

from protocol import messages as m
from protocol.errors import ErrorCode


class ArenaError(Exception):
    """An ``error`` reply from the server (or a refused local request)."""

    code: str = "error"

    def __init__(
        self,
        code: str,
        message: str,
        retry_after: int | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.details = details or {}


class ConnectionLost(ArenaError):
    """The connection closed while a request was waiting for its reply."""

    def __init__(self, message: str = "connection closed") -> None:
        super().__init__("connection_lost", message)


def _class_name(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("_")) + "Error"


#: one exception class per protocol error code, e.g. ``ERRORS["illegal_move"]``
ERRORS: dict[str, type[ArenaError]] = {
    code.value: type(_class_name(code.value), (ArenaError,), {"code": code.value})
    for code in ErrorCode
}
IllegalMoveError = ERRORS["illegal_move"]
NotYourTurnError = ERRORS["not_your_turn"]
NotSeatedError = ERRORS["not_seated"]
ForbiddenError = ERRORS["forbidden"]
RateLimitedError = ERRORS["rate_limited"]
GameOverError = ERRORS["game_over"]
UnknownRoomError = ERRORS["unknown_room"]
UnknownSessionError = ERRORS["unknown_session"]
NameTakenError = ERRORS["name_taken"]


def error_from(msg: m.Error) -> ArenaError:
    cls = ERRORS.get(msg.code, ArenaError)
    return cls(msg.code, msg.message, msg.retry_after, msg.details)
