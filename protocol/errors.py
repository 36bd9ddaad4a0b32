"""Typed protocol errors: the fixed list of error codes, close codes and the exception.

Errors are values on the wire (an ``error`` message with a ``code``) and
exceptions inside (:class:`ProtocolError`). Every code says whether the
connection stays open after it is sent; the ones that end the connection name
the WebSocket close code the server closes with.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from protocol.server import Error


class CloseCode(IntEnum):
    """WebSocket close codes the server uses (RFC 6455 range plus 4000-4999 of our own)."""

    NORMAL = 1000
    """The client logged out, or the server ended the connection in good order."""
    GOING_AWAY = 1001
    """The server is shutting down (a ``goodbye`` message precedes the close)."""
    MESSAGE_TOO_BIG = 1009
    """A frame was larger than ``limits.max_frame_bytes``."""
    INTERNAL_ERROR = 1011
    """The server hit an unexpected condition it could not recover from for this connection."""
    PROTOCOL_ERROR = 4000
    """The first message was not ``hello``, or a message broke the connection state machine."""
    UNSUPPORTED_VERSION = 4001
    """No protocol version is shared between the client and the server."""
    SESSION_REPLACED = 4002
    """The same session was resumed on another connection."""
    TOO_SLOW = 4003
    """The client did not read its messages; its outgoing queue overflowed."""
    ABUSE = 4004
    """Sustained flooding after ``rate_limited`` errors, or repeated malformed frames."""
    TIMEOUT = 4005
    """No ``hello`` in time, or the peer stopped answering pings."""


class ErrorCode(StrEnum):
    """Every error code of protocol v1. New codes may be added within v1 (clients treat an
    unknown code like ``bad_request``: the request failed, the connection stays open)."""

    BAD_FRAME = "bad_frame"
    FRAME_TOO_LARGE = "frame_too_large"
    HELLO_REQUIRED = "hello_required"
    UNSUPPORTED_VERSION = "unsupported_version"
    UNKNOWN_TYPE = "unknown_type"
    BAD_REQUEST = "bad_request"
    NOT_AUTHENTICATED = "not_authenticated"
    ALREADY_AUTHENTICATED = "already_authenticated"
    NAME_TAKEN = "name_taken"
    UNKNOWN_SESSION = "unknown_session"
    UNKNOWN_GAME = "unknown_game"
    BAD_SETUP = "bad_setup"
    UNKNOWN_ROOM = "unknown_room"
    ROOM_FULL = "room_full"
    SEAT_OCCUPIED = "seat_occupied"
    TOO_MANY_ROOMS = "too_many_rooms"
    NOT_SEATED = "not_seated"
    NOT_STARTED = "not_started"
    NOT_YOUR_TURN = "not_your_turn"
    ILLEGAL_MOVE = "illegal_move"
    BAD_NOTATION = "bad_notation"
    GAME_OVER = "game_over"
    FORBIDDEN = "forbidden"
    UNKNOWN_RECORD = "unknown_record"
    UNKNOWN_TOURNAMENT = "unknown_tournament"
    UNKNOWN_PLAYER = "unknown_player"
    UNKNOWN_CHALLENGE = "unknown_challenge"
    RATE_LIMITED = "rate_limited"
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"


_CODES = frozenset(c.value for c in ErrorCode)


def is_error_code(code: object) -> bool:
    """Is ``code`` one of :class:`ErrorCode`'s (an error that may go on the wire as is)?"""
    return isinstance(code, str) and code in _CODES


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """What a code means, and what happens to the connection after it."""

    stays_open: bool
    close_code: CloseCode | None
    when: str


ERROR_INFO: dict[ErrorCode, ErrorInfo] = {
    ErrorCode.BAD_FRAME: ErrorInfo(
        True,
        None,
        "The frame could not be decoded: not msgpack (binary frame) or JSON (text frame), "
        "trailing bytes, invalid UTF-8, nesting deeper than the limit, a string, array or "
        "map over its limit, an integer outside 64 bits, a non-finite float, binary data, "
        "a msgpack extension type, or a top level that is not a map.",
    ),
    ErrorCode.FRAME_TOO_LARGE: ErrorInfo(
        False,
        CloseCode.MESSAGE_TOO_BIG,
        "The frame is larger than limits.max_frame_bytes. The transport may close with 1009 "
        "without sending this error first.",
    ),
    ErrorCode.HELLO_REQUIRED: ErrorInfo(
        False,
        CloseCode.PROTOCOL_ERROR,
        "The first message of a connection was not hello, or hello was sent twice.",
    ),
    ErrorCode.UNSUPPORTED_VERSION: ErrorInfo(
        False,
        CloseCode.UNSUPPORTED_VERSION,
        "hello named no protocol version the server speaks; details.versions lists the "
        "server's versions.",
    ),
    ErrorCode.UNKNOWN_TYPE: ErrorInfo(
        True,
        None,
        "The message's type is not one this server knows (details.type names it). "
        "Never a disconnect: newer clients may probe for newer messages.",
    ),
    ErrorCode.BAD_REQUEST: ErrorInfo(
        True,
        None,
        "A decodable message that breaks the schema (missing field, wrong type, value out of "
        "range; details.errors lists them) or makes no sense in the current state.",
    ),
    ErrorCode.NOT_AUTHENTICATED: ErrorInfo(
        True, None, "The request needs a login (or a resumed session) first."
    ),
    ErrorCode.ALREADY_AUTHENTICATED: ErrorInfo(
        True, None, "login or resume on a connection that already has a player."
    ),
    ErrorCode.NAME_TAKEN: ErrorInfo(
        True,
        None,
        "The name is claimed by a player with another token, or is in use by someone online.",
    ),
    ErrorCode.UNKNOWN_SESSION: ErrorInfo(
        True,
        None,
        "resume with a token the server does not know, or whose grace period ran out. "
        "The client may log in afresh.",
    ),
    ErrorCode.UNKNOWN_GAME: ErrorInfo(
        True, None, "A game, rule set or variant this server does not host."
    ),
    ErrorCode.BAD_SETUP: ErrorInfo(
        True,
        None,
        "The engine refused the room's setup (options, seat count, deck); the engine's message "
        "is passed on.",
    ),
    ErrorCode.UNKNOWN_ROOM: ErrorInfo(
        True, None, "No such room (or invite code), or the room has closed."
    ),
    ErrorCode.ROOM_FULL: ErrorInfo(True, None, "Every seat of the room is taken."),
    ErrorCode.SEAT_OCCUPIED: ErrorInfo(True, None, "take_seat named a seat someone else holds."),
    ErrorCode.TOO_MANY_ROOMS: ErrorInfo(
        True,
        None,
        "The player is already in limits.max_rooms_per_player rooms (a bot: or at the "
        "operator's cap on a bot's games at once).",
    ),
    ErrorCode.NOT_SEATED: ErrorInfo(
        True, None, "A seat-holder action (ready, move, resign, rematch) from someone not seated."
    ),
    ErrorCode.NOT_STARTED: ErrorInfo(True, None, "A move or resign before the game has started."),
    ErrorCode.NOT_YOUR_TURN: ErrorInfo(True, None, "A move from a seat that is not to move."),
    ErrorCode.ILLEGAL_MOVE: ErrorInfo(
        True, None, "The engine refused the move; the message says why. Nothing changed."
    ),
    ErrorCode.BAD_NOTATION: ErrorInfo(
        True, None, "The move text does not parse in the game's notation."
    ),
    ErrorCode.GAME_OVER: ErrorInfo(True, None, "A move, resign or offer after the game ended."),
    ErrorCode.FORBIDDEN: ErrorInfo(
        True,
        None,
        "The action is not allowed to this client: a spectator acting, a private room without "
        "its invite code, a guest asking for a rated game where the server requires a player, "
        "`abort` once every player has moved.",
    ),
    ErrorCode.UNKNOWN_RECORD: ErrorInfo(True, None, "No game record with that id."),
    ErrorCode.UNKNOWN_TOURNAMENT: ErrorInfo(True, None, "No tournament with that id."),
    ErrorCode.UNKNOWN_PLAYER: ErrorInfo(True, None, "challenge named a player who is not online."),
    ErrorCode.UNKNOWN_CHALLENGE: ErrorInfo(
        True, None, "No open challenge with that id for you (answered, canceled or gone)."
    ),
    ErrorCode.RATE_LIMITED: ErrorInfo(
        True,
        None,
        "Too many messages (or costly requests: catch-ups, new solo puzzles, failed logins); "
        "the request was dropped. retry_after (ms) says when a token is available again. "
        "Sustained flooding is closed with 4004.",
    ),
    ErrorCode.UNAVAILABLE: ErrorInfo(
        True,
        None,
        "A backend the request needs (presence store, ratings, records) is down; retry after "
        "retry_after ms.",
    ),
    ErrorCode.INTERNAL: ErrorInfo(
        True,
        None,
        "A bug on the server while handling this request; the request had no effect or its "
        "effect is announced by events. Fatal cases close with 1011.",
    ),
}

_KNOWN = frozenset(c.value for c in ErrorCode)

MAX_MESSAGE_CHARS = 500
"""Longest ``message`` text of an error; longer texts are cut."""


class ProtocolError(Exception):
    """A protocol-level failure with a wire ``code``.

    Raised by the codec (bad frames, unknown types, schema violations) and usable by the
    server for any refusal; :meth:`to_message` turns it into the ``error`` message to send.
    ``re`` is the offending request's ``id`` when it could be read.
    """

    def __init__(
        self,
        code: ErrorCode | str,
        message: str,
        *,
        re: int | str | None = None,
        retry_after: int | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        # Codes unknown to this version (a newer server) are kept as plain strings.
        self.code: ErrorCode | str = ErrorCode(code) if code in _KNOWN else str(code)
        self.message = message[:MAX_MESSAGE_CHARS]
        self.re = re
        self.retry_after = retry_after
        self.details = details

    @property
    def stays_open(self) -> bool:
        """Whether the connection stays open after this error is sent."""
        info = ERROR_INFO.get(self.code)  # type: ignore[call-overload]
        return True if info is None else info.stays_open

    @property
    def close_code(self) -> CloseCode | None:
        """The WebSocket close code to close with after sending, if the error ends the link."""
        info = ERROR_INFO.get(self.code)  # type: ignore[call-overload]
        return None if info is None else info.close_code

    def to_message(self) -> Error:
        """The ``error`` message for this failure."""
        from protocol.server import Error

        return Error(
            code=str(self.code),
            message=self.message or str(self.code),
            re=self.re,
            retry_after=self.retry_after,
            details=self.details,
        )

    def __repr__(self) -> str:
        return f"ProtocolError({str(self.code)!r}, {self.message!r}, re={self.re!r})"
