"""A room rebuilt from its log: :func:`restore` folds :func:`server.room_state.apply` over
the logged events (one definition of a room's state), and :func:`snapshot` is what a
live room and its restored copy must agree on (``tests/conftest.py`` compares them).
"""

from __future__ import annotations

from typing import Any

from engine.base import game_class
from protocol.fastwire import player_wire
from protocol.timecontrol import engine_time_control
from server.room_state import (
    ConnectionChanged,
    Event,
    Forfeit,
    GameOver,
    GameStarted,
    MemberLeft,
    MoveMade,
    PlayerJoined,
    ReadyChanged,
    RematchOffered,
    RoomClosed,
    RoomSettings,
    RoomState,
    SeatFreed,
    SeatTaken,
    apply,
    initial,
)


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
            None if s is None else (s.session, player_wire(s.player), s.ready, s.connected)
            for s in state.seats
        ],
        "members": dict(state.members),
        "names": dict(state.names),
        "started_players": [None if p is None else player_wire(p) for p in state.started_players],
        "game_number": state.game_number,
        "record": state.record_id,
        "rematch": sorted(state.rematch_offers),
        "closed": state.closed,
        "seq": state.seq,
        "game": game,
    }
