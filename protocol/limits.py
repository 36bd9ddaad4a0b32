"""Sizes the protocol bounds: the decoder's hard limits and the schema's field limits.

The decoder limits protect the server before any model is built; the field limits
are part of the schema (names, chat, lists). A server may announce smaller frame and
rate limits in ``welcome.limits`` but never larger structural ones than these.
"""

from __future__ import annotations

from dataclasses import dataclass

# -- decoder limits -------------------------------------------------------------
MAX_FRAME_BYTES = 256 * 1024
"""Default largest frame (either encoding) the decoder accepts."""
MAX_DEPTH = 16
"""Deepest nesting of maps and arrays (the top-level map is depth 1)."""
MAX_STR_BYTES = 16 * 1024
"""Longest single string (UTF-8 bytes) anywhere in a frame."""
MAX_ARRAY_LEN = 4096
"""Longest array anywhere in a frame."""
MAX_MAP_LEN = 256
"""Most keys in one map anywhere in a frame."""
INT_MIN = -(2**63)
INT_MAX = 2**64 - 1
"""Integers must fit msgpack's 64-bit range (signed or unsigned)."""

# -- schema limits ----------------------------------------------------------------
NAME_MAX = 32
"""Player display names."""
CHAT_MAX = 500
"""Chat message text."""
ID_MAX = 64
"""Room, session, record and tournament ids, request ids, invite codes."""
TOKEN_MAX = 128
"""Secret tokens (player tokens, resume tokens)."""
SHORT_MAX = 64
"""Game, rule set, variant and seat names, software descriptions, feature names."""
MOVE_MAX = 256
"""One move in a game's notation."""
POSITION_MAX = 4096
"""A position or setup in a game's notation."""
TEXT_MAX = 500
"""Error messages and other human-readable reasons."""
MAX_SEATS = 8
"""Seats in one room."""
MAX_VERSIONS = 16
"""Protocol versions a hello may list."""
MAX_MOVES = 2048
"""Moves in a history or record, and legal moves listed in one position."""
MAX_LIST = 500
"""Rooms, leaderboard entries, tournaments and standings rows in one message."""
MAX_EVENTS = 500
"""Room events in one catch_up message (more are split over several)."""
MAX_CURSORS = 64
"""Rooms named in one resume."""
MAX_MS = 7 * 24 * 3600 * 1000
"""Longest time control value, in milliseconds (one week)."""
MAX_SEQ = 2**53 - 1
"""Largest seq, request id (as integer) and other counters: safe in every JSON reader."""


@dataclass(frozen=True, slots=True)
class DecodeLimits:
    """The decoder's limits; the server may lower ``max_frame_bytes`` for its own use."""

    max_frame_bytes: int = MAX_FRAME_BYTES
    max_depth: int = MAX_DEPTH
    max_str_bytes: int = MAX_STR_BYTES
    max_array_len: int = MAX_ARRAY_LEN
    max_map_len: int = MAX_MAP_LEN


DEFAULT_LIMITS = DecodeLimits()
