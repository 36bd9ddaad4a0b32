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
import os
import signal
from collections.abc import AsyncIterator, Iterator

import pytest
from arena_process import Node
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
    start_game,
    wait_owner,
)

from clients.client import ArenaError, Client
from server.presence.redis import RedisPresence

TTL = float(LEASE_TTL)


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
    seqs += [
        msg.seq
        for msg in msgs
        if msg.type not in ("catch_up", "room_state") and id(msg) not in replayed
    ]
    repeated = sorted({s for s in seqs if seqs.count(s) > 1})
    assert not repeated, f"{c.player.name if c.player else c} heard {repeated} twice"


def dump(nodes: list[Node]) -> None:
    """Shown by pytest when the test fails."""
    for n in nodes:
        notes = [{k: v for k, v in e.items() if k != "exception"} for e in n.lines]
        print(n.name, [e for e in notes if e.get("level") != "info"][-20:])
        print(n.name, [e.get("event") for e in n.lines][-40:])


async def test_redis_outage_longer_than_the_lease_keeps_the_old_owners_players_in(
    aof_redis: tuple[RedisServer, RedisPresence, str],
) -> None:
    """Redis is down for several lease TTLs while bob (on o2) is to move; when it is
    back o2 takes the room over on bob's move. ann, on o1 (the room's old owner),
    must hear that move through o1 and play on: o1 re-attaches its members to the
    new owner even though the room used to be its own."""
    server, presence, prefix = aof_redis
    async with cluster(server.url, prefix, ["o1", "o2"]) as (o1, o2):
        ann, bob = await client(o1.url, "ann"), await client(o2.url, "bob")
        try:
            room = await start_game(ann, bob)
            assert await presence.room_owner(room) == "o1"
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
                assert await presence.room_owner(room) == "o2"
            for c in (ann, bob):  # ann hears bob's move through o1
                await c.next(type="move_made", room=room, where=lambda e: e.ply == len(acked))
            assert await play(seats, room, acked, 200)

            assert moves_in_log(await presence.read_events(room)) == acked
            for c in (ann, bob):
                assert_gap_free(c, room)
                assert [e.move for e in c.events(room) if e.type == "move_made"] == acked
        except BaseException:
            dump([o1, o2])
            raise
        finally:
            for c in (ann, bob):
                await c.close()


async def test_a_move_that_lands_while_redis_hangs_reaches_every_node(
    aof_redis: tuple[RedisServer, RedisPresence, str],
) -> None:
    """Redis hangs (SIGSTOP) while ann's move is being appended: ann is told
    ``unavailable``, yet the append runs when Redis wakes, so the move is in the log.
    o1 (ann's node, the owner) takes the room back; bob, on o2, must receive that move
    (he never heard of it), once, in order, and play on."""
    server, presence, prefix = aof_redis
    async with cluster(server.url, prefix, ["h1", "h2"]) as (h1, h2):
        ann, bob = await client(h1.url, "ann"), await client(h2.url, "bob")
        try:
            room = await start_game(ann, bob)
            assert await presence.room_owner(room) == "h1"
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
                with paused(h2):  # h1 takes the room back, not h2
                    os.kill(server.proc.pid, signal.SIGCONT)
                    assert await wait_owner(presence, room, not_="") == "h1"
            # the append ran when Redis woke: the move is in the log
            assert moves_in_log(await presence.read_events(room)) == [*acked, legal[0]]
            acked.append(legal[0])
            for c in (ann, bob):
                await c.next(type="move_made", room=room, where=lambda e: e.ply == len(acked))
            assert await play(seats, room, acked, 200)

            assert moves_in_log(await presence.read_events(room)) == acked
            for c in (ann, bob):
                assert_gap_free(c, room)
                assert_no_repeats(c, room)
                assert [e.move for e in c.events(room) if e.type == "move_made"] == acked
        except BaseException:
            dump([h1, h2])
            raise
        finally:
            for c in (ann, bob):
                await c.close()
