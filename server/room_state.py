"""A room's state machine, sans I/O: ``decide`` (:mod:`server.room_commands`) turns a
command into events, ``apply`` folds an event into the state.

Why: a room's state has one definition. The room actor (:mod:`server.room`) runs
``decide(state, command, now)``, then for each event ``apply``, log, send; a room
rebuilt from its log (a takeover on another node, a restart) is
:func:`server.room_replay.restore`, the same ``apply`` folded over the logged events
(:func:`server.room_replay.events_from_log` reads them back). ``tests/conftest.py`` checks, after
every test that ran a server, that each live room equals its restored copy.

The game itself is decided by :class:`engine.match.Match`: ``apply`` of a move or a
forfeit calls it (it raises before any change if the move is illegal), and
:attr:`RoomState.outcome` holds what it answered, which the actor logs
(``move_made``, ``player_eliminated``, then ``game_over`` once rated and recorded).

``apply`` changes the state in place and returns it (a copy per move would cost
more than the move): the state passed in is consumed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.base import Game, Result, new_game
from engine.match import Match
from protocol.codec import to_wire
from protocol.errors import ErrorCode, ProtocolError
from protocol.timecontrol import engine_time_control, time_control_from_wire

Player = dict[str, Any]  # a protocol Player as wire data


@dataclass
class SeatState:
    session: str
    player: Player
    ready: bool = False
    connected: bool = True


@dataclass
class RoomSettings:
    room_id: str
    game: str
    rules: str
    variant: str
    seats: int
    time_control: Any  # protocol TimeControl model
    rated: bool
    private: bool
    options: dict[str, Any] = field(default_factory=dict)
    invite: str | None = None
    created_at: int = 0
    quick: bool = False  # made by quick match: starts when seated, no ready needed

    def to_dict(self) -> dict[str, Any]:
        return {
            "room_id": self.room_id,
            "game": self.game,
            "rules": self.rules,
            "variant": self.variant,
            "seats": self.seats,
            "time_control": to_wire(self.time_control),
            "rated": self.rated,
            "private": self.private,
            "options": self.options,
            "invite": self.invite,
            "created_at": self.created_at,
            "quick": self.quick,
        }

    @classmethod
    def from_dict(cls, meta: dict[str, Any]) -> RoomSettings:
        return cls(
            room_id=meta["room_id"],
            game=meta["game"],
            rules=meta["rules"],
            variant=meta["variant"],
            seats=meta["seats"],
            time_control=time_control_from_wire(meta["time_control"]),
            rated=meta["rated"],
            private=meta["private"],
            options=dict(meta.get("options") or {}),
            invite=meta.get("invite"),
            created_at=meta.get("created_at", 0),
            quick=meta.get("quick", False),
        )


@dataclass
class RoomState:
    settings: RoomSettings
    labels: list[str]
    seats: list[SeatState | None]
    #: session id -> "player" | "spectator"
    members: dict[str, str] = field(default_factory=dict)
    #: players' names by session (a session may end before its player leaves the room)
    names: dict[str, str] = field(default_factory=dict)
    match: Match | None = None
    #: the players as the game started, by seat (a seat freed since, by a leave in a game
    #: of three or more that went on, still has its player rated as who it was)
    started_players: list[Player | None] = field(default_factory=list)
    game_number: int = 0
    record_id: str | None = None
    rematch_offers: set[int] = field(default_factory=set)
    closed: bool = False
    #: the seq of the last logged event
    seq: int = 0
    #: what the match answered to the last game event applied (engine event dicts)
    outcome: list[dict[str, Any]] = field(default_factory=list)

    @property
    def playing(self) -> bool:
        return self.match is not None and not self.match.over

    @property
    def status(self) -> str:
        if self.match is None:
            return "waiting"
        return "finished" if self.match.over else "playing"

    @property
    def unfinished(self) -> bool:
        """The game ended but its ``game_over`` (ratings, record) is not logged yet."""
        return self.match is not None and self.match.over and self.record_id is None

    def seat_of(self, session: str) -> int | None:
        for i, s in enumerate(self.seats):
            if s is not None and s.session == session:
                return i
        return None


def initial(settings: RoomSettings, labels: list[str] | None = None) -> RoomState:
    """An empty room; ``labels``: the seats' names if known (else from a trial deal)."""
    if labels is None:
        labels = new_game(
            settings.game,
            rules=settings.rules,
            variant=settings.variant,
            players=settings.seats,
            options=settings.options or None,
        ).seat_names()
    return RoomState(settings, list(labels), [None] * settings.seats)


# -- events ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PlayerJoined:
    session: str
    player: Player


@dataclass(frozen=True, slots=True)
class SpectatorJoined:
    """Not logged: a restore learns spectators from the room's saved members."""

    session: str


@dataclass(frozen=True, slots=True)
class MemberLeft:
    """Logged as ``player_left`` when the member was a player."""

    session: str


@dataclass(frozen=True, slots=True)
class SeatTaken:
    seat: int
    session: str
    player: Player


@dataclass(frozen=True, slots=True)
class SeatFreed:
    seat: int


@dataclass(frozen=True, slots=True)
class ReadyChanged:
    seat: int
    ready: bool


@dataclass(frozen=True, slots=True)
class ConnectionChanged:
    """``player_disconnected`` / ``player_reconnected``."""

    seat: int
    connected: bool


@dataclass(frozen=True, slots=True)
class GameStarted:
    game_number: int
    game: Game  # the deal, not started
    #: who sits where for this game, in seat order (a rematch rotates them)
    seats: tuple[tuple[str, Player], ...]
    at_ms: int


@dataclass(frozen=True, slots=True)
class MoveMade:
    seat: int
    move: str
    at_ms: int


@dataclass(frozen=True, slots=True)
class Forfeit:
    """A resignation, abandonment or fallen flag (``player_eliminated`` when the game goes
    on, ruling 3; a game it ends logs only ``game_over``)."""

    seat: int
    reason: str
    at_ms: int


@dataclass(frozen=True, slots=True)
class FlagCheck:
    """The clock's deadline passed: the match says whether a flag fell."""

    at_ms: int


@dataclass(frozen=True, slots=True)
class GameOver:
    result: dict[str, Any]
    ratings: list[dict[str, Any]]
    record: str
    at_ms: int


@dataclass(frozen=True, slots=True)
class RematchOffered:
    seat: int


@dataclass(frozen=True, slots=True)
class RoomClosed:
    pass


Event = (
    PlayerJoined
    | SpectatorJoined
    | MemberLeft
    | SeatTaken
    | SeatFreed
    | ReadyChanged
    | ConnectionChanged
    | GameStarted
    | MoveMade
    | Forfeit
    | FlagCheck
    | GameOver
    | RematchOffered
    | RoomClosed
)


# -- apply -------------------------------------------------------------------------------
def apply(state: RoomState, ev: Event) -> RoomState:
    """``state`` after ``ev`` (changed in place); see the module docstring."""
    handler = _APPLY[type(ev)]
    handler(state, ev)
    return state


def _joined(state: RoomState, ev: PlayerJoined) -> None:
    state.members[ev.session] = "player"
    state.names[ev.session] = ev.player["name"]


def _spectator(state: RoomState, ev: SpectatorJoined) -> None:
    state.members.setdefault(ev.session, "spectator")


def _left(state: RoomState, ev: MemberLeft) -> None:
    state.members.pop(ev.session, None)
    state.names.pop(ev.session, None)


def _seat_taken(state: RoomState, ev: SeatTaken) -> None:
    state.seats[ev.seat] = SeatState(ev.session, dict(ev.player))


def _seat_freed(state: RoomState, ev: SeatFreed) -> None:
    state.seats[ev.seat] = None
    state.rematch_offers.discard(ev.seat)


def _ready(state: RoomState, ev: ReadyChanged) -> None:
    st = state.seats[ev.seat]
    if st is not None:
        st.ready = ev.ready


def _connection(state: RoomState, ev: ConnectionChanged) -> None:
    st = state.seats[ev.seat]
    if st is not None:
        st.connected = ev.connected


def _game_started(state: RoomState, ev: GameStarted) -> None:
    seated = {st.player["name"]: st for st in state.seats if st is not None}
    state.seats = [
        seated.get(player["name"]) or SeatState(session, dict(player))
        for session, player in ev.seats
    ]
    state.started_players = [dict(st.player) for st in state.seats]
    for st in state.seats:
        st.ready = False
    tc = engine_time_control(state.settings.time_control)
    state.match = Match(ev.game, [st.player["name"] for st in state.seats], tc)
    state.game_number = ev.game_number
    state.record_id = None
    state.rematch_offers.clear()
    state.outcome = state.match.start(ev.at_ms)[1:]  # (a deal nobody can move in ends here)


def _match(state: RoomState) -> Match:
    if state.match is None:
        raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
    return state.match


def _move(state: RoomState, ev: MoveMade) -> None:
    state.outcome = _match(state).submit_move(ev.seat, ev.move, ev.at_ms)


def _forfeit(state: RoomState, ev: Forfeit) -> None:
    state.outcome = _match(state).forfeit(ev.seat, ev.reason, ev.at_ms)


def _flag(state: RoomState, ev: FlagCheck) -> None:
    state.outcome = [] if state.match is None else state.match.check_time(ev.at_ms)


def _game_over(state: RoomState, ev: GameOver) -> None:
    match = state.match
    if match is not None and not match.over:  # a restore: a forfeit that ended the game
        match.result = Result.from_dict(ev.result)
        match.end_ms = ev.at_ms
    state.record_id = ev.record
    after = {c["name"]: c["after"] for c in ev.ratings}
    for st in state.seats:  # what seats show from now on
        if st is not None and st.player["name"] in after:
            st.player["rating"] = after[st.player["name"]]
    state.outcome = []


def _rematch(state: RoomState, ev: RematchOffered) -> None:
    state.rematch_offers.add(ev.seat)


def _closed(state: RoomState, ev: RoomClosed) -> None:
    state.closed = True
    state.members.clear()
    state.names.clear()


_APPLY: dict[type, Any] = {
    PlayerJoined: _joined,
    SpectatorJoined: _spectator,
    MemberLeft: _left,
    SeatTaken: _seat_taken,
    SeatFreed: _seat_freed,
    ReadyChanged: _ready,
    ConnectionChanged: _connection,
    GameStarted: _game_started,
    MoveMade: _move,
    Forfeit: _forfeit,
    FlagCheck: _flag,
    GameOver: _game_over,
    RematchOffered: _rematch,
    RoomClosed: _closed,
}
