"""A room's state machine, sans I/O: ``decide`` turns a command into events, ``apply``
folds an event into the state.

Why: a room's state has one definition. The room actor (:mod:`server.room`) runs
``decide(state, command, now)``, then for each event ``apply``, log, send; a room
rebuilt from its log (a takeover on another node, a restart) is
:func:`restore`, the same ``apply`` folded over the logged events
(:func:`events_from_log` reads them back). ``tests/conftest.py`` checks, after
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

from engine.base import Game, Result, game_class, new_game
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


# -- commands ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Move:
    session: str
    move: str


@dataclass(frozen=True, slots=True)
class Resign:
    session: str


@dataclass(frozen=True, slots=True)
class SetReady:
    session: str
    ready: bool


@dataclass(frozen=True, slots=True)
class OfferRematch:
    session: str
    accept: bool
    seed: int  # the next deal's, drawn by the caller (decide stays pure)


@dataclass(frozen=True, slots=True)
class TakeSeat:
    session: str
    player: Player  # with its rating in the room's game, looked up by the caller
    seat: int | None


@dataclass(frozen=True, slots=True)
class LeaveSeat:
    session: str


@dataclass(frozen=True, slots=True)
class Start:
    """Start a game if every seat is taken (and ready, unless ``require_ready`` is off)."""

    require_ready: bool
    seed: int


Command = Move | Resign | SetReady | OfferRematch | TakeSeat | LeaveSeat | Start


def decide(state: RoomState, cmd: Command, now_ms: int) -> list[Event]:
    """The events ``cmd`` causes now; a refusal raises its typed ``ProtocolError``."""
    return _DECIDE[type(cmd)](state, cmd, now_ms)


def seated(state: RoomState, session: str) -> int:
    seat = state.seat_of(session)
    if seat is None:
        if state.members.get(session) == "spectator":
            raise ProtocolError(ErrorCode.FORBIDDEN, "spectators cannot act in a game")
        raise ProtocolError(ErrorCode.NOT_SEATED, "you hold no seat in this room")
    return seat


def _decide_move(state: RoomState, cmd: Move, now_ms: int) -> list[Event]:
    seat = seated(state, cmd.session)
    if state.match is None:
        raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
    # the match refuses (out of turn, illegal, over) when it is applied, before any change
    return [MoveMade(seat, cmd.move, now_ms)]


def _decide_resign(state: RoomState, cmd: Resign, now_ms: int) -> list[Event]:
    seat = seated(state, cmd.session)
    if state.match is None:
        raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
    return [Forfeit(seat, "resign", now_ms)]


def _decide_ready(state: RoomState, cmd: SetReady, now_ms: int) -> list[Event]:
    seat = seated(state, cmd.session)
    if state.playing:
        raise ProtocolError(ErrorCode.BAD_REQUEST, "the game is already running")
    if state.match is not None:  # finished: the next game is a rematch (sides swapped)
        raise ProtocolError(
            ErrorCode.BAD_REQUEST, "the game is over: send offer_rematch for another"
        )
    st = state.seats[seat]
    assert st is not None
    return [] if st.ready == cmd.ready else [ReadyChanged(seat, cmd.ready)]


def _decide_rematch(state: RoomState, cmd: OfferRematch, now_ms: int) -> list[Event]:
    seat = seated(state, cmd.session)
    match = state.match
    if match is None or not match.over:
        raise ProtocolError(ErrorCode.BAD_REQUEST, "no finished game to rematch")
    if cmd.accept and not state.rematch_offers:
        raise ProtocolError(ErrorCode.BAD_REQUEST, "nobody has offered a rematch")
    events: list[Event] = []
    offers = set(state.rematch_offers)
    if seat not in offers:
        offers.add(seat)
        events.append(RematchOffered(seat))
    if rematch_completes(state, cmd.session):
        # seats rotate with the players: new seat i is the old seat i+1
        rotated = state.seats[1:] + state.seats[:1]
        game = match.rematch(seed=cmd.seed).game
        seats = tuple((st.session, st.player) for st in rotated if st is not None)
        events.append(GameStarted(state.game_number + 1, game, seats, now_ms))
    return events


def _decide_take_seat(state: RoomState, cmd: TakeSeat, now_ms: int) -> list[Event]:
    if state.members.get(cmd.session) != "player":
        raise ProtocolError(ErrorCode.FORBIDDEN, "join the room as a player first")
    if state.settings.rated and cmd.player.get("guest"):
        raise ProtocolError(ErrorCode.FORBIDDEN, "rated games need a claimed name (a token)")
    current = state.seat_of(cmd.session)
    seat = cmd.seat
    if current is not None and (seat is None or seat == current):
        return []
    if state.playing:
        raise ProtocolError(ErrorCode.FORBIDDEN, "the game is running")
    if seat is None:
        free = [i for i, s in enumerate(state.seats) if s is None]
        if not free:
            raise ProtocolError(ErrorCode.ROOM_FULL, "every seat is taken")
        seat = free[0]
    if seat >= len(state.seats):
        raise ProtocolError(ErrorCode.BAD_REQUEST, f"no seat {seat} in this room")
    if state.seats[seat] is not None:
        raise ProtocolError(ErrorCode.SEAT_OCCUPIED, f"seat {seat} is taken")
    events: list[Event] = [] if current is None else [SeatFreed(current)]
    return [*events, SeatTaken(seat, cmd.session, cmd.player)]


def _decide_leave_seat(state: RoomState, cmd: LeaveSeat, now_ms: int) -> list[Event]:
    seat = state.seat_of(cmd.session)
    if seat is None:
        raise ProtocolError(ErrorCode.NOT_SEATED, "you hold no seat here")
    if state.playing:
        raise ProtocolError(ErrorCode.FORBIDDEN, "the game is running: resign instead")
    return [SeatFreed(seat)]


def can_start(state: RoomState, require_ready: bool) -> bool:
    """Would :class:`Start` start a game now? (its deal is drawn only then)"""
    if state.playing or any(s is None for s in state.seats):
        return False
    return not require_ready or all(s.ready for s in state.seats if s is not None)


def rematch_completes(state: RoomState, session: str) -> bool:
    """Would this member's rematch offer (or acceptance) start the next game?"""
    seat = state.seat_of(session)
    if seat is None:
        return False
    return len(set(state.rematch_offers) | {seat}) == len(state.seats) and all(state.seats)


def _decide_start(state: RoomState, cmd: Start, now_ms: int) -> list[Event]:
    if not can_start(state, cmd.require_ready):
        return []
    s = state.settings
    game = new_game(
        s.game,
        rules=s.rules,
        variant=s.variant,
        seed=cmd.seed,
        players=s.seats,
        options=s.options or None,
    )
    seats = tuple((st.session, st.player) for st in state.seats if st is not None)
    return [GameStarted(state.game_number + 1, game, seats, now_ms)]


_DECIDE: dict[type, Any] = {
    Move: _decide_move,
    Resign: _decide_resign,
    SetReady: _decide_ready,
    OfferRematch: _decide_rematch,
    TakeSeat: _decide_take_seat,
    LeaveSeat: _decide_leave_seat,
    Start: _decide_start,
}


# -- restoring from the log ------------------------------------------------------------------
def events_from_log(
    settings: RoomSettings,
    members: dict[str, dict[str, Any]],
    logged: list[dict[str, Any]],
    now_ms: int,
) -> list[Event]:
    """The room's logged events (wire data) as the events that made them.

    ``members``: the room's saved members (session id -> role, name): the log names
    players, not sessions. Times: each game event happens at a time chosen so that
    the clocks come out as logged, and the last at ``now_ms``, so the mover's clock
    restarts now; the time between the last logged event and the restore is charged
    to nobody (Fischer move times are exact, a fixed clock gives a fresh allowance).
    """
    by_name: dict[str, str] = {}
    for sid, v in members.items():
        if v.get("role") == "player" and v.get("name"):
            by_name.setdefault(v["name"], sid)

    def session_of(name: str) -> str:
        return by_name.get(name) or f"lost:{name}"

    times = _logged_times(settings, logged, now_ms)
    out: list[Event] = []
    for ev, at in zip(logged, times, strict=True):
        t = ev["type"]
        if t == "player_joined":
            out.append(PlayerJoined(session_of(ev["player"]["name"]), ev["player"]))
        elif t == "player_left":
            out.append(MemberLeft(session_of(ev["name"])))
        elif t == "seat_taken":
            out.append(SeatTaken(ev["seat"], session_of(ev["player"]["name"]), ev["player"]))
        elif t == "seat_freed":
            out.append(SeatFreed(ev["seat"]))
        elif t == "ready_changed":
            out.append(ReadyChanged(ev["seat"], ev["ready"]))
        elif t in ("player_disconnected", "player_reconnected") and ev.get("seat") is not None:
            out.append(ConnectionChanged(ev["seat"], t == "player_reconnected"))
        elif t == "game_started":
            game = game_class(settings.game).from_setup(
                ev["setup"],
                rules=settings.rules,
                variant=settings.variant,
                players=len(ev["seats"]),
                options=settings.options or None,
            )
            seats = tuple((session_of(s["player"]["name"]), s["player"]) for s in ev["seats"])
            out.append(GameStarted(ev["game_number"], game, seats, at))
        elif t == "move_made":
            out.append(MoveMade(ev["seat"], ev["move"], at))
        elif t == "player_eliminated":
            out.append(Forfeit(ev["seat"], ev["reason"], at))
        elif t == "game_over":
            out.append(GameOver(ev["result"], ev.get("ratings") or [], ev.get("record"), at))
        elif t == "rematch_offered":
            out.append(RematchOffered(ev["seat"]))
        elif t == "room_closed":
            out.append(RoomClosed())
    return out


def _logged_times(settings: RoomSettings, logged: list[dict[str, Any]], now_ms: int) -> list[int]:
    """When each logged event happened (see :func:`events_from_log`), ending ``now_ms``."""
    fischer = engine_time_control(settings.time_control)
    inc = fischer.increment_ms if fischer.kind == "fischer" else None
    spent: list[int] = []
    prev: list[int] | None = None
    mover: int | None = None
    for ev in logged:
        t = ev["type"]
        took = 0
        if t == "game_started":
            prev = (ev.get("clock") or {}).get("remaining_ms")
            mover = ev.get("to_move")
        elif t in ("move_made", "player_eliminated"):
            after = (ev.get("clock") or {}).get("remaining_ms")
            if inc is not None and prev and after:
                if t == "move_made":
                    took = prev[ev["seat"]] - after[ev["seat"]] + inc
                elif mover is not None:  # the mover's clock ran until the forfeit
                    took = prev[mover] - after[mover]
            prev = after or prev
            mover = ev.get("to_move")
        spent.append(max(0, took))
    times = []
    t_now = now_ms - sum(spent)
    for took in spent:
        t_now += took
        times.append(t_now)
    return times


def restore(
    settings: RoomSettings,
    members: dict[str, dict[str, Any]],
    logged: list[dict[str, Any]],
    now_ms: int,
    labels: list[str] | None = None,
) -> RoomState:
    """The room as its log says it is: :func:`apply` folded over :func:`events_from_log`.

    ``members`` (session id -> {"role", "name"}) are the room's saved members: its
    spectators and its players' sessions, which the public log does not carry. A
    game that ended without its ``game_over`` is :attr:`RoomState.unfinished`.
    """
    state = initial(settings, labels)
    state.members = {sid: v["role"] for sid, v in members.items()}
    state.names = {
        s: v["name"] for s, v in members.items() if v["role"] == "player" and v.get("name")
    }
    for ev in events_from_log(settings, members, logged, now_ms):
        apply(state, ev)
    state.outcome = []
    state.seq = logged[-1]["seq"] if logged else 0
    return state


def _shown(player: Player) -> Player:
    """A player as the wire shows it (a missing rating is shown as null)."""
    return {
        "name": player["name"],
        "guest": player.get("guest", False),
        "bot": player.get("bot", False),
        "rating": player.get("rating"),
    }


def snapshot(state: RoomState) -> dict[str, Any]:
    """What must agree between a live room and its restored copy (tests compare these):
    everything but the match's wall-clock bookkeeping."""
    match = state.match
    game = None
    if match is not None:
        g = match.game
        game = {
            "players": list(match.players),
            "setup": g.setup(),
            "history": list(g.history),
            "position": g.position(),
            "eliminated": g.eliminated(),
            "forfeits": g.forfeits(),
            "result": None if match.result is None else match.result.to_dict(),
            "to_move": match.to_move(),
            "clocks": None if match.over else match.clocks(),
        }
    return {
        "settings": state.settings.to_dict(),
        "labels": state.labels,
        "seats": [
            None if s is None else (s.session, _shown(s.player), s.ready, s.connected)
            for s in state.seats
        ],
        "members": dict(state.members),
        "names": dict(state.names),
        "started_players": [None if p is None else _shown(p) for p in state.started_players],
        "game_number": state.game_number,
        "record": state.record_id,
        "rematch": sorted(state.rematch_offers),
        "closed": state.closed,
        "seq": state.seq,
        "game": game,
    }
