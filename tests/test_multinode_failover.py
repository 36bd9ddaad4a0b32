"""Failover and outages of several real ``arena serve`` nodes on one real Redis: the
interleavings issue 7's review found broken (a Redis outage longer than the lease, a
move that lands while Redis hangs, an owner paused until another node takes over,
a forwarded request retried after the owner died) and the lease and clock behaviour
a game relies on. Each client acts only on what it has heard.

Where the outcome of a race decides which node takes a room over, the test arranges
it (a node paused with SIGSTOP while the other one acts), so the test fails the same
way every run when the behaviour breaks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator, Iterator
from typing import Any

import msgpack
import pytest
from arena_process import Node, start_node, stop_node
from redis_proxy import RedisProxy
from redis_server import RedisServer, delete_prefix
from test_multinode import (
    LEASE_TTL,
    assert_gap_free,
    client,
    cluster,
    last_turn,
    moves_in_log,
    play,
    retry,
    serve_argv,
    start_game,
    wait_owner,
)
from websockets.asyncio.client import connect

from clients.client import ArenaError, Client
from engine.base import game_class
from protocol import messages as m
from server.presence.redis import RedisPresence
from tests.presence_appends import append_event

TTL = float(LEASE_TTL)


async def assert_all_have(
    presence: RedisPresence, room: str, acked: list[str], clients: tuple[Client, ...]
) -> None:
    """The log and every client hold exactly the acknowledged moves, in order, no gap."""
    assert moves_in_log(await presence.rooms.read_events(room)) == acked
    for c in clients:
        assert_gap_free(c, room)
        assert [e.move for e in c.events(room) if e.type == "move_made"] == acked


@contextlib.contextmanager
def paused(node: Node) -> Iterator[None]:
    """SIGSTOP the node for the block (SIGCONT after, whatever happens)."""
    os.kill(node.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(node.proc.pid, signal.SIGCONT)


@pytest.fixture
async def aof_redis() -> AsyncIterator[tuple[RedisServer, RedisPresence, str]]:
    """A Redis of the test's own (append-only, so a restart keeps the logs)."""
    server = RedisServer(appendonly=True)
    server.start()
    prefix = "fo:"
    presence = RedisPresence(server.url, prefix=prefix)
    try:
        await presence.start()
        yield server, presence, prefix
    finally:
        await presence.close()
        with contextlib.suppress(Exception):
            delete_prefix(server.url, prefix)
        server.close()


def assert_no_repeats(c: Client, room: str) -> None:
    """No room event reached the client twice (live or in a catch-up; the client also
    lists the events of a catch-up among those received, as the same objects)."""
    msgs = [msg for msg in c.received if getattr(msg, "room", None) == room]
    replayed = {id(e) for msg in msgs if msg.type == "catch_up" for e in msg.events}
    seqs = [e.seq for msg in msgs if msg.type == "catch_up" for e in msg.events]
    seqs += [msg.seq for msg in msgs if msg.type in m.ROOM_EVENT_TYPES and id(msg) not in replayed]
    repeated = sorted({s for s in seqs if seqs.count(s) > 1})
    assert not repeated, f"{c.player.name if c.player else c} heard {repeated} twice"


async def heard(c: Client, room: str, ply: int) -> None:
    """Wait until the client has heard the move of ``ply`` (live, caught up, or as a reply)."""
    if not any(e.type == "move_made" and e.ply == ply for e in c.events(room)):
        await c.next(type="move_made", room=room, where=lambda e: e.ply == ply)


def dump(nodes: list[Node]) -> None:
    """Shown by pytest when the test fails."""
    for n in nodes:
        notes = [{k: v for k, v in e.items() if k != "exception"} for e in n.lines]
        print(n.name, [e for e in notes if e.get("level") != "info"][-20:])
        print(n.name, [e.get("event") for e in n.lines][-40:])


@contextlib.asynccontextmanager
async def ann_and_bob(a: Node, b: Node) -> AsyncIterator[tuple[Client, Client]]:
    """ann logged in on node ``a``, bob on ``b``; both closed at the end, and on a failure
    the nodes' last log lines are shown."""
    ann, bob = await client(a.url, "ann"), await client(b.url, "bob")
    try:
        yield ann, bob
    except BaseException:
        dump(list({a.name: a, b.name: b}.values()))
        raise
    finally:
        for c in (ann, bob):
            await c.close()


async def test_redis_outage_longer_than_the_lease_keeps_the_old_owners_players_in(
    aof_redis: tuple[RedisServer, RedisPresence, str],
) -> None:
    """Redis is down for several lease TTLs while bob (on o2) is to move; when it is
    back o2 takes the room over on bob's move. ann, on o1 (the room's old owner),
    must hear that move through o1 and play on: o1 re-attaches its members to the
    new owner even though the room used to be its own."""
    server, presence, prefix = aof_redis
    async with (
        cluster(server.url, prefix, ["o1", "o2"]) as (o1, o2),
        ann_and_bob(o1, o2) as (ann, bob),
    ):
        room = await start_game(ann, bob)
        assert await presence.leases.owner(room) == "o1"
        acked: list[str] = []
        seats = {0: ann, 1: bob}
        assert not await play(seats, room, acked, 1)
        to_move, legal = last_turn(bob, room)
        assert to_move == 1

        server.stop()
        await asyncio.sleep(3 * TTL)  # the outage itself: it outlasts the lease
        with paused(o1):  # o1 cannot race o2 for the room: o2 takes it over
            server.start()
            await retry(lambda: bob.move(room, legal[0]))
            acked.append(legal[0])
            assert await presence.leases.owner(room) == "o2"
        for c in (ann, bob):  # ann hears bob's move through o1
            await c.next(type="move_made", room=room, where=lambda e: e.ply == len(acked))
        assert await play(seats, room, acked, 200)

        await assert_all_have(presence, room, acked, (ann, bob))
        # the outage is logged once by each node's lease renewals and sweeps, without a
        # stack trace, and so is the recovery
        for node in (o1, o2):
            for event in ("lease_renew_failed", "sweep_failed", "sweep_recovered"):
                said = node.events(event)
                assert len(said) == (event != "lease_renew_failed" or node is o1), said
                assert not any("exception" in e for e in said), said


async def test_a_move_that_lands_while_redis_hangs_reaches_every_node(
    aof_redis: tuple[RedisServer, RedisPresence, str],
) -> None:
    """Redis hangs (SIGSTOP) while ann's move is being appended: ann is told
    ``unavailable``, yet the append runs when Redis wakes (h1 still holds the lease: it
    is longer than the hang here), so the move is in the log. h1 (ann's node, the owner)
    takes the room back; bob, on h2, must receive that move (he never heard of it),
    once, in order, and play on."""
    server, presence, prefix = aof_redis
    async with (
        cluster(server.url, prefix, ["h1", "h2"], lease_ttl=6.0) as (h1, h2),
        ann_and_bob(h1, h2) as (ann, bob),
    ):
        room = await start_game(ann, bob)
        assert await presence.leases.owner(room) == "h1"
        acked: list[str] = []
        seats = {0: ann, 1: bob}
        assert not await play(seats, room, acked, 2)
        to_move, legal = last_turn(ann, room)
        assert to_move == 0
        assert server.proc is not None
        os.kill(server.proc.pid, signal.SIGSTOP)
        try:
            with pytest.raises(ArenaError) as err:
                await ann.move(room, legal[0])
            assert err.value.code == "unavailable"
        finally:
            os.kill(server.proc.pid, signal.SIGCONT)
        # the append ran when Redis woke: the move is in the log
        assert moves_in_log(await presence.rooms.read_events(room)) == [*acked, legal[0]]
        acked.append(legal[0])
        for c in (ann, bob):
            await c.next(type="move_made", room=room, where=lambda e: e.ply == len(acked))
        assert await play(seats, room, acked, 200)

        await assert_all_have(presence, room, acked, (ann, bob))
        for c in (ann, bob):
            assert_no_repeats(c, room)


async def test_an_owner_paused_past_its_lease_acknowledges_nothing_when_it_wakes(
    redis_url: str, redis_prefix: str, presence: RedisPresence
) -> None:
    """p1 (the owner) is paused until p2 has taken the room over; ann's move reaches p1
    while it sleeps. Woken, p1 must not acknowledge it from its old copy (its lease is
    gone: the append is fenced off); the move is played by p2, and bob's reply to it is
    accepted (no second copy of the room answers ``not_your_turn``)."""
    async with (
        cluster(redis_url, redis_prefix, ["p1", "p2"]) as (p1, p2),
        ann_and_bob(p1, p2) as (ann, bob),
    ):
        room = await start_game(ann, bob)
        assert await presence.leases.owner(room) == "p1"
        acked: list[str] = []
        seats = {0: ann, 1: bob}
        assert not await play(seats, room, acked, 2)
        to_move, legal = last_turn(ann, room)
        assert to_move == 0
        with paused(p1):
            assert await wait_owner(presence, room, not_="p1") == "p2"
            await ann.send(m.MakeMove(id="m", room=room, move=legal[0], reply="event"))
        reply = await ann.next(where=lambda msg: getattr(msg, "re", None) == "m")
        if reply.type == "error":  # refused by p1: played on p2 when retried
            assert reply.code == "unavailable"
            await retry(lambda: ann.move(room, legal[0]))
        acked.append(legal[0])
        for c in (ann, bob):
            await heard(c, room, len(acked))
        assert await play(seats, room, acked, 200)
        assert await presence.leases.owner(room) in ("p2", None)
        await assert_all_have(presence, room, acked, (ann, bob))
        # p1 logged nothing after p2 took over, so p2's copy never fell behind the log
        assert not p2.events("room_copy_stale")
        # woken past its lease, p1 met an expected condition: no error, no stack trace
        loud = [e for e in p1.lines if e.get("level") in ("error", "critical") or "exception" in e]
        assert not loud, loud[:3]


async def test_a_stale_copy_of_a_room_reloads_rather_than_refusing_a_legal_move(
    redis_url: str, redis_prefix: str, presence: RedisPresence
) -> None:
    """q2 (the owner, bob's node) is paused until q1 has taken the room over and ann's
    move is logged there. bob's move, legal by the log, reaches q2 while it sleeps (sent
    then, so that it meets q2's old copy): woken, q2 must not refuse it from that copy
    (``not_your_turn``) but see that the log moved past it; the move is played."""
    async with (
        cluster(redis_url, redis_prefix, ["q1", "q2"]) as (q1, q2),
        ann_and_bob(q1, q2) as (ann, bob),
    ):
        room = await start_game(bob, ann)  # bob's room: q2 owns it, bob has seat 0
        assert await presence.leases.owner(room) == "q2"
        acked: list[str] = []
        seats = {0: bob, 1: ann}
        assert not await play(seats, room, acked, 1)
        with paused(q2):
            assert await wait_owner(presence, room, not_="q2") == "q1"
            to_move, legal = last_turn(ann, room)
            assert to_move == 1
            await retry(lambda: ann.move(room, legal[0]))
            acked.append(legal[0])
            events = await presence.rooms.read_events(room)
            assert moves_in_log(events) == acked
            bob_moves = events[-1]["legal_moves"]
            await bob.send(m.MakeMove(id="b", room=room, move=bob_moves[0], reply="event"))
        reply = await bob.next(where=lambda msg: getattr(msg, "re", None) == "b")
        if reply.type == "error":  # the stale copy was retired: played when retried
            assert reply.code == "unavailable", reply
            await retry(lambda: bob.move(room, bob_moves[0]))
        acked.append(bob_moves[0])
        for c in (ann, bob):
            await heard(c, room, len(acked))
        assert await play(seats, room, acked, 200)
        await assert_all_have(presence, room, acked, (ann, bob))


async def test_a_seq_conflict_is_answered_unavailable_and_the_retry_is_played(
    redis_url: str, redis_prefix: str, presence: RedisPresence
) -> None:
    """Something else that holds the room's lease (a second copy of the room on its own
    node, say) logs an event behind the owner's back; the owner's next append then
    expects the wrong seq. The mover is told ``unavailable`` (typed, retryable; not
    ``internal``), and the retry is played on the room as logged."""
    async with cluster(redis_url, redis_prefix, ["c1"]) as (c1,), ann_and_bob(c1, c1) as (ann, bob):
        room = await start_game(ann, bob)
        acked: list[str] = []
        seats = {0: ann, 1: bob}
        assert not await play(seats, room, acked, 1)
        chat = {"type": "chat_message", "room": room, "name": "eve", "text": "hi"}
        await append_event(presence, room, {**chat, "spectator": True}, owner="c1")
        to_move, legal = last_turn(bob, room)
        assert to_move == 1
        with pytest.raises(ArenaError) as err:
            await bob.move(room, legal[0])
        assert err.value.code == "unavailable"
        await retry(lambda: bob.move(room, legal[0]))
        acked.append(legal[0])
        for c in (ann, bob):
            await heard(c, room, len(acked))
        assert await play(seats, room, acked, 200)
        assert moves_in_log(await presence.rooms.read_events(room)) == acked
        for c in (ann, bob):
            assert_gap_free(c, room)
            assert [e.text for e in c.events(room) if e.type == "chat_message"] == ["hi"]
        assert not c1.events("request_failed")


async def test_the_owner_keeps_its_rooms_for_games_longer_than_the_lease(
    redis_url: str, redis_prefix: str, presence: RedisPresence
) -> None:
    """The owner renews its leases: a game that lasts several lease TTLs (players who
    think) stays on its node, with no takeover, and plays to its end."""
    async with (
        cluster(redis_url, redis_prefix, ["k1", "k2"]) as (k1, k2),
        ann_and_bob(k1, k2) as (ann, bob),
    ):
        room = await start_game(ann, bob)
        acked: list[str] = []
        seats = {0: ann, 1: bob}
        for _ in range(4):  # four thinking pauses of a lease TTL each
            await asyncio.sleep(TTL)  # real time passing is the point here
            assert not await play(seats, room, acked, 1)
            assert await presence.leases.owner(room) == "k1"
        assert await play(seats, room, acked, 200)
        assert moves_in_log(await presence.rooms.read_events(room)) == acked
        for n in (k1, k2):
            assert not n.events("room_taken_over")
            assert not n.events("lease_lost")


async def test_time_a_player_spent_before_the_owner_died_stays_spent(
    redis_url: str, redis_prefix: str, presence: RedisPresence
) -> None:
    """Fischer clocks come back from the log: ann thinks half a second over her move,
    then the owner is killed while bob is to move. After the takeover ann's clock still
    shows that half second spent (as logged), not a fresh base time."""
    base = 60_000
    think = 0.5
    async with (
        cluster(redis_url, redis_prefix, ["t1", "t2"]) as (t1, t2),
        ann_and_bob(t1, t2) as (ann, bob),
    ):
        t0 = asyncio.get_running_loop().time()  # before ann's clock can start
        room = await start_game(ann, bob, tc=m.Fischer(base_ms=base, increment_ms=0))
        acked: list[str] = []
        seats = {0: ann, 1: bob}
        to_move, legal = last_turn(ann, room)
        assert to_move == 0
        await asyncio.sleep(think)  # ann thinks: her clock runs
        await ann.move(room, legal[0])
        thought_ms = (asyncio.get_running_loop().time() - t0) * 1000
        acked.append(legal[0])
        for c in (ann, bob):
            await heard(c, room, len(acked))
        logged = [e for e in bob.events(room) if e.type == "move_made"][-1].clock
        assert base - thought_ms <= logged.remaining_ms[0] <= base - think * 1000

        t1.kill9()  # bob is to move
        await t1.proc.wait()
        assert await wait_owner(presence, room, not_="t1") == "t2"
        to_move, legal = last_turn(bob, room)
        assert to_move == 1
        await retry(lambda: bob.move(room, legal[0]))
        acked.append(legal[0])
        await heard(bob, room, len(acked))
        after = [e for e in bob.events(room) if e.type == "move_made"][-1].clock
        assert after.remaining_ms[0] == logged.remaining_ms[0]  # ann's clock as logged

        ann.url = t2.url  # ann resumes on the surviving node and the game goes on
        await retry(ann.reconnect)
        await heard(ann, room, len(acked))
        assert await play(seats, room, acked, 200)
        assert moves_in_log(await presence.rooms.read_events(room)) == acked


def turn(c: Client, room: str) -> tuple[int | None, list[str], list[str]]:
    """Who is to move, their legal moves, and which of those end the game (by the engine,
    from what the client heard)."""
    events = c.events(room)
    start = max(i for i, e in enumerate(events) if e.type == "game_started")
    state = c.rooms[room].state
    assert state is not None
    game = game_class(state.game).from_setup(
        events[start].setup, rules=state.rules, variant=state.variant, players=2
    )
    for e in events[start:]:
        if e.type == "move_made":
            game.play(e.move)
    ends = []
    for mv in game.legal_moves():
        after = game.copy()
        after.play(mv)
        if after.is_over():
            ends.append(mv)
    return game.to_move(), game.legal_moves(), ends


@contextlib.asynccontextmanager
async def owner_behind_proxy(
    redis_url: str, prefix: str
) -> AsyncIterator[tuple[RedisProxy, Node, Node]]:
    """Two nodes: i1 talks to Redis through a proxy (so a test can stop it right after a
    given write), i2 directly."""
    port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    async with RedisProxy(port) as proxy:
        nodes = await asyncio.gather(
            start_node(serve_argv(proxy.url, prefix, "i1"), name="i1"),
            start_node(serve_argv(redis_url, prefix, "i2"), name="i2"),
        )
        try:
            yield proxy, nodes[0], nodes[1]
        finally:
            await asyncio.gather(*(stop_node(n) for n in nodes))


async def raw_catch_up(url: str, room: str) -> list[dict[str, Any]]:
    """The room's events as a JSON client watching from seq 0 receives them, unparsed."""
    events: list[dict[str, Any]] = []
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "hello", "id": 1, "versions": [1], "software": "t"}))
        await ws.send(json.dumps({"type": "watch", "id": 2, "room": room, "since_seq": 0}))
        while True:
            msg = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if msg["type"] == "catch_up" and msg.get("re") == 2:
                events += msg["events"]
                if not msg["more"]:
                    return events


def move_marker(ply: int, seat: int, move: str) -> bytes:
    """The bytes of a ``move_made`` event as the node sends it to Redis to log it (a
    msgpack map, these three entries in a row)."""
    return b"".join(msgpack.packb(x) for x in ("ply", ply, "seat", seat, "move", move))


async def test_a_request_retried_after_its_owner_died_is_not_run_twice(
    redis_url: str, redis_prefix: str, presence: RedisPresence
) -> None:
    """bob (on i2) moves; i2 forwards the move to the owner i1, which logs it and dies
    before it can answer (killed right after the append reached Redis). i2 retries the
    request on the room's new owner, itself: the move is in the log under the request's
    id, so bob is told it was played (not ``not_your_turn``) and it is not played again."""
    async with (
        owner_behind_proxy(redis_url, redis_prefix) as (proxy, i1, i2),
        ann_and_bob(i1, i2) as (ann, bob),
    ):
        seats = {0: ann, 1: bob}
        room = await start_game(ann, bob)
        acked: list[str] = []
        assert not await play(seats, room, acked, 1)
        to_move, legal = last_turn(bob, room)
        assert to_move == 1
        proxy.arm(move_marker(len(acked) + 1, 1, legal[0]))
        sent = asyncio.ensure_future(bob.move(room, legal[0]))
        await proxy.tripped.wait()
        i1.kill9()  # the move is logged; i1 answers nothing more
        await sent  # played, as far as bob is told
        acked.append(legal[0])
        await heard(bob, room, len(acked))
        assert moves_in_log(await presence.rooms.read_events(room)) == acked  # once
        assert await presence.leases.owner(room) == "i2"
        assert i2.events("request_retried") and i2.events("request_repeated")

        ann.url = i2.url  # the game goes on
        await retry(ann.reconnect)
        await heard(ann, room, len(acked))
        assert await play(seats, room, acked, 200)
        assert moves_in_log(await presence.rooms.read_events(room)) == acked
        for c in (ann, bob):
            assert [e.move for e in c.events(room) if e.type == "move_made"] == acked
        # the log keeps the request ids of forwarded requests; clients never see them
        assert any("request" in e for e in await presence.rooms.read_events(room))
        for e in await raw_catch_up(i2.url, room):
            assert "request" not in e, e


async def test_a_game_whose_owner_died_between_its_last_move_and_game_over_is_finished(
    redis_url: str, redis_prefix: str, presence: RedisPresence
) -> None:
    """The owner i1 is stopped right after the game's final move reached the log (before
    it could log ``game_over``) and killed. The new owner finds the game over by the
    log but not finished, and finishes it: ``game_over`` with the result, and a record."""
    async with (
        owner_behind_proxy(redis_url, redis_prefix) as (proxy, i1, i2),
        ann_and_bob(i1, i2) as (ann, bob),
    ):
        seats = {0: ann, 1: bob}
        room = await start_game(ann, bob)
        acked: list[str] = []
        to_move, legal, ends = turn(bob, room)
        while not ends:  # play on until a move would end the game
            assert to_move is not None
            await retry(lambda c=seats[to_move], mv=legal[0]: c.move(room, mv))
            acked.append(legal[0])
            for c in (ann, bob):
                await heard(c, room, len(acked))
            to_move, legal, ends = turn(bob, room)
        assert to_move is not None
        final = ends[0]
        proxy.arm(move_marker(len(acked) + 1, to_move, final))
        sent = asyncio.ensure_future(seats[to_move].move(room, final))
        await proxy.tripped.wait()
        i1.kill9()  # the final move is logged, game_over is not
        await i1.proc.wait()
        acked.append(final)
        events = await presence.rooms.read_events(room)
        assert events[-1]["type"] == "move_made" and events[-1]["move"] == final

        over = await bob.next(type="game_over", room=room, timeout=15)
        assert over.result.winner == to_move  # the other seat has no move left
        assert over.record is not None
        record = await bob.get_record(over.record)
        assert record.data.moves == acked
        assert record.data.result.winner == to_move
        events = await presence.rooms.read_events(room)
        assert [e["type"] for e in events].count("game_over") == 1
        assert moves_in_log(events) == acked
        assert i2.events("room_taken_over")
        with contextlib.suppress(ArenaError):  # ann's request died with i1
            await sent
