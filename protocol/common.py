"""Building blocks shared by both directions: bounded scalar types and small structures.

Every model is strict (no silent coercion: ``"1"`` is not an int, ``1`` is not a bool)
and ignores unknown fields, so additive changes within v1 never break an older peer.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from protocol.limits import (
    CHAT_MAX,
    ID_MAX,
    MAX_MS,
    MAX_SEATS,
    MAX_SEQ,
    MOVE_MAX,
    NAME_MAX,
    POSITION_MAX,
    SHORT_MAX,
    TEXT_MAX,
    TOKEN_MAX,
)

# Control characters never appear in names or ids (they would corrupt terminals and logs).
_PRINTABLE = r"^[^\x00-\x1f\x7f]+$"

Name = Annotated[str, StringConstraints(min_length=1, max_length=NAME_MAX, pattern=_PRINTABLE)]
"""A player's display name: 1-32 characters, no control characters."""
Id = Annotated[
    str, StringConstraints(min_length=1, max_length=ID_MAX, pattern=r"^[A-Za-z0-9_.:-]+$")
]
"""An opaque server-chosen id (room, session, record, tournament, invite code)."""
Token = Annotated[
    str, StringConstraints(min_length=1, max_length=TOKEN_MAX, pattern=r"^[\x21-\x7e]+$")
]
"""A secret: printable ASCII, no spaces, 1-128 characters."""
Short = Annotated[str, StringConstraints(min_length=1, max_length=SHORT_MAX, pattern=_PRINTABLE)]
"""A short label: game, rule set, variant, seat name, software."""
GameName = Annotated[
    str, StringConstraints(min_length=1, max_length=SHORT_MAX, pattern=r"^[a-z0-9_.+-]+$")
]
"""A game's registry name, or a rule set or variant name: lowercase letters, digits and
``_.+-`` (variants combine with ``+``, e.g. ``big-board+shifting``)."""
Move = Annotated[str, StringConstraints(min_length=1, max_length=MOVE_MAX)]
"""One move in the game's own notation."""
Notation = Annotated[str, StringConstraints(min_length=1, max_length=POSITION_MAX)]
"""A position or setup in the game's own notation."""
ChatText = Annotated[str, StringConstraints(min_length=1, max_length=CHAT_MAX)]
Text = Annotated[str, StringConstraints(max_length=TEXT_MAX)]
ErrorCodeText = Annotated[
    str, StringConstraints(min_length=1, max_length=SHORT_MAX, pattern=r"^[a-z0-9_]+$")
]
RequestId = (
    Annotated[int, Field(ge=0, le=MAX_SEQ)]
    | Annotated[str, StringConstraints(min_length=1, max_length=ID_MAX)]
)
"""A client-chosen request id, echoed as ``re``: an integer 0..2^53-1 or a 1-64 char string."""
Seat = Annotated[int, Field(ge=0, lt=MAX_SEATS)]
"""A seat index, 0 = first to move in the first game."""
Seq = Annotated[int, Field(ge=0, le=MAX_SEQ)]
"""A room event's sequence number; the first event of a room has seq 1."""
Count = Annotated[int, Field(ge=0, le=MAX_SEQ)]
Ms = Annotated[int, Field(ge=0, le=MAX_MS)]
"""A duration in milliseconds, at most one week."""
Timestamp = Annotated[int, Field(ge=0, le=MAX_SEQ)]
"""Milliseconds since the Unix epoch (UTC), as the server's clock saw it."""
Rating = Annotated[float, Field(ge=-100_000, le=100_000, allow_inf_nan=False)]
JsonObject = dict[str, Any]
"""A JSON object (structured views, game options); the decoder has bounded it already."""


class Model(BaseModel):
    """Base of every protocol structure: strict, unknown fields ignored."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class Fischer(Model):
    """Fischer clock: ``base_ms`` each, plus ``increment_ms`` after every own move."""

    kind: Literal["fischer"] = "fischer"
    base_ms: Annotated[int, Field(ge=1, le=MAX_MS)]
    increment_ms: Ms = 0


class PerMove(Model):
    """A fixed time for every move; it does not carry over."""

    kind: Literal["per_move"] = "per_move"
    ms: Annotated[int, Field(ge=1, le=MAX_MS)]


class Untimed(Model):
    """No clock."""

    kind: Literal["none"] = "none"


TimeControl = Annotated[Fischer | PerMove | Untimed, Field(discriminator="kind")]


class Clock(Model):
    """The clocks as the server saw them when it sent the message.

    ``remaining_ms[s]`` is seat ``s``'s time left (per_move: the running seat's time left
    for this move, the others' full allowance). ``running`` is the seat whose clock is
    running (``null`` when stopped). A client displays ``remaining_ms[running]`` minus
    the time since it received the message.
    """

    remaining_ms: Annotated[
        list[Annotated[int, Field(ge=0, le=MAX_MS)]], Field(max_length=MAX_SEATS)
    ]
    running: Seat | None = None


class Player(Model):
    """Who someone is: a name, whether a guest (no claimed name), whether a bot."""

    name: Name
    guest: bool = False
    bot: bool = False
    rating: Rating | None = None
    """The player's rating in the room's game, when the context has one."""


class SeatInfo(Model):
    """One seat of a room."""

    seat: Seat
    label: Short
    """The game's name for the seat, e.g. ``red``."""
    player: Player | None = None
    ready: bool = False
    connected: bool = True


class GameResult(Model):
    """How a game ended: the engine's ``Result.to_dict()``.

    ``winner`` is a seat or ``null`` (draw, failed puzzle); ``order`` lists seats first to
    last; ``reason`` is ``no_moves``, ``score``, ``solved``, ``failed``, ``resign``,
    ``timeout``, ``abandon`` or ``aborted`` (more may be added); ``scores`` per seat, when
    the game has them.
    """

    winner: Seat | None
    order: Annotated[list[Seat], Field(max_length=MAX_SEATS)]
    reason: Short
    scores: Annotated[list[int], Field(max_length=MAX_SEATS)] | None = None


class RecordForfeit(Model):
    """A player who went out by forfeit while the game went on (3-4 players): after
    ``ply`` moves (a replay takes the seat out before move ``ply + 1``)."""

    seat: Seat
    ply: Annotated[int, Field(ge=0, le=2048)]
    reason: Short


class GameRecordData(Model):
    """A finished (or running) game's record: the engine's ``GameRecord.to_dict()``."""

    game: GameName
    rules: GameName
    rules_version: Short
    variant: GameName
    seed: int | None = None
    setup: Notation
    players: Annotated[list[Name], Field(max_length=MAX_SEATS)]
    moves: Annotated[list[Move], Field(max_length=2048)] = []
    result: GameResult | None = None
    options: JsonObject = {}
    forfeits: Annotated[list[RecordForfeit], Field(max_length=MAX_SEATS)] = []
    """Forfeits that took a player out while the others played on, in order; a forfeit
    that ended the game is the ``result`` instead (empty, or left out, otherwise)."""


class RatingChange(Model):
    """One seat's rating change after a rated game."""

    seat: Seat
    name: Name
    before: Rating
    after: Rating


class RoomCursor(Model):
    """The last room event a client saw, for resume and catch-up."""

    room: Id
    seq: Seq


class RoomSummary(Model):
    """A room as the lobby lists it (private rooms are never listed)."""

    room: Id
    game: GameName
    rules: GameName
    variant: GameName
    seats: Annotated[list[SeatInfo], Field(max_length=MAX_SEATS)]
    time_control: TimeControl
    rated: bool
    status: Literal["waiting", "playing", "finished"]
    spectators: Count = 0
    created_at: Timestamp | None = None


class LeaderboardEntry(Model):
    rank: Annotated[int, Field(ge=1, le=MAX_SEQ)]
    name: Name
    rating: Rating
    deviation: Rating | None = None
    """The Glicko-2 rating deviation."""
    games: Count = 0
    bot: bool = False


class RecordSummary(Model):
    """A finished game as ``record_list`` lists it (added within v1): what a client shows
    in a list before it fetches the whole record with ``get_record``."""

    record: Id
    """The record's id, for ``get_record``."""
    game: GameName
    rules: GameName
    variant: GameName
    players: Annotated[list[Name], Field(max_length=MAX_SEATS)]
    """Names in seat order."""
    result: GameResult | None = None
    moves: Annotated[int, Field(ge=0, le=2048)] = 0
    """How many moves the game had."""
    rated: bool = False
    private: bool = False
    """Played in a private room (listed only to its players)."""
    finished_at: Timestamp | None = None


class TournamentSummary(Model):
    """A tournament as listed. The fields after ``starts_at`` were added within v1."""

    tournament: Id
    name: Annotated[str, StringConstraints(min_length=1, max_length=TEXT_MAX)]
    game: GameName
    variant: GameName
    format: Short
    """``round_robin``, ``swiss`` or ``arena`` on the reference server (an open field)."""
    status: Literal["open", "running", "finished"]
    players: Count = 0
    max_players: Count | None = None
    time_control: TimeControl
    starts_at: Timestamp | None = None
    rules: GameName | None = None
    rated: bool | None = None
    rounds: Count | None = None
    """Swiss: the number of rounds; round robin: the number of cycles."""
    duration_ms: Ms | None = None
    """Arena: how long new pairings are made after the start."""
    round: Count | None = None
    """The current round (0 before the start)."""
    ends_at: Timestamp | None = None
    cancelled: bool | None = None
    """A cancelled tournament is ``finished`` with ``cancelled: true``."""


class TournamentGame(Model):
    """One pairing of a tournament (added within v1): an ordinary room, watchable by id."""

    round: Count
    room: Id
    players: Annotated[list[Name], Field(min_length=2, max_length=2)]
    """Names in seat order (the first moves first)."""
    status: Literal["playing", "finished"]
    points: Annotated[list[float], Field(min_length=2, max_length=2)] | None = None
    """What each seat scored (1, 0.5 or 0), once finished."""
    reason: Short | None = None
    """How the game ended (``result.reason``), or ``forfeit`` (an opponent withdrew)."""
    record: Id | None = None
    """The game's record (``get_record``), once finished; none for a forfeit."""


class StandingRow(Model):
    rank: Annotated[int, Field(ge=1, le=MAX_SEQ)]
    name: Name
    points: Annotated[float, Field(ge=-1e9, le=1e9, allow_inf_nan=False)]
    games: Count = 0
    wins: Count = 0
    draws: Count = 0
    losses: Count = 0
    #: added within v1: the player left the tournament (no more pairings)
    withdrawn: bool = False
    #: added within v1: Sonneborn-Berger score, the first tie-break
    tiebreak: Annotated[float, Field(ge=-1e9, le=1e9, allow_inf_nan=False)] | None = None


class GameInfo(Model):
    """A game the server hosts, with its rule sets and variants (first = default)."""

    game: GameName
    rule_sets: Annotated[list[GameName], Field(min_length=1, max_length=32)]
    variants: Annotated[list[GameName], Field(min_length=1, max_length=32)]
    min_players: Annotated[int, Field(ge=1, le=MAX_SEATS)] = 2
    max_players: Annotated[int, Field(ge=1, le=MAX_SEATS)] = 2


class Rate(Model):
    """Token bucket: ``burst`` messages at once, refilled at ``per_second``."""

    burst: Annotated[int, Field(ge=1, le=1_000_000)]
    per_second: Annotated[float, Field(gt=0, le=1_000_000, allow_inf_nan=False)]


class Limits(Model):
    """The limits this server enforces on this connection (more may be added)."""

    max_frame_bytes: Annotated[int, Field(ge=1024, le=64 * 1024 * 1024)]
    rate: Rate
    max_rooms_per_player: Annotated[int, Field(ge=1, le=10_000)] = 8
    name_max: Annotated[int, Field(ge=1, le=NAME_MAX)] = NAME_MAX
    chat_max: Annotated[int, Field(ge=1, le=CHAT_MAX)] = CHAT_MAX
    resume_grace_ms: Ms = 60_000
    """How long a dropped session (and its seats) waits for a resume."""
    ping_interval_ms: Ms = 20_000
    """How often the server pings (WebSocket ping frames); answer them to stay connected."""


class ServerInfo(Model):
    name: Short
    software: Short
    node: Short
