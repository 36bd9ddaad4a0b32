"""Messages a client sends to the server, one class per ``type``.

Every client message may carry an ``id`` (an integer or a short string); the server's
reply to it (the specific answer, an ``ack`` or an ``error``) carries the same value as
``re``. Events a request causes are broadcast separately and carry no ``re``.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import ConfigDict, Field, model_validator

from protocol.common import (
    ChatText,
    GameName,
    Id,
    JsonObject,
    Model,
    Move,
    Name,
    RequestId,
    RoomCursor,
    Seat,
    Seq,
    Short,
    TimeControl,
    Token,
    Untimed,
)
from protocol.limits import MAX_CURSORS, MAX_LIST, MAX_SEATS, MAX_VERSIONS, TEXT_MAX


class ClientBase(Model):
    """The client envelope: ``type`` and an optional request ``id``."""

    type: str
    id: RequestId | None = None


# -- session -------------------------------------------------------------------------------


class Hello(ClientBase):
    """First message of every connection: the versions the client speaks, and who it is.

    The frame kind of ``hello`` (binary = msgpack, text = JSON) fixes the encoding the
    server uses for the whole connection.
    """

    type: Literal["hello"] = "hello"
    versions: Annotated[
        list[Annotated[int, Field(ge=1, le=65535)]], Field(min_length=1, max_length=MAX_VERSIONS)
    ]
    software: Short
    """The client program and version, e.g. ``arena-tui/0.1``; for logs only."""


class Login(ClientBase):
    """Log in as a guest (no ``token``) or as a player claiming ``name`` with a secret token.

    The first login with a token claims the name for that token; later logins under the
    name must present the same token (else ``name_taken``). ``bot`` marks bots. A player's
    login while its previous session is dropped and in its grace period takes that session
    over (see ``LoggedIn``).
    """

    type: Literal["login"] = "login"
    name: Name
    token: Token | None = None
    bot: bool = False


class Resume(ClientBase):
    """Take over a session dropped less than ``limits.resume_grace_ms`` ago.

    ``token`` is the ``resume_token`` of the old connection's ``welcome``. ``rooms`` lists
    the last ``seq`` seen per room; the server answers ``resumed`` and then, for every room
    of the session, a ``catch_up`` with the events after that seq (or a ``room_state``).
    """

    type: Literal["resume"] = "resume"
    token: Token
    rooms: Annotated[list[RoomCursor], Field(max_length=MAX_CURSORS)] = []


class Logout(ClientBase):
    """End the session: the player leaves every room (forfeiting running games) and the
    server answers ``ack`` and closes with 1000."""

    type: Literal["logout"] = "logout"


class Ping(ClientBase):
    """Application-level liveness check; answered by ``pong``. Optional."""

    type: Literal["ping"] = "ping"


# -- lobby ---------------------------------------------------------------------------------


class ListRooms(ClientBase):
    """One look at the public rooms (optionally of one game); answered by ``room_list``."""

    type: Literal["list_rooms"] = "list_rooms"
    game: GameName | None = None


class LobbySubscribe(ClientBase):
    """Answered by ``room_list``, then ``room_added``/``room_updated``/``room_removed``
    as the lobby changes, until ``lobby_unsubscribe`` (or the connection ends)."""

    type: Literal["lobby_subscribe"] = "lobby_subscribe"
    game: GameName | None = None


class LobbyUnsubscribe(ClientBase):
    type: Literal["lobby_unsubscribe"] = "lobby_unsubscribe"


class CreateRoom(ClientBase):
    """Open a room and join it as a player; answered by ``room_state`` (with ``re``).

    ``rules``/``variant`` default to the game's defaults; ``seats`` defaults to the
    variant's usual number of players. ``options`` are game options passed to the engine
    (e.g. a custom deck). ``seat`` takes that seat at once. A ``private`` room is not
    listed in the lobby; its ``invite`` code (in ``room_state``) lets others join.
    """

    type: Literal["create_room"] = "create_room"
    game: GameName
    rules: GameName | None = None
    variant: GameName | None = None
    options: JsonObject = {}
    seats: Annotated[int, Field(ge=1, le=MAX_SEATS)] | None = None
    time_control: TimeControl = Untimed()
    rated: bool = False
    private: bool = False
    seat: Seat | None = None


class JoinRoom(ClientBase):
    """Join a room by ``room`` id or by ``invite`` code (exactly one of them), as a player
    (may then take a seat) or as a spectator. Answered by ``room_state`` (with ``re``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [
                {"properties": {"room": {"type": "string"}}, "required": ["room"]},
                {"properties": {"invite": {"type": "string"}}, "required": ["invite"]},
            ]
        }
    )

    type: Literal["join_room"] = "join_room"
    room: Id | None = None
    invite: Id | None = None
    role: Literal["player", "spectator"] = "player"

    @model_validator(mode="after")
    def _one_target(self) -> Self:
        if (self.room is None) == (self.invite is None):
            raise ValueError("give exactly one of room and invite")
        return self


class LeaveRoom(ClientBase):
    """Leave a room. Leaving a running game as a seated player resigns it."""

    type: Literal["leave_room"] = "leave_room"
    room: Id


class QuickMatch(ClientBase):
    """Queue for an opponent of similar rating; answered by ``queued``, later ``matched``
    (followed by the room's ``room_state``). One queue per connection; a new quick_match
    replaces the old one."""

    type: Literal["quick_match"] = "quick_match"
    game: GameName
    rules: GameName | None = None
    variant: GameName | None = None
    time_control: TimeControl = Untimed()
    rated: bool = True
    bots: bool = True
    """``false``: never be paired with a bot (a human's choice; a bot's entry ignores it)."""


class CancelQuickMatch(ClientBase):
    type: Literal["cancel_quick_match"] = "cancel_quick_match"


# -- room ----------------------------------------------------------------------------------


class TakeSeat(ClientBase):
    """Sit down at ``seat`` (or any free seat when omitted) before the game starts."""

    type: Literal["take_seat"] = "take_seat"
    room: Id
    seat: Seat | None = None


class LeaveSeat(ClientBase):
    """Stand up again before the game starts (stay in the room)."""

    type: Literal["leave_seat"] = "leave_seat"
    room: Id


class Ready(ClientBase):
    """Declare (or withdraw) readiness. The game starts when every seat is taken and ready."""

    type: Literal["ready"] = "ready"
    room: Id
    ready: bool = True


class MakeMove(ClientBase):
    """Play ``move`` (in the game's notation) for the seat this client holds.

    ``reply: "event"`` asks for the move's own ``move_made`` (carrying ``re``) as the
    reply instead of a separate ``ack``; left out (or ``"ack"``) the reply is ``ack``."""

    type: Literal["move"] = "move"
    room: Id
    move: Move
    reply: Literal["ack", "event"] | None = None


class Resign(ClientBase):
    type: Literal["resign"] = "resign"
    room: Id


class AbortGame(ClientBase):
    """End the running game without a result (unrated), allowed until every player still
    in has made a move; ``forbidden`` after that (resign instead)."""

    type: Literal["abort"] = "abort"
    room: Id


class OfferRematch(ClientBase):
    """Ask for another game in the same room with seats rotated (swapped for two)."""

    type: Literal["offer_rematch"] = "offer_rematch"
    room: Id


class AcceptRematch(ClientBase):
    """Accept the standing rematch offer; the next game starts when every seat agreed."""

    type: Literal["accept_rematch"] = "accept_rematch"
    room: Id


class Chat(ClientBase):
    """Say something in a room (players and spectators alike, unless the server restricts)."""

    type: Literal["chat"] = "chat"
    room: Id
    text: ChatText


# -- spectating ----------------------------------------------------------------------------


class Watch(ClientBase):
    """Spectate a room. Without ``since_seq``: answered by ``room_state`` then live events.
    With ``since_seq``: answered by ``catch_up`` with every event after it (or by a
    ``room_state`` when the log no longer reaches back that far), then live events."""

    type: Literal["watch"] = "watch"
    room: Id
    since_seq: Seq | None = None


# -- records, ratings, tournaments ---------------------------------------------------------


class GetRecord(ClientBase):
    """Fetch a finished game's record; answered by ``record``. A private room's record
    only for its players or with the room's ``invite`` (else ``unknown_record``)."""

    type: Literal["get_record"] = "get_record"
    record: Id
    #: also send the game's view at the start and after each move (added within v1)
    views: bool | None = None
    #: the invite code of the private room the game was played in (added within v1):
    #: a private game's record is readable by its players and by invite holders only
    invite: Id | None = None


class GetLeaderboard(ClientBase):
    """The best-rated players of a game; answered by ``leaderboard``."""

    type: Literal["get_leaderboard"] = "get_leaderboard"
    game: GameName
    limit: Annotated[int, Field(ge=1, le=MAX_LIST)] = 50
    offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0


class ListRecords(ClientBase):
    """Finished games, newest first, a page at a time (added within v1); answered by
    ``record_list``. A private room's games are listed to their players only."""

    type: Literal["list_records"] = "list_records"
    game: GameName | None = None
    #: only the games this player played in (a name, as in a record's ``players``)
    player: Name | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 20
    #: where to go on from: 0 (the newest), or a ``record_list.next_offset``
    offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0


class ListTournaments(ClientBase):
    """Answered by ``tournament_list``."""

    type: Literal["list_tournaments"] = "list_tournaments"
    game: GameName | None = None


class JoinTournament(ClientBase):
    """Enter a tournament (a logged-in player with a claimed name); answered by ``ack``.
    Joining again after a reconnect is harmless (it re-joins a player who left)."""

    type: Literal["join_tournament"] = "join_tournament"
    tournament: Id


class LeaveTournament(ClientBase):
    """Withdraw: no more pairings; a running game goes on. Answered by ``ack``."""

    type: Literal["leave_tournament"] = "leave_tournament"
    tournament: Id


class TournamentSubscribe(ClientBase):
    """Answered by ``standings``, then a ``standings`` (no ``re``) whenever they change,
    until ``tournament_unsubscribe`` or the connection ends (added within v1)."""

    type: Literal["tournament_subscribe"] = "tournament_subscribe"
    tournament: Id


class TournamentUnsubscribe(ClientBase):
    type: Literal["tournament_unsubscribe"] = "tournament_unsubscribe"
    tournament: Id


class CreateTournament(ClientBase):
    """An operator opens a tournament (added within v1); answered by ``tournament_created``.

    ``admin_token`` is the server's admin token (else ``forbidden``). ``format``:
    ``round_robin`` (``rounds`` = cycles, default 1), ``swiss`` (``rounds`` required) or
    ``arena`` (``duration_ms`` required: whoever is free is paired until it ends).
    Without ``starts_at`` (ms since the epoch) it starts on ``start_tournament``.
    """

    type: Literal["create_tournament"] = "create_tournament"
    admin_token: Token
    name: Annotated[str, Field(min_length=1, max_length=TEXT_MAX)]
    game: GameName
    rules: GameName | None = None
    variant: GameName | None = None
    time_control: TimeControl = Untimed()
    rated: bool = False
    format: Short
    rounds: Annotated[int, Field(ge=1, le=1000)] | None = None
    duration_ms: Annotated[int, Field(ge=1000, le=7 * 86_400_000)] | None = None
    starts_at: Annotated[int, Field(ge=0, le=2**53)] | None = None
    max_players: Annotated[int, Field(ge=2, le=MAX_LIST)] | None = None
    min_players: Annotated[int, Field(ge=2, le=MAX_LIST)] = 2


class StartTournament(ClientBase):
    """An operator starts an ``open`` tournament now; answered by ``ack`` (added within v1)."""

    type: Literal["start_tournament"] = "start_tournament"
    admin_token: Token
    tournament: Id


class CancelTournament(ClientBase):
    """An operator ends a tournament now: no more pairings, running games are played
    out, standings kept (``cancelled: true``). Answered by ``ack`` (added within v1)."""

    type: Literal["cancel_tournament"] = "cancel_tournament"
    admin_token: Token
    tournament: Id


class GetStandings(ClientBase):
    """Answered by ``standings``."""

    type: Literal["get_standings"] = "get_standings"
    tournament: Id


class Challenge(ClientBase):
    """Challenge the online player (or bot) ``name`` to a game; answered by
    ``challenge_sent``. The other side gets ``challenged`` at once; an accept seats you
    both as quick match does (``matched``...), a decline or cancel ends it
    (``challenge_ended``)."""

    type: Literal["challenge"] = "challenge"
    name: Name
    game: GameName
    rules: GameName | None = None
    variant: GameName | None = None
    time_control: TimeControl = Untimed()
    rated: bool = False


class ChallengeAnswer(ClientBase):
    """What may be done with a pending challenge, by its id (``challenge_sent``,
    ``challenged``): one definition of the three messages below (not itself sent)."""

    challenge: Id


class AcceptChallenge(ChallengeAnswer):
    """Accept a challenge you received (``challenged``); answered by ``ack``, then ``matched``."""

    type: Literal["accept_challenge"] = "accept_challenge"


#: why a challenge is declined (lichess's decline reasons, as our games need them): the
#: challenger asks again after ``generic`` or ``later``, not after the others, which say
#: that this challenge will be declined whenever it is asked
DeclineReason = Literal["generic", "later", "game", "time_control", "rated", "casual",
                        "no_challenges"]  # fmt: skip


class DeclineChallenge(ChallengeAnswer):
    """Decline a challenge you received, saying why (``reason``, added within v1; none:
    ``generic``); answered by ``ack``. The challenger's ``challenge_ended`` carries it."""

    type: Literal["decline_challenge"] = "decline_challenge"
    reason: DeclineReason | None = None


class CancelChallenge(ChallengeAnswer):
    """Take back a challenge you sent; answered by ``ack``."""

    type: Literal["cancel_challenge"] = "cancel_challenge"


ClientMessage = Annotated[
    Hello
    | Login
    | Resume
    | Logout
    | Ping
    | ListRooms
    | LobbySubscribe
    | LobbyUnsubscribe
    | CreateRoom
    | JoinRoom
    | LeaveRoom
    | QuickMatch
    | CancelQuickMatch
    | Challenge
    | AcceptChallenge
    | DeclineChallenge
    | CancelChallenge
    | TakeSeat
    | LeaveSeat
    | Ready
    | MakeMove
    | Resign
    | AbortGame
    | OfferRematch
    | AcceptRematch
    | Chat
    | Watch
    | GetRecord
    | GetLeaderboard
    | ListRecords
    | ListTournaments
    | JoinTournament
    | LeaveTournament
    | GetStandings
    | TournamentSubscribe
    | TournamentUnsubscribe
    | CreateTournament
    | StartTournament
    | CancelTournament,
    Field(discriminator="type"),
]
"""Any message a client may send."""

CLIENT_TYPES: dict[str, type[ClientBase]] = {
    cls.model_fields["type"].default: cls
    for cls in ClientMessage.__origin__.__args__  # type: ignore[attr-defined]
}
"""``type`` value -> model class, for every client message."""
