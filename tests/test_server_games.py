"""Complete games over real websockets on loopback, real server, real client, real engines.

Collapsi in both rule sets, a 3-player Big Board game and Collecto; a spectator
sees every event in order; results, ratings and records are checked against
the engine replaying the record.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from pydantic import TypeAdapter

from clients.client import Client, ForbiddenError
from engine.base import GameRecord, replay
from protocol import messages as m
from protocol.codec import to_wire

ROOM_EVENTS: TypeAdapter[Any] = TypeAdapter(m.RoomEvent)

GAME_EVENTS = ("game_started", "move_made", "game_over")


async def play_to_end(
    room: str, seats: list[Client], observer: Client, rng: random.Random
) -> m.GameOver:
    """Each seat plays a random legal move when the observer sees it is its turn."""
    while True:
        ev = await observer.next(type=GAME_EVENTS, room=room)
        if ev.type == "game_over":
            return ev
        if ev.to_move is not None:
            await seats[ev.to_move].move(room, rng.choice(ev.legal_moves))


async def seat_players(
    arena: Any, game: str, names: list[str], **room: Any
) -> tuple[str, list[Client]]:
    """The first player creates the room; everyone sits in order and declares ready."""
    clients = [await arena.client(n, token=f"{n}-secret") for n in names]
    state = await clients[0].create_room(game, seat=0, **room)
    for i, c in enumerate(clients[1:], start=1):
        await c.join(state.room)
        await c.take_seat(state.room, i)
    return state.room, clients


async def ready_all(room: str, clients: list[Client]) -> None:
    for c in clients:
        await c.ready(room)


async def everyone_moves(room: str, clients: list[Client], ev: Any) -> Any:
    """Each seat plays one move from ``ev`` (a turn event) on: from then on a forfeit
    decides the game (before, it is aborted); the last turn event."""
    for _ in clients:
        await clients[ev.to_move].move(room, ev.legal_moves[0])
        ev = await clients[0].next(type="move_made", room=room)
    return ev


def check_event_stream(events: list[Any]) -> None:
    seqs = [e.seq for e in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "events must be gap-free"


async def finish_and_check(
    arena: Any, room: str, clients: list[Client], spectator: Client, seed: int
) -> tuple[m.GameOver, GameRecord]:
    await ready_all(room, clients)
    over = await play_to_end(room, clients, clients[0], random.Random(seed))
    await spectator.next(type="game_over", room=room)
    # The spectator saw exactly the players' events from where it started watching.
    watched = spectator.events(room)
    assert watched, "the spectator saw the game"
    check_event_stream(watched)
    player_view = {e.seq: e for e in clients[0].events(room)}
    for ev in watched:
        assert player_view[ev.seq] == ev
    assert not spectator.rooms[room].gaps and not clients[0].rooms[room].gaps
    # Every event anyone saw is in the room's log in presence, under the same seq.
    logged = {e["seq"]: e for e in await arena.arena.presence.rooms.read_events(room)}
    assert sorted(logged) == list(range(1, len(logged) + 1))
    for ev in clients[0].events(room):
        assert logged[ev.seq] == to_wire(ev)
        assert list(logged[ev.seq]) == list(to_wire(ev))  # same keys in the same order
        assert repr(logged[ev.seq]) == repr(to_wire(ev))  # nested ones too
    # the lobby entry, built without models, is exactly the summary model's wire
    live = arena.arena.rooms[room]
    assert live.summary_wire() == to_wire(live.summary())
    assert repr(live.summary_wire()) == repr(to_wire(live.summary()))  # order, nested too
    # The record replays in the engine to the announced result.
    rec = await spectator.get_record(over.record)
    record = GameRecord.from_dict(rec.data.model_dump())
    game = replay(record)
    assert game.result() is not None
    assert game.result().to_dict() == over.result.model_dump()
    moves = [e.move for e in watched if e.type == "move_made"]
    assert record.moves == moves
    assert record.players == [c.player.name for c in clients]
    return over, record


async def test_collapsi_standard_rated_game_with_spectator(arena: Any) -> None:
    await arena.start()
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"], rated=True)
    spectator = await arena.client(binary=False)  # anonymous, JSON text frames
    state = await spectator.watch(room)
    assert state.role == "spectator" and state.you is None
    over, record = await finish_and_check(arena, room, [ann, bob], spectator, seed=1)
    assert record.rules == "standard" and record.rules_version == "1.3.1"
    assert over.result.reason == "no_moves"
    winner = over.result.winner
    assert {c.name for c in over.ratings} == {"ann", "bob"}
    change = {c.seat: c for c in over.ratings}
    assert change[winner].after > change[winner].before == 1500.0
    assert change[1 - winner].after < 1500.0
    board = await spectator.leaderboard("collapsi")
    assert [e.name for e in board] == [["ann", "bob"][winner], ["ann", "bob"][1 - winner]]
    assert board[0].rating == change[winner].after and board[0].games == 1


async def test_every_room_event_of_a_room_is_exactly_its_models_wire(
    arena: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Room events are built as wire data, not models (server.room.emit_wire): every
    event of a rated game's room, from the first join to its close, is its model's wire."""
    await arena.start()
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"], rated=True)
    rooms = arena.arena.presence.rooms
    events = await rooms.read_events(room)
    closed = asyncio.get_running_loop().create_future()
    append = rooms.append

    async def append_and_read(room_id: str, *args: Any, **kwargs: Any) -> int:
        """The store's append, then what it logged, read back (a closed room's log goes
        with it: read before it does)."""
        seq = await append(room_id, *args, **kwargs)
        if room_id == room:
            events.extend(await rooms.read_events(room, after_seq=events[-1]["seq"]))
            if events[-1]["type"] == "room_closed":
                closed.set_result(None)
        return seq

    monkeypatch.setattr(rooms, "append", append_and_read)
    await ready_all(room, [ann, bob])
    await play_to_end(room, [ann, bob], ann, random.Random(3))
    await ann.leave(room)
    await bob.leave(room)  # the last player: the room closes
    await asyncio.wait_for(closed, 10)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["type"] for e in events} >= {
        "player_joined",
        "seat_taken",
        "ready_changed",
        "game_started",
        "move_made",
        "game_over",
        "seat_freed",
        "player_left",
        "room_closed",
    }
    for raw in events:
        wire = to_wire(ROOM_EVENTS.validate_python(raw))
        assert repr(raw) == repr(wire)  # same keys, order and values, nested too
    (over,) = [e for e in events if e["type"] == "game_over"]
    assert len(over["ratings"]) == 2


async def test_a_turn_logs_and_sends_its_held_events_even_when_it_fails(arena: Any) -> None:
    """Events a room holds to log with the next one (server.room ``hold``) are logged
    together, in order, before anyone sees them; a turn that fails after holding one
    still logs and sends it, and the room's next event follows it."""
    await arena.start()
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"])
    live = arena.arena.rooms[room]
    before = live.seq

    async def held_then_failed() -> None:
        await live.emit_wire("ready_changed", seat=0, ready=False, hold=True)
        assert await arena.arena.presence.rooms.last_seq(room) == before  # not logged yet
        assert not [e for e in bob.events(room) if e.seq > before]  # nor sent
        raise RuntimeError("a bug after a held event")

    with pytest.raises(RuntimeError):
        await live.ask(held_then_failed)
    ev = await bob.next(type="ready_changed", room=room, where=lambda e: e.seq > before)
    assert ev.seq == before + 1 and live.seq == before + 1
    await ann.ready(room)
    await bob.ready(room)  # the last ready: ready_changed and game_started in one append
    started = await bob.next(type="game_started", room=room)
    assert started.seq == before + 4
    logged = await arena.arena.presence.rooms.read_events(room, after_seq=before)
    assert [e["type"] for e in logged] == [
        "ready_changed",
        "ready_changed",
        "ready_changed",
        "game_started",
    ]
    check_event_stream(bob.events(room))


async def test_a_move_is_answered_by_ack_or_by_its_own_move_made(arena: Any) -> None:
    """``move`` without ``reply`` gets ``ack``; with ``reply: "event"`` its mover's
    ``move_made`` carries ``re`` and no ``ack`` follows; the others' copy has no ``re``."""
    await arena.start()
    room, clients = await seat_players(arena, "collapsi", ["eve", "fay"])
    await ready_all(room, clients)
    ev = await clients[0].next(type="game_started", room=room)
    # a refused move with reply "event" is answered by its error, as before
    idle = clients[1 - ev.to_move]
    await idle.send(m.MakeMove(id=950, room=room, move=ev.legal_moves[0], reply="event"))
    err = await idle.next(type="error", where=lambda e: e.re == 950)
    assert err.code == "not_your_turn"
    checked = 0
    for rid, reply in ((901, None), (902, "event"), (903, "event"), (904, None)):
        if ev.to_move is None:  # the game ended early
            break
        mover, other = clients[ev.to_move], clients[1 - ev.to_move]
        mine, after = len(mover.received), ev.seq

        def later(e: Any, after: int = after) -> bool:
            return e.seq > after

        await mover.send(m.MakeMove(id=rid, room=room, move=ev.legal_moves[0], reply=reply))
        made = await mover.next(type="move_made", room=room, where=later)
        seen = await other.next(type="move_made", room=room, where=later)
        assert made.seq == seen.seq == after + 1 and seen.re is None
        await mover.ping()  # replies come in order: anything for this move arrived first
        replies = [x for x in mover.received[mine:] if getattr(x, "re", None) == rid]
        if reply is None:
            assert made.re is None and [x.type for x in replies] == ["ack"]
        else:
            assert made.re == rid and replies == [made]
            assert made.model_copy(update={"re": None}) == seen
        ev = seen
        checked += 1
    assert checked >= 2, "a move answered by ack and one by its move_made were checked"


async def test_collapsi_classic_casual_game(arena: Any) -> None:
    await arena.start()
    room, clients = await seat_players(arena, "collapsi", ["cat", "dan"], rules="classic")
    spectator = await arena.client("eve")
    await spectator.join(room, role="spectator")
    over, record = await finish_and_check(arena, room, clients, spectator, seed=2)
    assert record.rules == "classic" and record.rules_version == "1.1.0"
    assert over.ratings == []
    assert await spectator.leaderboard("collapsi") == []


async def test_big_board_three_player_game(arena: Any) -> None:
    await arena.start()
    room, clients = await seat_players(
        arena, "collapsi", ["p1", "p2", "p3"], variant="big-board", seats=3, rated=True
    )
    spectator = await arena.client()
    await spectator.watch(room)
    over, record = await finish_and_check(arena, room, clients, spectator, seed=3)
    assert len(record.players) == 3 and record.variant == "big-board"
    assert sorted(over.result.order) == [0, 1, 2]
    after = {c.seat: c.after for c in over.ratings}
    order = over.result.order
    assert after[order[0]] > after[order[1]] > after[order[2]]


async def test_collecto_game(arena: Any) -> None:
    await arena.start()
    room, clients = await seat_players(arena, "collecto", ["gus", "hal"], rated=True)
    spectator = await arena.client()
    await spectator.watch(room)
    over, record = await finish_and_check(arena, room, clients, spectator, seed=4)
    assert record.game == "collecto"
    assert over.result.reason == "score" and over.result.scores is not None


async def test_rematch_swaps_sides(arena: Any) -> None:
    await arena.start()
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"])
    await ready_all(room, [ann, bob])
    first = await ann.next(type="game_started", room=room)
    assert [s.player.name for s in first.seats] == ["ann", "bob"]
    await everyone_moves(room, [ann, bob], first)
    await bob.resign(room)
    over = await ann.next(type="game_over", room=room)
    assert over.result.reason == "resign" and over.result.winner == 0
    await bob.offer_rematch(room)
    await ann.next(type="rematch_offered", room=room)
    await ann.accept_rematch(room)
    second = await ann.next(type="game_started", room=room)
    assert second.game_number == 2
    assert [s.player.name for s in second.seats] == ["bob", "ann"]
    await bob.move(room, second.legal_moves[0])  # bob now moves first
    assert (await ann.next(type="move_made", room=room)).seat == 0


async def test_lobby_lists_live_rooms_and_private_rooms_need_an_invite(arena: Any) -> None:
    await arena.start()
    watcher = await arena.client()
    assert await watcher.subscribe_lobby() == []
    ann = await arena.client("ann")
    state = await ann.create_room("collapsi", seat=0)
    added = await watcher.next(type="room_added")
    assert added.summary.room == state.room and added.summary.status == "waiting"
    hidden = await ann.create_room("collecto", private=True, seat=0)
    assert hidden.invite
    bob = await arena.client("bob")
    rooms = await bob.list_rooms()
    assert [r.room for r in rooms] == [state.room]
    try:
        await bob.join(hidden.room)
        raise AssertionError("joined a private room without its invite")
    except Exception as exc:
        assert getattr(exc, "code", None) == "forbidden"
    joined = await bob.join(invite=hidden.invite)
    assert joined.room == hidden.room
    viewer = await arena.client("vic")
    with pytest.raises(ForbiddenError):
        await viewer.watch(hidden.room)
    assert (await viewer.join(invite=hidden.invite, role="spectator")).role == "spectator"
    await bob.join(state.room)
    await bob.take_seat(state.room)
    updated = await watcher.next(
        type="room_updated", where=lambda e: all(s.player for s in e.summary.seats)
    )
    assert updated.summary.room == state.room
    await ann.ready(state.room)
    await bob.ready(state.room)
    live = await watcher.next(type="room_updated", where=lambda e: e.summary.status == "playing")
    assert live.summary.room == state.room
    assert [r.status for r in await watcher.list_rooms()] == ["playing"]
    await ann.leave(state.room)
    await bob.leave(state.room)
    assert (await watcher.next(type="room_removed")).room == state.room
    assert await watcher.list_rooms() == []


async def test_quick_match_pairs_close_ratings(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann", token="a")
    bob = await arena.client("bob", token="b")
    queued = await ann.quick_match("collapsi", rated=True)
    assert queued.waiting == 1
    await bob.quick_match("collapsi", rated=True)
    ma = await ann.next(type="matched")
    mb = await bob.next(type="matched")
    assert ma.room == mb.room and {ma.seat, mb.seat} == {0, 1}
    started = await ann.next(type="game_started", room=ma.room)
    assert started.game_number == 1
    # each gets the room's snapshot after its seat is taken: it says which seat is theirs
    for client, matched in ((ann, ma), (bob, mb)):
        state = await client.next(type="room_state", room=ma.room)
        assert state.you == matched.seat and state.seq == started.seq
        assert state.status == "playing" and state.to_move == started.to_move
    mover = ann if started.to_move == ma.seat else bob
    await mover.move(ma.room, started.legal_moves[0])


async def test_quick_match_waits_for_a_similar_rating(arena: Any) -> None:
    a = await arena.start(match_gap=100, match_widen_per_s=0)
    await a.presence.ratings.put(
        "collecto",
        {"ann": {"rating": 1500.0}, "bob": {"rating": 2100.0}, "cat": {"rating": 1550.0}},
    )
    ann, bob, cat = [await arena.client(n, token=n) for n in ("ann", "bob", "cat")]
    await ann.quick_match("collecto")
    queued = await bob.quick_match("collecto")
    assert queued.waiting == 2  # 600 points apart: no pairing
    await cat.quick_match("collecto")
    ma, mc = await ann.next(type="matched"), await cat.next(type="matched")
    assert ma.room == mc.room
    await bob.cancel_quick_match()
    assert not [x for x in bob.received if x.type == "matched"]


async def test_seats_show_their_players_rating_in_the_rooms_game(arena: Any) -> None:
    """A claimed player's seat shows its rating in the room's game once it has one (null
    before its first rated game there, and always for guests); a finished rated game
    updates the seats, and a new room and the lobby show the new figures."""
    await arena.start()
    room, clients = await seat_players(arena, "collapsi", ["ann", "bob"], rated=True)
    ann, bob = clients
    state = await ann.watch(room)
    assert [st.player.rating for st in state.seats] == [None, None]
    await ready_all(room, clients)
    over = await play_to_end(room, clients, ann, random.Random(5))
    after = {c.name: c.after for c in over.ratings}
    state = await bob.watch(room)
    assert {st.player.name: st.player.rating for st in state.seats} == after
    fresh = await ann.create_room("collapsi", seat=0)
    assert fresh.seats[0].player.rating == after["ann"]
    listed = [r for r in await bob.list_rooms() if r.room == fresh.room]
    assert listed[0].seats[0].player.rating == after["ann"]
    other = await ann.create_room("collecto", seat=0)  # no rated collecto game yet
    assert other.seats[0].player.rating is None
    guest = await arena.client("cat")
    assert (await guest.create_room("collapsi", seat=0)).seats[0].player.rating is None
