"""Several real ``arena serve`` processes sharing one real Redis.

Players on different nodes play one game (the room's owner runs it, the other
node proxies); a spectator watches from a third node; the owner is killed with
SIGKILL mid-game and another node takes the room over from its Redis stream,
the players resume on surviving nodes and finish; Redis itself is stopped and
restarted during play. Leases are short (``--lease-ttl``) so takeovers are
quick.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from arena_process import Node, serve_command, start_node, stop_node
from redis_server import RedisServer, delete_prefix

from clients.client import ArenaError, Client
from protocol import messages as m
from server.presence.redis import RedisPresence

LEASE_TTL = "1.0"


def serve_argv(
    redis_url: str, prefix: str, node: str, grace: float = 30.0, lease_ttl: str = LEASE_TTL
) -> list[str]:
    return serve_command(
        "--redis",
        redis_url,
        "--redis-prefix",
        prefix,
        "--node",
        node,
        "--lease-ttl",
        lease_ttl,
        "--grace",
        str(grace),
    )


@contextlib.asynccontextmanager
async def cluster(
    redis_url: str, prefix: str, names: list[str], grace: float = 30.0, lease_ttl: float = 0
) -> AsyncIterator[list[Node]]:
    ttl = str(lease_ttl) if lease_ttl else LEASE_TTL
    started = await asyncio.gather(
        *(start_node(serve_argv(redis_url, prefix, n, grace, ttl), name=n) for n in names),
        return_exceptions=True,
    )
    nodes = [n for n in started if isinstance(n, Node)]
    if len(nodes) < len(started):  # one did not start: the others must not outlive the test
        await asyncio.gather(*(stop_node(n) for n in nodes))
        raise next(e for e in started if isinstance(e, BaseException))
    try:
        yield list(nodes)
    finally:
        await asyncio.gather(*(stop_node(n) for n in nodes))


async def client(url: str, name: str) -> Client:
    c = Client(url)
    await c.connect()
    await c.login(name)
    return c


async def retry(fn: Any, timeout: float = 15.0) -> Any:
    """Call ``fn()`` until it stops failing with ``unavailable`` (a takeover or an outage)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await fn()
        except ArenaError as exc:
            if exc.code != "unavailable" or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.1)


async def wait_owner(presence: RedisPresence, room: str, not_: str, timeout: float = 15.0) -> str:
    """Wait until someone other than ``not_`` owns ``room``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        owner = await presence.leases.owner(room)
        if owner is not None and owner != not_:
            return owner
        await asyncio.sleep(0.05)
    raise AssertionError(f"nobody took {room} over from {not_}")


def last_turn(c: Client, room: str) -> tuple[int | None, list[str]]:
    """Who is to move and their legal moves, as the client last heard."""
    for ev in reversed(c.events(room)):
        if ev.type in ("move_made", "game_started"):
            return ev.to_move, list(ev.legal_moves)
        if ev.type == "game_over":
            return None, []
    state = c.rooms[room].state
    assert state is not None
    return state.to_move, list(state.legal_moves)


async def play(seats: dict[int, Client], room: str, acked: list[str], max_moves: int) -> bool:
    """Play up to ``max_moves`` moves (first legal move); True when the game is over."""
    for _ in range(max_moves):
        some = next(iter(seats.values()))
        to_move, legal = last_turn(some, room)
        if to_move is None:
            return True
        mover = seats[to_move]
        await retry(lambda mover=mover, mv=legal[0]: mover.move(room, mv))
        acked.append(legal[0])
        for c in seats.values():  # every player hears of it before the next move
            await c.next(type="move_made", room=room, where=lambda e: e.ply == len(acked))
    return last_turn(next(iter(seats.values())), room)[0] is None


async def start_game(ann: Client, bob: Client, tc: Any = None, private: bool = False) -> str:
    state = await ann.create_room("collapsi", seat=0, time_control=tc, private=private)
    room = state.room
    if private:  # the invite code works on every node
        assert state.invite is not None
        joined = await retry(lambda: bob.join(invite=state.invite))
        assert joined.room == room
    else:
        await retry(lambda: bob.join(room))
    await retry(lambda: bob.take_seat(room, 1))
    await ann.ready(room)
    await bob.ready(room)
    for c in (ann, bob):
        await c.next(type="game_started", room=room)
    return room


def moves_in_log(events: list[dict[str, Any]]) -> list[str]:
    start = max(i for i, e in enumerate(events) if e["type"] == "game_started")
    return [e["move"] for e in events[start:] if e["type"] == "move_made"]


def assert_gap_free(c: Client, room: str) -> None:
    seqs = [e.seq for e in c.events(room)]
    assert seqs == sorted(set(seqs))
    assert c.rooms[room].gaps == []


async def test_players_on_two_nodes_spectator_on_a_third_and_owner_killed(
    redis_url: str, redis_prefix: str, presence: RedisPresence
) -> None:
    async with cluster(redis_url, redis_prefix, ["n1", "n2", "n3"]) as (n1, n2, n3):
        ann, bob, cat = (
            await client(n1.url, "ann"),
            await client(n2.url, "bob"),
            await client(n3.url, "cat"),
        )
        try:
            tc = m.Fischer(base_ms=600_000, increment_ms=0)
            # the lobby is shared: bob on n2 sees ann's room on n1
            state = await ann.create_room("collapsi", seat=0, time_control=tc)
            room = state.room
            assert room in [r.room for r in await bob.list_rooms()]
            assert await presence.leases.owner(room) == "n1"
            await bob.join(room)
            await bob.take_seat(room, 1)
            await cat.watch(room)
            await ann.ready(room)
            await bob.ready(room)
            for c in (ann, bob, cat):
                await c.next(type="game_started", room=room)

            acked: list[str] = []
            seats = {0: ann, 1: bob}
            assert not await play(seats, room, acked, 3)
            assert len(acked) == 3
            before = [e for e in bob.events(room) if e.type == "move_made"][-1].clock
            seat_to_move = last_turn(bob, room)[0]
            assert seat_to_move is not None

            # the owner dies without a word; its lease lapses, another node takes over
            t_kill = time.monotonic()
            n1.kill9()
            await n1.proc.wait()
            owner = await wait_owner(presence, room, not_="n1")
            t_seen = time.monotonic()
            takeover_s = t_seen - t_kill
            assert owner in ("n2", "n3")
            assert takeover_s < 10

            # ann's client reconnects to a surviving node and resumes her session there
            ann.url = n3.url if owner == "n2" else n2.url
            resumed = await retry(ann.reconnect)
            assert room in resumed.rooms
            assert not await play(seats, room, acked, 1)
            t_ack = time.monotonic()
            after = [e for e in bob.events(room) if e.type == "move_made"][-1].clock
            # the mover's clock restarted at the takeover: the downtime was not charged
            charged = before.remaining_ms[seat_to_move] - after.remaining_ms[seat_to_move]
            assert 0 <= charged <= (t_ack - t_seen) * 1000 + 300
            assert charged < (t_ack - t_kill) * 1000 - 300
            assert await play(seats, room, acked, 200)

            over = await cat.next(type="game_over", room=room)
            events = await presence.rooms.read_events(room)
            assert moves_in_log(events) == acked  # every acknowledged move, in order
            assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
            record = await bob.get_record(over.record)
            assert record.data.moves == acked
            for c in (bob, cat):  # never disconnected: every event, in order, once
                assert_gap_free(c, room)
                assert [e.move for e in c.events(room) if e.type == "move_made"] == acked
            took = [n for n in (n2, n3) if n.events("room_taken_over")]
            assert [n.name for n in took] == [owner]
        except BaseException:
            for n in (n1, n2, n3):  # shown by pytest on failure
                print(n.name, [e for e in n.lines if e.get("level") != "info"][-20:])
                print(n.name, [e.get("event") for e in n.lines][-40:])
            raise
        finally:
            for c in (ann, bob, cat):
                await c.close()


async def test_redis_stopped_and_restarted_during_play() -> None:
    server = RedisServer(appendonly=True)
    server.start()
    prefix = "mn:"
    presence = RedisPresence(server.url, prefix=prefix)
    try:
        await presence.start()
        async with cluster(server.url, prefix, ["r1", "r2"]) as (r1, r2):
            ann, bob = await client(r1.url, "ann"), await client(r2.url, "bob")
            try:
                room = await start_game(ann, bob)
                acked: list[str] = []
                seats = {0: ann, 1: bob}
                assert not await play(seats, room, acked, 2)

                server.stop()
                to_move, legal = last_turn(ann, room)
                mover = seats[to_move]  # type: ignore[index]
                t0 = time.monotonic()
                with pytest.raises(ArenaError) as err:
                    await mover.move(room, legal[0])
                assert err.value.code == "unavailable"
                with pytest.raises(ArenaError) as err:
                    await bob.list_rooms()
                assert err.value.code == "unavailable"
                assert time.monotonic() - t0 < 8  # typed errors, not hangs

                server.start()  # the AOF brings back every event
                assert await play(seats, room, acked, 200)
                events = await presence.rooms.read_events(room)
                assert moves_in_log(events) == acked
                for c in (ann, bob):
                    assert [e.move for e in c.events(room) if e.type == "move_made"] == acked
            finally:
                for c in (ann, bob):
                    await c.close()
    finally:
        await presence.close()
        with contextlib.suppress(Exception):
            delete_prefix(server.url, prefix)
        server.close()


async def test_player_whose_node_died_and_never_returns_loses_by_abandonment(
    redis_url: str, redis_prefix: str
) -> None:
    async with cluster(redis_url, redis_prefix, ["a1", "a2"], grace=1.5) as (a1, a2):
        ann, bob = await client(a1.url, "ann"), await client(a2.url, "bob")
        try:
            room = await start_game(ann, bob, private=True)  # owned by a1, bob on a2
            acked: list[str] = []
            assert not await play({0: ann, 1: bob}, room, acked, 2)
            a2.kill9()
            gone = await ann.next(type="player_disconnected", room=room, timeout=15)
            assert (gone.name, gone.seat) == ("bob", 1)
            over = await ann.next(type="game_over", room=room, timeout=15)
            assert over.result.reason == "abandon"
            assert over.result.winner == 0
        finally:
            for c in (ann, bob):
                await c.close()


async def test_quick_match_pairs_players_of_different_nodes(
    redis_url: str, redis_prefix: str
) -> None:
    async with cluster(redis_url, redis_prefix, ["q1", "q2"]) as (q1, q2):
        ann, bob = await client(q1.url, "ann"), await client(q2.url, "bob")
        try:
            await ann.quick_match("collapsi", rated=False)
            await bob.quick_match("collapsi", rated=False)
            ma = await ann.next(type="matched", timeout=15)
            mb = await bob.next(type="matched", timeout=15)
            assert ma.room == mb.room and {ma.seat, mb.seat} == {0, 1}
            seats = {ma.seat: ann, mb.seat: bob}
            for c in (ann, bob):
                await c.next(type="game_started", room=ma.room)
            acked: list[str] = []
            assert await play(seats, ma.room, acked, 200)
            for c in (ann, bob):
                assert [e.move for e in c.events(ma.room) if e.type == "move_made"] == acked
        finally:
            for c in (ann, bob):
                await c.close()


async def test_a_node_shut_down_cleanly_hands_its_rooms_over_at_once(
    redis_url: str, redis_prefix: str, presence: RedisPresence
) -> None:
    async with cluster(redis_url, redis_prefix, ["g1", "g2"]) as (g1, g2):
        ann, bob = await client(g1.url, "ann"), await client(g2.url, "bob")
        try:
            room = await start_game(ann, bob)
            acked: list[str] = []
            seats = {0: ann, 1: bob}
            assert not await play(seats, room, acked, 2)
            g1.proc.send_signal(signal.SIGTERM)  # goodbye to ann, leases released
            bye = await ann.next(type="goodbye", timeout=10)
            assert bye.reason == "shutdown"
            assert await asyncio.wait_for(g1.proc.wait(), 30) == 0, g1.lines[-5:]
            assert await presence.leases.owner(room) in (None, "g2")  # released, not lapsed
            ann.url = g2.url
            await retry(ann.reconnect)
            assert await play(seats, room, acked, 200)
            assert await presence.leases.owner(room) in ("g2", None)
            assert moves_in_log(await presence.rooms.read_events(room)) == acked
        finally:
            for c in (ann, bob):
                await c.close()
