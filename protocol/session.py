"""The connection state machine of protocol v1, sans-I/O.

A connection goes ``hello`` -> ``welcome`` (phase ``anonymous``) -> ``login``/``resume``
-> ``logged_in``/``resumed`` (phase ``authenticated``) -> ``logout`` or a close.
:func:`admit` says whether a message type may be sent in a phase; the server calls it
before dispatching, so every implementation refuses the same things with the same codes.
"""

from __future__ import annotations

from enum import StrEnum

from protocol.errors import ErrorCode, ProtocolError


class Phase(StrEnum):
    AWAIT_HELLO = "await_hello"
    """Connected; the first message must be ``hello``."""
    ANONYMOUS = "anonymous"
    """``welcome`` sent; reading and watching allowed, acting needs a login."""
    AUTHENTICATED = "authenticated"
    """Logged in (or resumed): everything is allowed."""
    CLOSED = "closed"
    """``logout`` done or the connection is closing; nothing more is processed."""


ANONYMOUS_TYPES: frozenset[str] = frozenset(
    {
        "login",
        "resume",
        "logout",
        "ping",
        "list_rooms",
        "lobby_subscribe",
        "lobby_unsubscribe",
        "watch",
        "leave_room",
        "get_record",
        "get_leaderboard",
        "list_records",
        "list_tournaments",
        "get_standings",
        "tournament_subscribe",
        "tournament_unsubscribe",
        "create_tournament",
        "start_tournament",
        "cancel_tournament",
    }
)
"""Message types accepted before ``login``: log in, read the lobby, ratings, records,
tournaments, and watch games. Everything else answers ``not_authenticated``."""

SESSION_START_TYPES: frozenset[str] = frozenset({"login", "resume"})


def admit(phase: Phase, msg_type: str, re: int | str | None = None) -> None:
    """Raise the :class:`ProtocolError` the server must answer when ``msg_type`` is not
    allowed in ``phase``; return quietly when it is.

    ``hello`` anywhere but first, or anything before ``hello``: ``hello_required`` (closes
    with 4000). A second ``login``/``resume``: ``already_authenticated``.
    """
    if phase is Phase.CLOSED:
        raise ProtocolError(ErrorCode.BAD_REQUEST, "the connection is closing", re=re)
    if phase is Phase.AWAIT_HELLO:
        if msg_type != "hello":
            raise ProtocolError(ErrorCode.HELLO_REQUIRED, "the first message must be hello", re=re)
        return
    if msg_type == "hello":
        raise ProtocolError(ErrorCode.HELLO_REQUIRED, "hello was already received", re=re)
    if phase is Phase.ANONYMOUS:
        if msg_type not in ANONYMOUS_TYPES:
            raise ProtocolError(
                ErrorCode.NOT_AUTHENTICATED, f"log in before sending {msg_type}", re=re
            )
        return
    if msg_type in SESSION_START_TYPES:
        raise ProtocolError(
            ErrorCode.ALREADY_AUTHENTICATED, "this connection already has a player", re=re
        )


def next_phase(phase: Phase, sent_type: str) -> Phase:
    """The phase after the server sent ``sent_type`` successfully (welcome, logged_in...)."""
    if sent_type == "welcome" and phase is Phase.AWAIT_HELLO:
        return Phase.ANONYMOUS
    if sent_type in ("logged_in", "resumed") and phase is Phase.ANONYMOUS:
        return Phase.AUTHENTICATED
    if sent_type == "goodbye":
        return Phase.CLOSED
    return phase
