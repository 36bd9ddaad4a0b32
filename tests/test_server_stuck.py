"""Ruling 3 over real websockets: in a 3-4 player Big Board game a player with no move
on their turn ends the game at once; the last player to complete a move wins and the
others rank by how recently each moved, the stuck player last, players out by forfeit
below them (the earliest out last). Ratings follow that order and the record replays
to it. The house rule ``elimination`` keeps a stuck player out while the others play on
(tests/test_server_forfeits.py plays it further)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from tests.test_server_forfeits import ELIMINATION, big_board, check_log_and_record, turn
from tests.test_server_play_cmd import arena_play, read_line


def ruling_3_order(players: int, movers: list[int], out: list[int], stuck: int) -> list[int]:
    """The finishing order from who moved when (independent of the engine's walk)."""
    last = {s: -1 - ((stuck - s) % players) for s in range(players)}  # never moved
    for ply, seat in enumerate(movers):
        last[seat] = ply
    still_in = [s for s in range(players) if s not in out and s != stuck]
    return [*sorted(still_in, key=lambda s: -last[s]), stuck, *reversed(out)]


async def play_out(arena: Any, players: int, resign_first: bool = False, **room: Any) -> tuple:
    """A rated Big Board game played with random legal moves to its end; returns the
    game_over, the movers in order, the seats out by forfeit, and the observer."""
    room_id, clients = await big_board(arena, players, fresh=True, **room)
    observer = clients[0]
    ev = await turn(observer, room_id)
    out: list[int] = []
    if resign_first:  # the mover forfeits before any move: out, the others play on
        out.append(ev.to_move)
        await clients[ev.to_move].resign(room_id)
        ev = await observer.next(type="player_eliminated", room=room_id)
    movers: list[int] = []
    rng = random.Random(players)
    while ev.type != "game_over":
        if ev.to_move is not None:
            movers.append(ev.to_move)
            await clients[ev.to_move].move(room_id, rng.choice(ev.legal_moves))
        ev = await turn(observer, room_id, after=ev.seq)
    return room_id, ev, movers, out, observer


@pytest.mark.parametrize("players", [3, 4])
async def test_a_stuck_player_ends_the_game_ranked_by_last_move(arena: Any, players: int) -> None:
    await arena.start()
    room, over, movers, _, observer = await play_out(arena, players)
    res = over.result
    assert res.reason == "no_moves" and res.winner == movers[-1]
    stuck = res.order[-1]
    assert res.order == ruling_3_order(players, movers, [], stuck)
    last_move = [e for e in observer.events(room) if e.type == "move_made"][-1]
    assert last_move.to_move is None and last_move.view["eliminated"] == []
    # ratings follow the finishing order: the winner gains, the stuck player loses
    change = {r.seat: r.after - r.before for r in over.ratings}
    assert change[res.winner] > 0 > change[stuck]
    record = await check_log_and_record(arena, room, observer, over)
    assert record.options == {} and record.forfeits == []


async def test_after_a_forfeit_the_others_play_on_and_the_forfeit_ranks_last(arena: Any) -> None:
    await arena.start()
    room, over, movers, out, observer = await play_out(arena, 4, resign_first=True)
    res = over.result
    assert len(out) == 1 and out[0] not in movers
    assert res.reason == "no_moves" and res.winner == movers[-1] and res.order[-1] == out[0]
    assert res.order == ruling_3_order(4, movers, out, res.order[-2])
    record = await check_log_and_record(arena, room, observer, over)
    assert [f["seat"] for f in record.forfeits] == out


async def test_the_house_rule_elimination_plays_on_past_a_stuck_player(arena: Any) -> None:
    await arena.start()
    room, over, movers, _, observer = await play_out(arena, 4, options=ELIMINATION)
    res = over.result
    moves = [e for e in observer.events(room) if e.type == "move_made"]
    knocked = [e.view["eliminated"] for e in moves]
    out = knocked[-1]
    # two went out by having no move, each announced by the move before it, and play
    # went on; the last two then ended it as ruling 3 says
    assert len(out) == 2 and all(e.to_move is not None for e in moves[:-1])
    assert res.reason == "no_moves" and res.winner == movers[-1]
    assert res.order[2:] == list(reversed(out))
    state = await (await arena.client()).watch(room)
    assert state.options == ELIMINATION
    record = await check_log_and_record(arena, room, observer, over)
    assert record.options == ELIMINATION


@pytest.mark.timeout(90)
async def test_arena_play_opens_an_elimination_room_and_shows_the_order(arena: Any) -> None:
    """``arena play --elimination`` as a user runs it; its game-over line names the order."""
    await arena.start()
    player = await arena_play(
        "--url", arena.url, "--name", "ann", "--create", "collapsi",
        "--variant", "big-board", "--seats", "3", "--elimination",
    )  # fmt: skip
    out: list[str] = []
    room = (await read_line(player, out)).split()[1]
    others = [await arena.client(n) for n in ("bob", "cat")]
    state = await others[0].join(room)
    assert state.options == ELIMINATION
    await others[1].join(room)
    for seat, c in enumerate(others, start=1):
        await c.take_seat(room, seat)
        await c.ready(room)

    async def plays(c: Any, seat: int) -> Any:
        while True:
            ev = await c.next(type=("game_started", "move_made", "player_eliminated",
                                    "game_over"), room=room)  # fmt: skip
            if ev.type == "game_over":
                return ev
            if ev.to_move == seat:
                await c.move(room, ev.legal_moves[-1])

    tasks = [asyncio.create_task(plays(c, s)) for s, c in enumerate(others, start=1)]
    while True:
        line = await read_line(player, out)
        if line.startswith("your move; legal: "):
            legal = line.removeprefix("your move; legal: ").split()
            player.stdin.write(f"{legal[0]}\n".encode())  # type: ignore[union-attr]
        if line.startswith("game over: "):
            break
    over = (await asyncio.gather(*tasks))[0]
    assert await asyncio.wait_for(player.wait(), 20) == 0
    seats = ["ann (red)", "bob (blue)", "cat (green)"]
    order = ", ".join(seats[s] for s in over.result.order)
    assert f"order: {order};" in line
