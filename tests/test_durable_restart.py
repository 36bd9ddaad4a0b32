"""A single ``arena serve`` on its default store (SQLite in --data-dir) loses nothing.

Real server processes on real files: ``kill -9`` of the node with 20 games in
progress while their players move, and a SIGTERM mid-game; after the restart every
acknowledged move is in the log, every game goes on to its end, name claims,
ratings and records are intact, and a spectator catches up by seq.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from arena_process import Node, serve_command, start_node, stop_node
from conftest import strong
from test_multinode import assert_gap_free, last_turn, play, retry, start_game
from test_server_games import everyone_moves

from clients.client import ArenaError, Client, ConnectionLost
from protocol import messages as m

GAMES = 20


@contextlib.asynccontextmanager
async def node(data: Path, *args: str) -> AsyncIterator[Node]:
    """``arena serve --data-dir DATA`` (the default store), killed on the way out."""
    n = await start_node(serve_command("--data-dir", str(data), "--grace", "60", *args))
    try:
        yield n
    finally:
        with contextlib.suppress(ProcessLookupError):  # killed by the test, reaped already
            n.kill9()
        await n.proc.wait()
        await n.drainer  # type: ignore[misc]


async def player(url: str, name: str, **kw: float) -> Client:
    c = Client(url, **kw)
    await c.connect()
    await c.login(name, token=strong(f"secret-{name}"))
    return c


async def keep_moving(
    seats: dict[int, Client], room: str, acked: list[str], limit: int | None = None
) -> None:
    """Play first legal moves until the connection goes; ``acked``: the moves answered.
    ``limit``: after that many, wait for the connection to go (a game played so ends
    after 5 moves at the earliest: still under way when the node is killed)."""
    with contextlib.suppress(ConnectionLost, ArenaError):
        while True:
            some = next(iter(seats.values()))
            to_move, legal = last_turn(some, room)
            if to_move is None:
                return
            if limit is not None and len(acked) >= limit:
                await some.closed.wait()
                return
            await seats[to_move].move(room, legal[0])
            acked.append(legal[0])
            for c in seats.values():
                await c.next(type="move_made", room=room, where=lambda e: e.ply == len(acked))


def moves_heard(c: Client, room: str) -> list[str]:
    game = max(e.game_number for e in c.events(room) if e.type == "game_started")
    started = False
    out = []
    for e in c.events(room):
        if e.type == "game_started":
            started = e.game_number == game
        elif started and e.type == "move_made":
            out.append(e.move)
    return out


@pytest.mark.timeout(120)
async def test_kill_9_with_20_games_in_progress_loses_no_acknowledged_move(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with node(data) as first:
        # a finished rated game first: a record and two ratings to find again
        ann = await player(first.url, "ann")
        bob = await player(first.url, "bob")
        state = await ann.create_room("collapsi", seat=0, rated=True)
        done = state.room
        await bob.join(done)
        await bob.take_seat(done, 1)
        await ann.ready(done)
        await bob.ready(done)
        await ann.next(type="game_started", room=done)
        await bob.resign(done)
        over = await ann.next(type="game_over", room=done)
        board = [(e.name, e.rating) for e in await ann.leaderboard("collapsi")]
        await ann.close()
        await bob.close()
        pairs = []
        for i in range(GAMES):
            a = await player(first.url, f"a{i}")
            b = await player(first.url, f"b{i}")
            pairs.append((a, b, await start_game(a, b, tc=m.Fischer(base_ms=600_000))))
        spectator = Client(first.url)
        await spectator.connect()
        await spectator.login("watcher")
        watched = [room for _, _, room in pairs[:5]]
        for room in watched:
            await spectator.watch(room)
        acked: list[list[str]] = [[] for _ in pairs]
        tasks = [  # (at most 4 moves a game: none ends before the kill)
            asyncio.create_task(keep_moving({0: a, 1: b}, room, acked[i], limit=4))
            for i, (a, b, room) in enumerate(pairs)
        ]
        while min(map(len, acked)) < 3:  # moves under way in every game
            await asyncio.sleep(0.02)
        first.kill9()
        await asyncio.gather(*tasks)
    assert all(acked), "every game had moves acknowledged before the crash"
    async with node(data) as second:
        restored = second.events("previous_run_restored")
        assert restored and restored[0]["games"] == GAMES
        for i, (a, b, room) in enumerate(pairs):
            a.url = b.url = second.url
            await a.reconnect()  # ann resumes with the session's token
            if i % 2:  # bob's client restarted: a login with the name's token
                await b.close()
                b = Client(second.url)
                await b.connect()
                logged = await b.login(f"b{i}", token=strong(f"secret-b{i}"))
                assert logged.name == f"b{i}"
                await b.next(type="room_state", room=room)
            else:
                await b.reconnect()
            pairs[i] = (a, b, room)
        for i, (a, _, room) in enumerate(pairs):
            await a.next(type="player_reconnected", room=room, where=lambda e: e.seat == 1)
            heard = moves_heard(a, room)
            # 0 acknowledged moves lost; at most the one in flight landed unanswered
            assert heard[: len(acked[i])] == acked[i]
            assert len(heard) - len(acked[i]) <= 1
            assert_gap_free(a, room)
        spectator.url = second.url
        await spectator.reconnect()
        for a, b, room in pairs:
            moves = moves_heard(a, room)
            assert await play({0: a, 1: b}, room, moves, 200)
            await a.next(type="game_over", room=room)
        for room in watched:
            await spectator.next(type="game_over", room=room)
            assert_gap_free(spectator, room)
            a = next(p[0] for p in pairs if p[2] == room)
            assert [e.seq for e in spectator.events(room)][-1] == a.rooms[room].seq
        # ratings, name claims and the record survived
        async with Client(second.url) as reader:
            assert (await reader.get_record(over.record)).record == over.record
            entries = await reader.leaderboard("collapsi", limit=100)
            ratings = {e.name: e.rating for e in entries}
            assert all(ratings[name] == rating for name, rating in board)
            with pytest.raises(ArenaError) as taken:
                await reader.login("ann", token=strong("not-anns"))
            assert taken.value.code == "name_taken"
        for a, b, _ in pairs:
            await a.close()
            await b.close()
        await spectator.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(60)
async def test_sigterm_mid_game_then_restart_clients_reconnect_by_themselves(
    tmp_path: Path,
) -> None:
    data, port = tmp_path / "data", free_port()
    argv = serve_command("--data-dir", str(data), "--grace", "60")
    argv[argv.index("--port") + 1] = str(port)
    first = await start_node(argv)
    ann = await player(first.url, "ann", auto_reconnect=20)
    bob = await player(first.url, "bob", auto_reconnect=20)
    room = await start_game(ann, bob, tc=m.Fischer(base_ms=600_000))
    acked: list[str] = []
    assert not await play({0: ann, 1: bob}, room, acked, 3)
    last = [e for e in ann.events(room) if e.type == "move_made"][-1]
    assert await stop_node(first) == 0
    # the players' connections closed, their sessions' grace written before the store closed
    assert first.events("store_write_after_close") == []
    assert len(first.events("connection_lost")) == 2
    bye = await ann.next(type="goodbye")
    assert bye.reason == "shutdown" and bye.reconnect_after_ms
    await asyncio.sleep(1.5)  # the server is down this long: nobody's clock may run
    launched = time.monotonic()
    second = await start_node(argv)
    try:
        for c in (ann, bob):
            await c.next(type="resumed")  # by itself, once the server was back
            assert c.reconnects == 1
        assert moves_heard(ann, room) == acked
        moves = list(acked)
        mover = last.to_move
        assert await play({0: ann, 1: bob}, room, moves, 1) is False
        after = [e for e in ann.events(room) if e.type == "move_made"][-1]
        spent = last.clock.remaining_ms[mover] - after.clock.remaining_ms[mover]
        # the mover's clock ran since the restart at most, not during the downtime
        assert 0 <= spent <= (time.monotonic() - launched) * 1000
        assert await retry(lambda: play({0: ann, 1: bob}, room, moves, 200))
        over = await bob.next(type="game_over", room=room)
        assert over.result is not None
        assert_gap_free(ann, room)
        assert_gap_free(bob, room)
    finally:
        await ann.close()
        await bob.close()
        await stop_node(second)


@pytest.mark.timeout(60)
async def test_a_record_announced_just_before_kill_9_is_served_after_restart(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with node(data) as first:
        ann = await player(first.url, "ann")
        bob = await player(first.url, "bob")
        state = await ann.create_room("collapsi", seat=0, rated=True)
        await bob.join(state.room)
        await bob.take_seat(state.room, 1)
        await ann.ready(state.room)
        await bob.ready(state.room)
        started = await ann.next(type="game_started", room=state.room)
        # each side moves first: a resignation before that is an abort, with no result
        await everyone_moves(state.room, [ann, bob], started)
        await bob.resign(state.room)
        over = await ann.next(type="game_over", room=state.room)
        first.kill9()  # at once: the record was announced, so it is on disk
        await ann.close()
        await bob.close()
    async with node(data) as second, Client(second.url) as reader:
        rec = await reader.get_record(over.record)
        assert rec.data.result is not None and rec.data.result.reason == "resign"
        assert [(c.name, c.after) for c in rec.ratings] == [(c.name, c.after) for c in over.ratings]
