"""protocol.fastwire: each hot-path builder makes exactly its model's wire data (same
keys, order and values, nested too) for many generated values; protocol.outgoing: a
reply's frames are the message's with ``re`` added, as msgpack and JSON encode it."""

from __future__ import annotations

import json
from typing import Any

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import fastwire as fw
from protocol import messages as m
from protocol.codec import to_wire
from protocol.limits import MAX_MS
from protocol.outgoing import Outgoing

EXAMPLES = settings(max_examples=100, deadline=None)

names = st.from_regex(r"[A-Za-z][A-Za-z0-9 _é-]{0,15}", fullmatch=True)
ids = st.from_regex(r"[A-Za-z0-9_.:-]{1,20}", fullmatch=True)
game_names = st.from_regex(r"[a-z0-9_.+-]{1,12}", fullmatch=True)
seats_n = st.integers(0, 3)
seqs = st.integers(0, 2**40)
ratings = st.none() | st.floats(-100_000, 100_000, allow_nan=False)
notation = st.text(min_size=1, max_size=40)
moves = st.lists(st.text(min_size=1, max_size=8), max_size=30)
views = st.dictionaries(st.text(max_size=6), st.integers() | st.text(max_size=6), max_size=4)
players = st.fixed_dictionaries(
    {"name": names}, optional={"guest": st.booleans(), "bot": st.booleans(), "rating": ratings}
)
clocks = st.none() | st.lists(st.integers(0, MAX_MS), min_size=2, max_size=4)
time_controls = st.sampled_from(
    [
        m.Fischer(base_ms=300_000, increment_ms=2_000),
        m.PerMove(ms=3_000),
        m.Untimed(),
    ]
)


def same(built: dict[str, Any], model_wire: dict[str, Any]) -> None:
    assert repr(built) == repr(model_wire)  # same keys, order and values, nested too


@EXAMPLES
@given(players)
def test_player(player: dict[str, Any]) -> None:
    same(fw.player_wire(player), m.Player(**player).model_dump(mode="json"))


@EXAMPLES
@given(seats_n, names, st.none() | players, st.booleans(), st.booleans())
def test_seat(seat: int, label: str, player: Any, ready: bool, connected: bool) -> None:
    model = (
        m.SeatInfo(seat=seat, label=label)
        if player is None
        else m.SeatInfo(
            seat=seat, label=label, player=m.Player(**player), ready=ready, connected=connected
        )
    )
    same(fw.seat_wire(seat, label, player, ready, connected), model.model_dump(mode="json"))


seat_lists = st.lists(
    st.tuples(names, st.none() | players, st.booleans(), st.booleans()), min_size=1, max_size=4
)


def seat_pair(seats: list[tuple]) -> tuple[list[dict[str, Any]], list[m.SeatInfo]]:
    wires, models = [], []
    for i, (label, player, ready, connected) in enumerate(seats):
        wires.append(fw.seat_wire(i, label, player, ready, connected))
        models.append(
            m.SeatInfo(seat=i, label=label)
            if player is None
            else m.SeatInfo(
                seat=i, label=label, player=m.Player(**player), ready=ready, connected=connected
            )
        )
    return wires, models


@EXAMPLES
@given(
    ids,
    game_names,
    game_names,
    game_names,
    seat_lists,
    time_controls,
    st.booleans(),
    st.sampled_from(["waiting", "playing", "finished"]),
    st.integers(0, 10**6),
    st.none() | st.integers(0, 2**45),
)
def test_room_summary(
    room: str,
    game: str,
    rules: str,
    variant: str,
    seats: list[tuple],
    tc: Any,
    rated: bool,
    status: str,
    spectators: int,
    created_at: int | None,
) -> None:
    wires, models = seat_pair(seats)
    built = fw.room_summary_wire(
        room=room,
        game=game,
        rules=rules,
        variant=variant,
        seats=wires,
        time_control=tc.model_dump(mode="json"),
        rated=rated,
        status=status,
        spectators=spectators,
        created_at=created_at,
    )
    model = m.RoomSummary(
        room=room,
        game=game,
        rules=rules,
        variant=variant,
        seats=models,
        time_control=tc,
        rated=rated,
        status=status,  # type: ignore[arg-type]
        spectators=spectators,
        created_at=created_at,
    )
    same(built, to_wire(model))


@EXAMPLES
@given(
    ids,
    seqs,
    st.integers(1, 500),
    seats_n,
    st.text(min_size=1, max_size=8),
    notation,
    views,
    st.none() | seats_n,
    moves,
    clocks,
)
def test_move_made(
    room: str,
    seq: int,
    ply: int,
    seat: int,
    move: str,
    position: str,
    view: dict[str, Any],
    to_move: int | None,
    legal: list[str],
    clocks: list[int] | None,
) -> None:
    built = fw.move_made_wire(
        room,
        seq,
        ply=ply,
        seat=seat,
        move=move,
        position=position,
        view=view,
        to_move=to_move,
        legal_moves=legal,
        clocks=clocks,
    )
    clock = None if clocks is None else m.Clock(remaining_ms=clocks, running=to_move)
    model = m.MoveMade(
        room=room,
        seq=seq,
        ply=ply,
        seat=seat,
        move=move,
        position=position,
        view=view,
        to_move=to_move,
        legal_moves=legal,
        clock=clock,
    )
    same(built, to_wire(model))


@EXAMPLES
@given(
    ids,
    seqs,
    st.integers(1, 10**4),
    seat_lists,
    notation,
    notation,
    views,
    st.none() | seats_n,
    moves,
    clocks,
)
def test_game_started(
    room: str,
    seq: int,
    number: int,
    seats: list[tuple],
    setup: str,
    position: str,
    view: dict[str, Any],
    to_move: int | None,
    legal: list[str],
    clocks: list[int] | None,
) -> None:
    wires, models = seat_pair(seats)
    built = fw.game_started_wire(
        room,
        seq,
        game_number=number,
        seats=wires,
        setup=setup,
        position=position,
        view=view,
        to_move=to_move,
        legal_moves=legal,
        clocks=clocks,
    )
    clock = None if clocks is None else m.Clock(remaining_ms=clocks, running=to_move)
    model = m.GameStarted(
        room=room,
        seq=seq,
        game_number=number,
        seats=models,
        setup=setup,
        position=position,
        view=view,
        to_move=to_move,
        legal_moves=legal,
        clock=clock,
    )
    same(built, to_wire(model))


#: the events a room builds with event_wire, each with its fields (in the model's order)
#: as wire data and as model values
EVENTS = st.one_of(
    st.builds(
        lambda p: (m.PlayerJoined, {"player": fw.player_wire(p)}, {"player": m.Player(**p)}),
        players,
    ),
    st.builds(lambda n: (m.PlayerLeft, {"name": n}, {"name": n}), names),
    st.builds(
        lambda s, p: (
            m.SeatTaken,
            {"seat": s, "player": fw.player_wire(p)},
            {"seat": s, "player": m.Player(**p)},
        ),
        seats_n,
        players,
    ),
    st.builds(
        lambda s, n: (m.SeatFreed, {"seat": s, "name": n}, {"seat": s, "name": n}), seats_n, names
    ),
    st.builds(
        lambda s, r: (m.ReadyChanged, {"seat": s, "ready": r}, {"seat": s, "ready": r}),
        seats_n,
        st.booleans(),
    ),
    st.builds(
        lambda r: (m.RoomClosed, {"reason": r}, {"reason": r}),
        st.sampled_from(["empty", "idle", "shutdown"]),
    ),
)


@EXAMPLES
@given(ids, seqs, EVENTS)
def test_event(room: str, seq: int, event: tuple) -> None:
    cls, wire_fields, model_fields = event
    type_ = cls.model_fields["type"].default
    built = fw.event_wire(type_, room, seq, wire_fields)
    same(built, to_wire(cls(room=room, seq=seq, **model_fields)))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@EXAMPLES
@given(
    st.dictionaries(st.text(max_size=6), json_values, max_size=40),
    st.integers(0, 2**53) | st.text(min_size=1, max_size=12),
)
def test_a_reply_is_the_message_with_re_added(fields: dict[str, Any], re: Any) -> None:
    wire = {"type": "move_made", **{k: v for k, v in fields.items() if k not in ("type", "re")}}
    base = Outgoing(dict(wire))
    base.frame(True), base.frame(False)  # the base is encoded first, as in a broadcast
    reply = base.replying(re)
    expected = {**wire, "re": re}
    assert reply.frame(True) == msgpack.packb(expected, use_bin_type=True)
    assert reply.frame(False) == json.dumps(expected, ensure_ascii=False, separators=(",", ":"))


@EXAMPLES
@given(ids, st.text(min_size=1, max_size=12), st.sampled_from([None, "ack", "event"]))
def test_make_move(room: str, move: str, reply: str | None) -> None:
    same(
        fw.make_move_wire(room, move, reply), to_wire(m.MakeMove(room=room, move=move, reply=reply))
    )
