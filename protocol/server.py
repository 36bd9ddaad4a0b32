"""Messages the server sends to clients, one class per ``type``.

Replies carry ``re`` (the request's ``id``) when the request had one. Room events carry
the room id and ``seq``: per room, gap-free, starting at 1, so a client that saw seq N
can ask for everything after N. A ``room_state`` snapshot carries the seq of the last
event it reflects; apply only events with a higher seq after it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from protocol.common import (
    ChatText,
    Clock,
    Count,
    ErrorCodeText,
    GameInfo,
    GameName,
    GameRecordData,
    GameResult,
    Id,
    JsonObject,
    LeaderboardEntry,
    Limits,
    Model,
    Move,
    Ms,
    Name,
    Notation,
    Player,
    RatingChange,
    RecordSummary,
    RequestId,
    RoomSummary,
    Seat,
    SeatInfo,
    Seq,
    ServerInfo,
    Short,
    StandingRow,
    Text,
    TimeControl,
    Timestamp,
    Token,
    TournamentGame,
    TournamentSummary,
)
from protocol.limits import MAX_EVENTS, MAX_LIST, MAX_MOVES, MAX_SEATS

Seats = Annotated[list[SeatInfo], Field(max_length=MAX_SEATS)]
Moves = Annotated[list[Move], Field(max_length=MAX_MOVES)]


class ServerBase(Model):
    """The server envelope: ``type`` and, on a reply, ``re`` (the request's ``id``)."""

    type: str
    re: RequestId | None = None


class RoomEventBase(ServerBase):
    """A room event: it belongs to ``room`` and has that room's next ``seq``."""

    room: Id
    seq: Seq


# -- session -------------------------------------------------------------------------------


class Welcome(ServerBase):
    """The answer to ``hello``: the version chosen, the server, its limits and games.

    ``session`` identifies this connection's session in logs; ``resume_token`` is the
    secret to ``resume`` it from a new connection if this one drops. ``features`` names
    additive v1 extensions this server supports (``move_reply``: see ``MakeMove.reply``;
    ``list_records``: see ``ListRecords``).
    """

    type: Literal["welcome"] = "welcome"
    version: Annotated[int, Field(ge=1, le=65535)]
    server: ServerInfo
    session: Id
    resume_token: Token
    limits: Limits
    games: Annotated[list[GameInfo], Field(max_length=64)]
    features: Annotated[list[Short], Field(max_length=64)] = []


class LoggedIn(ServerBase):
    """The answer to ``login``.

    ``session``, ``resume_token`` and ``rooms`` are there only when the login took over
    the player's own session, dropped and still in its grace period (as a ``resume``
    would): the connection is now that session (keep this ``resume_token``, the
    ``welcome``'s is void), and one ``room_state`` per room follows, as after ``resumed``.
    """

    type: Literal["logged_in"] = "logged_in"
    player: Player
    session: Id | None = None
    resume_token: Token | None = None
    rooms: Annotated[list[Id], Field(max_length=MAX_LIST)] | None = None


class Resumed(ServerBase):
    """The answer to ``resume``: the session's player and rooms. One ``catch_up`` (or
    ``room_state``) per room follows. Keep ``resume_token`` for the next resume."""

    type: Literal["resumed"] = "resumed"
    player: Player
    session: Id
    resume_token: Token
    rooms: Annotated[list[Id], Field(max_length=MAX_LIST)] = []


class Ack(ServerBase):
    """The request was accepted; its effects (if any) arrive as events."""

    type: Literal["ack"] = "ack"


class Pong(ServerBase):
    type: Literal["pong"] = "pong"


class Goodbye(ServerBase):
    """Sent just before the server closes the connection on its own initiative.

    ``reason``: ``shutdown``, ``session_replaced``, ``logout``, ``idle``, ``abuse`` (more may
    be added). ``reconnect_after_ms`` suggests when to come back (shutdown of one node).
    """

    type: Literal["goodbye"] = "goodbye"
    reason: Short
    message: Text = ""
    reconnect_after_ms: Ms | None = None


class Error(ServerBase):
    """A request failed (or a frame could not be read). See the error code table.

    ``code`` may be a code this client does not know (added later within v1): treat it as
    ``bad_request``. ``retry_after`` (ms) comes with ``rate_limited`` and ``unavailable``.
    """

    type: Literal["error"] = "error"
    code: ErrorCodeText
    message: Text
    retry_after: Ms | None = None
    details: JsonObject | None = None


# -- lobby ---------------------------------------------------------------------------------


class RoomList(ServerBase):
    """Public rooms, newest first; ``truncated`` when more exist than were sent."""

    type: Literal["room_list"] = "room_list"
    rooms: Annotated[list[RoomSummary], Field(max_length=MAX_LIST)]
    truncated: bool = False


class LobbyRoom(ServerBase):
    """A lobby event (to subscribers) with a room's summary: one definition of the two
    below (not itself sent)."""

    summary: RoomSummary


class RoomAdded(LobbyRoom):
    """Lobby event (to subscribers): a public room appeared."""

    type: Literal["room_added"] = "room_added"


class RoomUpdated(LobbyRoom):
    """Lobby event: a listed room changed (seats, status, spectators)."""

    type: Literal["room_updated"] = "room_updated"


class RoomRemoved(ServerBase):
    """Lobby event: a room left the lobby (closed, or finished and gone)."""

    type: Literal["room_removed"] = "room_removed"
    room: Id


class Queued(ServerBase):
    """The answer to ``quick_match``: the client waits in this queue."""

    type: Literal["queued"] = "queued"
    game: GameName
    rules: GameName
    variant: GameName
    time_control: TimeControl
    waiting: Count | None = None
    """Players waiting in the queue, including this one, when the server knows."""


class ChallengeSent(ServerBase):
    """The answer to ``challenge``: ``name`` was told (it is online)."""

    type: Literal["challenge_sent"] = "challenge_sent"
    challenge: Id
    name: Name


class Challenged(ServerBase):
    """``player`` challenges you (sent at once, whichever node you are on). Answer with
    ``accept_challenge`` or ``decline_challenge``, or leave it: it ends when either
    side leaves the server (``challenge_ended``)."""

    type: Literal["challenged"] = "challenged"
    challenge: Id
    player: Player
    game: GameName
    rules: GameName
    variant: GameName
    time_control: TimeControl
    rated: bool


class ChallengeEnded(ServerBase):
    """A challenge ended without a game: ``reason`` is ``declined`` (to the challenger),
    ``canceled`` (to the challenged), ``gone`` (the other side left), or a later addition."""

    type: Literal["challenge_ended"] = "challenge_ended"
    challenge: Id
    reason: Short
    decline_reason: Short | None = None
    """With ``declined``: the reason the challenged side gave (``decline_challenge``'s
    ``reason``, added within v1), when it gave one; a value this client does not know
    is read as ``generic``."""


class Matched(ServerBase):
    """Quick match found a game: the client was joined to ``room`` at ``seat``.

    The room's ``room_state`` follows; the game starts when every seat is ready (the
    server may start matched games at once; ``game_started`` tells)."""

    type: Literal["matched"] = "matched"
    room: Id
    seat: Seat
    #: added within v1: the tournament this game is a pairing of, and its round
    tournament: Id | None = None
    round: Count | None = None
    #: added within v1: the challenge this game was made from (accepted), to both sides
    challenge: Id | None = None


# -- room ----------------------------------------------------------------------------------


class RoomState(ServerBase):
    """A full snapshot of a room, sent on create, join, watch and when catch-up is impossible.

    ``seq`` is the last event it reflects (0 for a brand-new room). Game fields are
    ``null`` (lists empty) until the first game starts; after a game ends they describe
    the final position until a rematch starts. ``you`` is the recipient's seat, if any.
    """

    type: Literal["room_state"] = "room_state"
    room: Id
    seq: Seq
    game: GameName
    rules: GameName
    rules_version: Short | None = None
    variant: GameName
    options: JsonObject = {}
    time_control: TimeControl
    rated: bool
    private: bool
    invite: Id | None = None
    """The invite code of a private room (sent to its members only)."""
    status: Literal["waiting", "playing", "finished"]
    seats: Seats
    spectators: Count = 0
    you: Seat | None = None
    role: Literal["player", "spectator"] = "player"
    game_number: Count = 0
    """1 for the first game of the room, 2 after a rematch...; 0 before any game started."""
    setup: Notation | None = None
    position: Notation | None = None
    view: JsonObject | None = None
    to_move: Seat | None = None
    legal_moves: Moves = []
    history: Moves = []
    clock: Clock | None = None
    result: GameResult | None = None
    record: Id | None = None
    rematch: Annotated[list[Seat], Field(max_length=MAX_SEATS)] = []
    """Seats that have asked for a rematch of the finished game."""


class PlayerJoined(RoomEventBase):
    type: Literal["player_joined"] = "player_joined"
    player: Player


class PlayerLeft(RoomEventBase):
    """A player left the room (their seat, if any, is freed or, mid-game, forfeited)."""

    type: Literal["player_left"] = "player_left"
    name: Name


class PlayerDisconnected(RoomEventBase):
    """A player's connection dropped; they have ``grace_ms`` to resume before they lose
    by abandonment (if seated in a running game). Clocks keep running."""

    type: Literal["player_disconnected"] = "player_disconnected"
    name: Name
    seat: Seat | None = None
    grace_ms: Ms


class PlayerReconnected(RoomEventBase):
    type: Literal["player_reconnected"] = "player_reconnected"
    name: Name
    seat: Seat | None = None


class SeatTaken(RoomEventBase):
    type: Literal["seat_taken"] = "seat_taken"
    seat: Seat
    player: Player


class SeatFreed(RoomEventBase):
    type: Literal["seat_freed"] = "seat_freed"
    seat: Seat
    name: Name


class ReadyChanged(RoomEventBase):
    type: Literal["ready_changed"] = "ready_changed"
    seat: Seat
    ready: bool


class GameStarted(RoomEventBase):
    """A game began (the first, or a rematch with seats rotated: see ``seats``)."""

    type: Literal["game_started"] = "game_started"
    game_number: Annotated[int, Field(ge=1)]
    seats: Seats
    setup: Notation
    position: Notation
    view: JsonObject
    to_move: Seat | None = None
    """``null`` (left out on the wire, like every top-level null) when the deal is already over."""
    legal_moves: Moves
    clock: Clock | None = None


class MoveMade(RoomEventBase):
    """``seat`` played ``move``; the position after it, who is to move, their legal moves.

    ``ply`` counts moves of this game from 1. ``to_move`` is ``null`` when the move ended
    the game (a ``game_over`` event follows)."""

    type: Literal["move_made"] = "move_made"
    ply: Annotated[int, Field(ge=1, le=MAX_MOVES)]
    seat: Seat
    move: Move
    position: Notation
    view: JsonObject
    to_move: Seat | None = None
    """``null`` (left out on the wire, like every top-level null) after the game's last move."""
    legal_moves: Moves
    clock: Clock | None = None


class PlayerEliminated(RoomEventBase):
    """A player of a game of three or more went out by forfeit and the others play on.

    ``reason``: ``resign``, ``timeout``, ``abandon`` (leaving the room or logging out
    counts as ``resign``), or a later addition. ``ply`` is the number of moves played so
    far (the player went out after move ``ply``). ``position``, ``view``, ``to_move``,
    ``legal_moves`` and ``clock`` are as after a move: if it was the player's turn, the
    turn has passed on (act on this event as on ``move_made``). ``to_move`` is ``null``
    when the game ended with it (a ``game_over`` event follows). A forfeit that leaves
    one player in is not announced with this event: ``game_over`` ends the game."""

    type: Literal["player_eliminated"] = "player_eliminated"
    seat: Seat
    reason: Short
    ply: Annotated[int, Field(ge=0, le=MAX_MOVES)]
    position: Notation
    view: JsonObject
    to_move: Seat | None = None
    legal_moves: Moves
    clock: Clock | None = None


class ClockUpdate(RoomEventBase):
    """The clocks changed other than by a move (started, paused, a flag fell)."""

    type: Literal["clock_update"] = "clock_update"
    clock: Clock


class GameOver(RoomEventBase):
    """The game ended. ``ratings`` lists rating changes of a rated game (may be empty when
    the rating backend is slow: the record still lists the result). ``record`` is the id
    for ``get_record``."""

    type: Literal["game_over"] = "game_over"
    game_number: Annotated[int, Field(ge=1)]
    result: GameResult
    ratings: Annotated[list[RatingChange], Field(max_length=MAX_SEATS)] = []
    record: Id | None = None


class ChatMessage(RoomEventBase):
    type: Literal["chat_message"] = "chat_message"
    name: Name
    text: ChatText
    spectator: bool = False


class RematchOffered(RoomEventBase):
    """``seat`` wants another game; the others accept with ``accept_rematch``."""

    type: Literal["rematch_offered"] = "rematch_offered"
    seat: Seat


class RoomClosed(RoomEventBase):
    """The room is gone (everyone left, or the server shut it); its last event."""

    type: Literal["room_closed"] = "room_closed"
    reason: Short


RoomEvent = Annotated[
    PlayerJoined
    | PlayerLeft
    | PlayerDisconnected
    | PlayerReconnected
    | SeatTaken
    | SeatFreed
    | ReadyChanged
    | GameStarted
    | MoveMade
    | PlayerEliminated
    | ClockUpdate
    | GameOver
    | ChatMessage
    | RematchOffered
    | RoomClosed,
    Field(discriminator="type"),
]
"""Every event that goes into a room's log and carries a ``seq``."""


class CatchUp(ServerBase):
    """The events of ``room`` after a client's last seen seq, oldest first, gap-free.

    Long gaps are split over several ``catch_up`` messages; ``more`` is true on all
    but the last. Live events follow the last one."""

    type: Literal["catch_up"] = "catch_up"
    room: Id
    events: Annotated[list[RoomEvent], Field(max_length=MAX_EVENTS)]
    more: bool = False


class Spectators(ServerBase):
    """How many spectators watch ``room`` now (added within v1). Every member of the room
    gets it when the count changes, and a member whose session resumed (or a spectator
    that watched with ``since_seq``) gets it right after its ``catch_up``: it is not a
    room event (no ``seq``, not in the room's log), so a catch-up does not carry it."""

    type: Literal["spectators"] = "spectators"
    room: Id
    count: Count


# -- records, ratings, tournaments ---------------------------------------------------------


class Record(ServerBase):
    """A finished game's record (replayable with the engine), its id and rating changes."""

    type: Literal["record"] = "record"
    record: Id
    data: GameRecordData
    rated: bool = False
    ratings: Annotated[list[RatingChange], Field(max_length=MAX_SEATS)] = []
    finished_at: Timestamp | None = None
    #: with ``get_record.views``: the game's ``view`` at the start and after each move
    #: (added within v1, for clients that cannot replay the game themselves)
    views: Annotated[list[JsonObject], Field(max_length=MAX_MOVES + 1)] | None = None


class Leaderboard(ServerBase):
    type: Literal["leaderboard"] = "leaderboard"
    game: GameName
    entries: Annotated[list[LeaderboardEntry], Field(max_length=MAX_LIST)]
    total: Count | None = None


class RecordList(ServerBase):
    """The answer to ``list_records`` (added within v1): finished games, newest first.
    ``next_offset`` is the ``offset`` of the next page, ``null`` when there is no more;
    a page may hold fewer than ``limit`` records (even none) while there is more."""

    type: Literal["record_list"] = "record_list"
    records: Annotated[list[RecordSummary], Field(max_length=MAX_LIST)]
    next_offset: Count | None = None


class TournamentList(ServerBase):
    type: Literal["tournament_list"] = "tournament_list"
    tournaments: Annotated[list[TournamentSummary], Field(max_length=MAX_LIST)]


class Standings(ServerBase):
    """A tournament's table; pushed (no ``re``) to subscribers whenever it changes."""

    type: Literal["standings"] = "standings"
    tournament: Id
    status: Literal["open", "running", "finished"]
    round: Count | None = None
    rows: Annotated[list[StandingRow], Field(max_length=MAX_LIST)]
    #: added within v1: the tournament as listed, and its games (newest last)
    summary: TournamentSummary | None = None
    games: Annotated[list[TournamentGame], Field(max_length=MAX_LIST)] | None = None


class TournamentCreated(ServerBase):
    """The answer to ``create_tournament`` (added within v1)."""

    type: Literal["tournament_created"] = "tournament_created"
    tournament: TournamentSummary


_ROOM_EVENT_CLASSES = RoomEvent.__origin__.__args__  # type: ignore[attr-defined]

ServerMessage = Annotated[
    Welcome
    | LoggedIn
    | Resumed
    | Ack
    | Pong
    | Goodbye
    | Error
    | RoomList
    | RoomAdded
    | RoomUpdated
    | RoomRemoved
    | Queued
    | ChallengeSent
    | Challenged
    | ChallengeEnded
    | Matched
    | RoomState
    | CatchUp
    | Spectators
    | PlayerJoined
    | PlayerLeft
    | PlayerDisconnected
    | PlayerReconnected
    | SeatTaken
    | SeatFreed
    | ReadyChanged
    | GameStarted
    | MoveMade
    | PlayerEliminated
    | ClockUpdate
    | GameOver
    | ChatMessage
    | RematchOffered
    | RoomClosed
    | Record
    | Leaderboard
    | RecordList
    | TournamentList
    | Standings
    | TournamentCreated,
    Field(discriminator="type"),
]
"""Any message the server may send."""

SERVER_TYPES: dict[str, type[ServerBase]] = {
    cls.model_fields["type"].default: cls
    for cls in ServerMessage.__origin__.__args__  # type: ignore[attr-defined]
}
"""``type`` value -> model class, for every server message."""

ROOM_EVENT_TYPES: frozenset[str] = frozenset(
    cls.model_fields["type"].default for cls in _ROOM_EVENT_CLASSES
)
"""The ``type`` values that are room events (carry ``room`` and ``seq``)."""
