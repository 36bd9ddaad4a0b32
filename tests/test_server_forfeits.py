"""Forfeits in 3-4 player Collapsi Big Board over real websockets (ruling 3): a player
who resigns, times out, leaves, logs out or is abandoned while two others or more are
still in goes out (``player_eliminated``) and the others play on; a player already out
(by forfeit, or stuck under the house rule ``elimination``) changes nothing by leaving;
when one player is left the game ends ranked by elimination time. Two-player games end
on a forfeit as before (tests/test_server_games.py); a stuck player ending a 3-4 player
game: tests/test_server_stuck.py."""

from __future__ import annotations

import asyncio
import itertools
import random
from typing import Any

import pytest

from clients.client import TURN_EVENTS, ArenaError, Client, GameOverError
from engine.base import GameRecord, game_class, replay
from protocol import messages as m
from protocol.codec import to_wire
from server.cluster import restore_room

NAMES = ["ann", "bob", "cat", "dan"]
GAMES = itertools.count()


async def big_board(
    arena: Any, players: int, fresh: bool = False, **room: Any
) -> tuple[str, list[Client]]:
    """A rated Big Board room with every seat taken and ready; the game has started.
    ``fresh``: players with names of their own (several games in one test)."""
    tag = f"{next(GAMES)}" if fresh else ""
    clients = [await arena.client(n + tag, token=f"{n}-secret") for n in NAMES[:players]]
    state = await clients[0].create_room(
        "collapsi", variant="big-board", seats=players, seat=0, rated=True, **room
    )
    for i, c in enumerate(clients[1:], start=1):
        await c.join(state.room)
        await c.take_seat(state.room, i)
    for c in clients:
        await c.ready(state.room)
    return state.room, clients


async def turn(observer: Client, room: str, after: int = 0) -> Any:
    """The next event (after seq ``after``) that says whose turn it is, or game over."""
    return await observer.next(
        type=(*TURN_EVENTS, "game_over"), room=room, where=lambda e: e.seq > after
    )


async def play_to_end(room: str, seats: list[Client], observer: Client, ev: Any) -> m.GameOver:
    """From turn event ``ev``, each seat to move plays a random legal move."""
    rng = random.Random(1)
    while ev.type != "game_over":
        if ev.to_move is not None:
            await seats[ev.to_move].move(room, rng.choice(ev.legal_moves))
        ev = await turn(observer, room, after=ev.seq)
    return ev


#: the Big Board house rule under which a stuck player goes out and the others play on
ELIMINATION = {"elimination": True}


def knocks_out(position: str, players: int, moves: list[str]) -> str | None:
    """A move after which the next player has no move but the game goes on (by the engine,
    under the house rule ``elimination``)."""
    game = game_class("collapsi").from_setup(
        position, variant="big-board", players=players, options=ELIMINATION
    )
    for mv in moves:
        after = game.copy()
        after.play(mv)
        if after.eliminated() and not after.is_over():
            return mv
    return None


async def until_someone_has_no_move(
    arena: Any, players: int = 3
) -> tuple[str, list[Client], Any] | None:
    """A game under the house rule ``elimination`` played (greedily, to knock a player out)
    until a player is out by having no move and the others play on; None if this deal
    never got there."""
    room, clients = await big_board(arena, players, fresh=True, options=ELIMINATION)
    rng = random.Random(2)
    while True:
        ev = await turn(clients[0], room)
        if ev.type == "game_over":
            return None
        if ev.view.get("eliminated"):
            return (room, clients, ev) if ev.to_move is not None else None
        mv = knocks_out(ev.position, players, ev.legal_moves) or rng.choice(ev.legal_moves)
        await clients[ev.to_move].move(room, mv)


async def check_log_and_record(arena: Any, room: str, c: Client, over: m.GameOver) -> GameRecord:
    """Every event the client heard is logged as it was sent; the record replays to the
    announced result."""
    logged = {e["seq"]: e for e in await arena.arena.presence.rooms.read_events(room)}
    heard = c.events(room)
    assert [e.seq for e in heard] == list(range(heard[0].seq, heard[-1].seq + 1))
    for ev in heard:
        assert repr(logged[ev.seq]) == repr(to_wire(ev))
    rec = await c.get_record(over.record)
    record = GameRecord.from_dict(rec.data.model_dump())
    game = replay(record)
    if over.result.reason == "no_moves":
        assert game.result().to_dict() == over.result.model_dump()
    assert record.moves == [e.move for e in heard if e.type == "move_made"]
    return record


async def test_an_alive_player_resigning_goes_out_and_the_other_two_play_on(arena: Any) -> None:
    await arena.start()
    room, (ann, bob, cat) = await big_board(arena, 3, time_control=m.Fischer(base_ms=600_000))
    spectator = await arena.client()
    await spectator.watch(room)
    ev = await turn(ann, room)
    rng = random.Random(3)
    await ann.move(room, rng.choice(ev.legal_moves))
    ev = await turn(ann, room)
    assert ev.to_move == 1
    await bob.resign(room)  # bob is to move: the turn passes to cat
    for c in (ann, bob, cat, spectator):
        out = await c.next(type=("player_eliminated", "game_over"), room=room)
        assert out.type == "player_eliminated"
        assert (out.seat, out.reason, out.ply, out.to_move) == (1, "resign", 1, 2)
        assert out.view["eliminated"] == [1]
        assert out.position.split()[1].split(",")[1] == "x1"
        assert out.clock.running == 2 and out.legal_moves
    with_bob_out = game_class("collapsi").from_setup(out.position, variant="big-board", players=3)
    assert out.legal_moves == with_bob_out.legal_moves()
    # bob is out: his moves are refused, resigning again changes nothing
    try:
        await bob.move(room, out.legal_moves[0])
        raise AssertionError("bob moved after going out")
    except GameOverError:
        pass
    await bob.resign(room)
    over = await play_to_end(room, [ann, bob, cat], ann, out)
    await spectator.next(type="game_over", room=room)
    assert over.result.reason == "no_moves"
    assert over.result.order[-1] == 1  # out first: last
    assert over.result.winner == over.result.order[0] and set(over.result.order) == {0, 1, 2}
    assert not [e for e in ann.events(room) if e.type == "player_eliminated" and e.seat != 1]
    # ratings follow the order, as for a normal ending
    change = {r.seat: r.after - r.before for r in over.ratings}
    assert change[over.result.order[0]] > 0 > change[1]
    record = await check_log_and_record(arena, room, spectator, over)
    assert record.forfeits == [{"seat": 1, "ply": 1, "reason": "resign"}]


async def test_leaving_logging_out_or_resigning_when_out_already_changes_nothing(
    arena: Any,
) -> None:
    await arena.start()
    for how in ("leave", "logout", "resign"):
        for _ in range(8):
            found = await until_someone_has_no_move(arena)
            if found is not None:
                break
        else:  # pragma: no cover - 8 greedy games without a knock-out
            raise AssertionError("no game reached an elimination")
        room, clients, ev = found
        (out,) = ev.view["eliminated"]
        seq = ev.seq
        if how == "leave":
            await clients[out].leave(room)
        elif how == "logout":
            await clients[out].logout()
        else:
            await clients[out].resign(room)
        alive = [s for s in range(3) if s != out]
        watcher = clients[alive[0]]
        if how != "resign":
            await watcher.next(type="player_left", room=room)
        # nothing but the seat changed: the one to move still moves
        after = [e.type for e in watcher.events(room) if e.seq > seq]
        assert after == ([] if how == "resign" else ["seat_freed", "player_left"])
        over = await play_to_end(room, clients, watcher, ev)
        assert over.result.reason == "no_moves"
        assert over.result.order[-1] == out and set(over.result.order[:2]) == set(alive)
        await check_log_and_record(arena, room, watcher, over)


async def test_out_players_dropping_and_a_player_abandoning_in_a_four_player_game(
    arena: Any,
) -> None:
    """dan resigns (out), then his connection drops: his abandonment changes nothing.
    cat's connection drops: past the grace period she is out (``abandon``) and the game
    goes on; bob resigns: one player left, ann wins, ranked by elimination time."""
    await arena.start(grace=0.3)
    room, (ann, bob, cat, dan) = await big_board(arena, 4)
    await dan.resign(room)
    ev = await ann.next(type="player_eliminated", room=room)
    assert (ev.seat, ev.reason, ev.to_move) == (3, "resign", 0)
    dan.abort()
    await ann.next(type="seat_freed", room=room, where=lambda e: e.name == "dan")
    await ann.next(type="player_left", room=room)
    cat.abort()
    ev = await ann.next(type="player_eliminated", room=room, timeout=5)
    assert (ev.seat, ev.reason, ev.to_move) == (2, "abandon", 0)
    assert ev.view["eliminated"] == [3, 2]
    await ann.next(type="seat_freed", room=room, where=lambda e: e.name == "cat")
    assert not [e for e in ann.events(room) if e.type == "game_over"]
    await ann.move(room, ev.legal_moves[0])  # the game goes on
    ev = await turn(ann, room, after=ev.seq)
    await bob.move(room, ev.legal_moves[0])  # both still in have moved: not aborted
    await bob.resign(room)
    over = await ann.next(type="game_over", room=room)
    assert over.result.model_dump() == {
        "winner": 0,
        "order": [0, 1, 2, 3],
        "reason": "resign",
        "scores": None,
    }
    deltas = [r.after - r.before for r in sorted(over.ratings, key=lambda r: r.seat)]
    assert deltas == sorted(deltas, reverse=True) and deltas[0] > 0 > deltas[3]
    record = await check_log_and_record(arena, room, ann, over)
    assert [(f["seat"], f["reason"]) for f in record.forfeits] == [(3, "resign"), (2, "abandon")]
    assert replay(record).eliminated() == [3, 2]


async def test_a_time_out_with_three_players_passes_the_turn_on(arena: Any) -> None:
    await arena.start()
    room, (_ann, bob, _cat) = await big_board(arena, 3, time_control=m.PerMove(ms=500))
    started = await turn(bob, room)
    assert started.to_move == 0  # ann does not move
    ev = await bob.next(type=("player_eliminated", "game_over"), room=room, timeout=5)
    assert (ev.type, ev.seat, ev.reason, ev.to_move) == ("player_eliminated", 0, "timeout", 1)
    assert ev.clock.remaining_ms[0] == 0 and ev.clock.running == 1
    await bob.move(room, ev.legal_moves[0])
    ev = await turn(bob, room)
    assert ev.type == "move_made" and ev.to_move == 2


async def test_a_room_restored_from_its_log_has_the_forfeit(
    redis_url: str, redis_prefix: str, arena: Any
) -> None:
    """A room rebuilt from its event log (a takeover on another node) holds the same
    match after a ``player_eliminated``; then the game goes on in the restored room."""
    node = await arena.start(node="fa", presence_url=redis_url, prefix=redis_prefix)
    room, (ann, bob, cat) = await big_board(
        arena, 3, time_control=m.Fischer(base_ms=600_000, increment_ms=1000)
    )
    ev = await turn(ann, room)
    await ann.move(room, ev.legal_moves[0])
    ev = await turn(ann, room)
    await asyncio.sleep(0.05)  # bob's clock runs
    await cat.resign(room)  # not to move: bob keeps the turn
    out = await ann.next(type="player_eliminated", room=room)
    assert (out.seat, out.to_move) == (2, 1)
    live = node.rooms[room]
    meta = await node.presence.rooms.get(room)
    events = await node.presence.rooms.read_events(room)
    now = live._now()
    restored, unfinished = restore_room(node, meta, events, now)
    assert not unfinished and restored.playing
    a, b = live.match, restored.match
    assert b.game.position() == a.game.position()
    assert b.game.eliminated() == [2] and b.game.forfeits() == a.game.forfeits()
    assert b.to_move() == 1 and b.game.legal_moves() == a.game.legal_moves()
    assert b.clocks(now) == out.clock.remaining_ms  # bob's clock restarts as logged
    # the node's copy is retired; the next request restores the room from the log
    node.cluster.retire(live)
    await bob.move(room, out.legal_moves[0])
    assert node.rooms[room] is not live
    over = await play_to_end(room, [ann, bob, cat], ann, await turn(ann, room))
    assert over.result.order[-1] == 2
    await check_log_and_record(arena, room, ann, over)


async def test_a_move_arriving_after_another_players_flag_fell_is_out_of_turn(
    arena: Any,
) -> None:
    """seat 0's time runs out; before the room's own deadline timer ran, seat 1 sends a
    move. The flag is applied first (seat 0 out, the game goes on with seat 1 to move),
    and seat 1's move, sent out of turn, is not_your_turn, not game_over."""
    server = await arena.start()
    room, (ann, bob, _cat) = await big_board(
        arena, 3, time_control=m.Fischer(base_ms=300, increment_ms=0)
    )
    actor = server.rooms[room]
    started = await turn(ann, room)
    assert started.to_move == 0
    actor._cancel_deadline()  # the race: the move gets to the actor before the timer
    actor._arm_deadline = lambda: None
    await asyncio.sleep(0.4)
    with pytest.raises(ArenaError) as refused:
        await bob.move(room, started.legal_moves[0])
    assert refused.value.code == "not_your_turn"
    out = await ann.next(type="player_eliminated", room=room)
    assert (out.seat, out.reason, out.to_move) == (0, "timeout", 1)
    assert not [x for x in ann.received if x.type == "game_over"]


async def test_a_bot_that_left_a_game_that_went_on_is_rated_as_a_bot(arena: Any) -> None:
    await arena.start()
    ann, bob = await arena.client("ann", token="a-secret"), await arena.client("bob", token="b")
    bot = await arena.client("kestrel-bot", token="k-secret", bot=True)
    state = await ann.create_room("collapsi", variant="big-board", seats=3, seat=0, rated=True)
    await bob.join(state.room)
    await bob.take_seat(state.room, 1)
    await bot.join(state.room)
    await bot.take_seat(state.room, 2)
    for c in (ann, bob, bot):
        await c.ready(state.room)
    ev = await turn(ann, state.room)
    for seat in (ann, bob):  # both play a move (a resign before that aborts)
        await seat.move(state.room, ev.legal_moves[0])
        ev = await turn(ann, state.room, after=ev.seq)
    await bot.leave(state.room)  # out; the game goes on without its seat
    await ann.next(type="player_eliminated", room=state.room)
    await bob.resign(state.room)
    await ann.next(type="game_over", room=state.room)
    board = await ann.request(m.GetLeaderboard(game="collapsi"))
    assert {e.name: e.bot for e in board.entries}["kestrel-bot"] is True


async def test_a_player_who_joins_shows_its_rating(arena: Any) -> None:
    """player_joined carries the joiner's rating in the room's game, as seats do."""
    server = await arena.start()
    await server.presence.ratings.put("collapsi", {"bob": {"rating": 1623.5}})
    ann = await arena.client("ann", token="a-secret")
    bob = await arena.client("bob", token="bob-secret")
    room = (await ann.create_room("collapsi", seat=0)).room
    await bob.join(room)
    joined = await ann.next(type="player_joined", where=lambda e: e.player.name == "bob")
    assert joined.player.rating == 1623.5


async def test_arena_plays_board_follows_a_forfeit_before_the_first_move(arena: Any) -> None:
    """`arena play --watch`/`--join` rebuilds the board from a snapshot: a player out
    before any move (the history is empty) must not be left to move on it."""
    from clients.cli.play_cmd import Board

    await arena.start()
    room, clients = await big_board(arena, 3)
    started = await turn(clients[0], room)
    await clients[started.to_move].resign(room)
    out = await clients[0].next(type="player_eliminated", room=room)
    state = await (await arena.client()).watch(room)
    assert state.history == [] and state.to_move == out.to_move
    board = Board()
    board.start(state, state.setup, state.history, len(state.seats))
    assert board.game is not None
    assert board.game.to_move() == out.to_move and board.game.position() == state.position
    board.game.play(out.legal_moves[0])  # the next move, as the server will have it
