"""Quick match against a player who leaves while the pair is seated: no traceback, no
unsolicited error, the one still here stays queued (or plays). Real server and
clients on loopback; several tries, each racing a logout with the pairing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from structlog.testing import capture_logs

from protocol import messages as m
from server import matchmaking
from server import node_messages as nm

TRIES = 5


async def test_a_player_leaving_while_matched_hurts_nobody(arena: Any) -> None:
    with capture_logs() as logs:
        a = await arena.start()
        for i in range(TRIES):
            ann = await arena.client(f"ann{i}")
            bob = await arena.client(f"bob{i}")
            await ann.quick_match("collapsi", rated=False)
            await bob.send(m.QuickMatch(game="collapsi", rated=False))
            await bob.send(m.Logout())  # at once: the pairing races it
            await asyncio.wait_for(bob.closed.wait(), 10)
            # ann is either seated in a game with bob (who then left it) or still queued
            for _ in range(100):
                s = a.sessions[ann.session]
                if s.queue is None or await a.presence.queues.waiting(s.queue):
                    break
                await asyncio.sleep(0.01)
            assert not [msg for msg in ann.received if msg.type == "error"], i
            await ann.cancel_quick_match()
    bad = [e for e in logs if e["log_level"] in ("error", "critical") or "exc_info" in e]
    assert not bad, bad[:3]


async def test_a_cancel_during_a_pairing_is_answered_after_its_matched(arena: Any) -> None:
    """A pair is taken off the queue, then seated: a ``cancel_quick_match`` that comes in
    between is answered after the pairing's ``matched`` (before, its ``ack`` came first,
    and a bot that cancelled to accept a challenge got both games)."""
    node = await arena.start()
    seating, cancelling, go_on = asyncio.Event(), asyncio.Event(), asyncio.Event()
    seat, cancel = node.matchmaker._seat_matched, node.presence.queues.cancel

    async def held_seat(*args: Any, **kwargs: Any) -> Any:
        seating.set()
        await go_on.wait()
        return await seat(*args, **kwargs)

    async def told_cancel(*args: Any, **kwargs: Any) -> Any:
        cancelling.set()
        return await cancel(*args, **kwargs)

    node.matchmaker._seat_matched = held_seat
    node.presence.queues.cancel = told_cancel
    ann, bob = await arena.client("ann"), await arena.client("bob")
    await ann.quick_match("collapsi", rated=False)
    await bob.quick_match("collapsi", rated=False)
    async with asyncio.timeout(10):
        await seating.wait()  # off the queue, not seated
        leaving = asyncio.create_task(ann.cancel_quick_match())
        await cancelling.wait()  # the server handles the cancel
        go_on.set()
        await leaving
    kinds = [msg.type for msg in ann.received]
    assert kinds.count("ack") == 1, kinds  # (the cancel's)
    assert "matched" in kinds[: kinds.index("ack")], kinds


async def until(check: Any, what: str) -> None:
    """Poll ``check()`` (a state of another node, no event to await) for up to 10 s."""
    for _ in range(1000):
        if await check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"not {what} in 10 s")


@dataclass
class HeldPair:
    """A pair of players of two nodes taken off the queue by ``node`` (``mine`` is its
    own player, ``other`` the other node's), held there until the block ends."""

    node: Any
    others_node: Any
    mine: Any
    other: Any
    key: str


@contextlib.asynccontextmanager
async def held_pair(
    arena: Any, redis_url: str, redis_prefix: str, names: tuple[str, str]
) -> AsyncIterator[HeldPair]:
    common = {"presence_url": redis_url, "prefix": redis_prefix, "lease_ttl": 30.0}
    a = await arena.start(node=names[0], **common)
    ann = await arena.client("ann")  # on the first node
    b = await arena.start(node=names[1], **common)
    bob = await arena.client("bob")  # on the second
    popped, go_on = asyncio.Event(), asyncio.Event()
    pairing: list[Any] = []  # the node that took the pair off (either may)
    for node in (a, b):

        async def held(*args: Any, _pop: Any = node.presence.queues.pop_pair, _node: Any = node,
                       **kwargs: Any) -> Any:  # fmt: skip
            pair = await _pop(*args, **kwargs)
            if pair is not None and not popped.is_set():
                pairing.append(_node)
                popped.set()
                await go_on.wait()
            return pair

        node.presence.queues.pop_pair = held
    try:
        await bob.quick_match("collapsi", rated=False)
        await ann.quick_match("collapsi", rated=False)
        await asyncio.wait_for(popped.wait(), 10)
        node = pairing[0]
        mine, other = (ann, bob) if node is a else (bob, ann)
        key = node.sessions[mine.session].queue
        yield HeldPair(node, b if node is a else a, mine, other, key)
    finally:
        go_on.set()


async def test_a_pair_across_nodes_that_falls_through_puts_the_other_back(
    redis_url: str, redis_prefix: str, arena: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two nodes share a Redis. A node takes a pair off the queue: its own player and one
    of the other node's. Its own player cancels and drops before the pair is seated, so
    the pair falls through: the other player, still waiting, is put back in the queue.
    (Before, the other node's player was put back only if the one who left had not
    cancelled: its stand-in copied the partner's queue, and a pair of two players of
    other nodes was never put back.)"""
    # (the cancel waits this long for the pairing, which waits for the drop: the drop is
    # seen once the cancel is answered)
    monkeypatch.setattr(matchmaking, "PAIRING_WAIT_S", 0.2)
    async with held_pair(arena, redis_url, redis_prefix, ("qa", "qb")) as p:
        await p.mine.send(m.CancelQuickMatch())  # (answered once the pairing is settled)
        await until(lambda: _is(p.node.sessions[p.mine.session].queue, None), "cancelled")
        p.mine.abort()
        await until(lambda: _is(p.node.sessions[p.mine.session].conn, None), "dropped")

    async def queued_again() -> bool:
        waiting = await p.node.presence.queues.waiting(p.key)
        return any(e["player"] == p.other.session for e in waiting)

    await until(queued_again, "put back")
    assert not [x for x in p.other.received if x.type in ("matched", "error")]


async def test_a_player_of_another_node_who_cancelled_is_not_put_back(
    redis_url: str, redis_prefix: str, arena: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As above, but the other node's player cancels on its own node while the pair is
    taken off: when the pair falls through, it is not put back (its node, which knows
    it cancelled, decides), and stays out of the queue. The same pair falling through
    without that cancel puts it back (the test above)."""
    monkeypatch.setattr(matchmaking, "PAIRING_WAIT_S", 0.2)
    added: list[str] = []  # whom the other node queues once the cancel is in
    async with held_pair(arena, redis_url, redis_prefix, ("qc", "qd")) as p:
        await p.other.cancel_quick_match()  # (on its own node: its entry was taken already)
        add = p.others_node.presence.queues.add

        def told_add(queue: str, sid: str, *rest: Any) -> Any:
            added.append(sid)
            return add(queue, sid, *rest)

        p.others_node.presence.queues.add = told_add
        p.mine.abort()
        await until(lambda: _is(p.node.sessions[p.mine.session].conn, None), "dropped")
        settled = p.node.matchmaker._pairing[p.key]
    await asyncio.wait_for(settled.wait(), 10)  # the pair fell through
    assert await p.node.presence.queues.waiting(p.key) == []  # (not put back from here)
    # the put-back went to the other node, which knows it cancelled; a message sent
    # after it (the bus keeps their order) marks when it has been handled
    marker = nm.Rooms(p.other.session, ["r-marker"], -1.0)  # (of no queue entry)
    p.node.cluster.send(p.others_node.node, marker)
    seen = p.others_node.sessions[p.other.session].rooms
    await until(lambda: _is("r-marker" in seen, True), "the marker")
    assert added == [] and p.others_node.sessions[p.other.session].queue is None
    assert await p.node.presence.queues.waiting(p.key) == []


async def _is(value: Any, expected: Any) -> bool:
    return value is expected


@pytest.mark.parametrize("variant", ["base", "shifting"])
async def test_a_quick_match_sent_while_the_last_pair_is_seated_stands(
    arena: Any, variant: str
) -> None:
    """A pair is taken off the queue, then seated; ann sends another ``quick_match`` in
    between (for the same queue, as a bot queues again at once, or another). The
    pairing is not undone (its ``matched`` comes), and the new request stands: ann is
    in that queue, and can cancel it. (Before, the seating set her queue to none after
    the new entry was made: an entry no cancel could reach, which could pair her
    again.)"""
    node = await arena.start()
    seating, go_on = asyncio.Event(), asyncio.Event()
    seat = node.matchmaker._seat_matched

    async def held_seat(*args: Any, **kwargs: Any) -> Any:
        seating.set()
        await go_on.wait()
        return await seat(*args, **kwargs)

    node.matchmaker._seat_matched = held_seat
    ann, bob = await arena.client("ann"), await arena.client("bob")
    await ann.quick_match("collapsi", rated=False)
    await bob.quick_match("collapsi", rated=False)
    async with asyncio.timeout(10):
        await seating.wait()
        await ann.quick_match("collapsi", variant=variant, rated=False)
        go_on.set()
        await ann.next(type="matched")
    key = node.sessions[ann.session].queue
    assert key is not None and f"/{variant}/" in key, key
    assert [e["player"] for e in await node.presence.queues.waiting(key)] == [ann.session]
    await ann.cancel_quick_match()
    assert await node.presence.queues.waiting(key) == []


async def test_accepting_a_challenge_takes_both_out_of_the_quick_match_queue(
    arena: Any,
) -> None:
    """A game from a challenge is one game, as a pairing is: the players queued for quick
    match leave the queue (their entries go too), as PROTOCOL.md says. (Before, their
    sessions forgot the queue but the entries stayed: a pairing could seat them again,
    and no cancel could reach them.)"""
    node = await arena.start()
    ann, bob = await arena.client("ann"), await arena.client("bob")
    await ann.quick_match("collapsi", variant="shifting", rated=False)
    await bob.quick_match("collapsi", rated=False)  # (another queue: no pairing)
    keys = [node.sessions[c.session].queue for c in (ann, bob)]
    sent = await bob.challenge("ann", "collapsi")
    challenged = await ann.next(type="challenged")
    assert challenged.challenge == sent.challenge
    await ann.accept_challenge(challenged.challenge)
    await ann.next(type="matched")
    await bob.next(type="matched")
    for c, key in zip((ann, bob), keys, strict=True):
        assert node.sessions[c.session].queue is None
        assert await node.presence.queues.waiting(key) == [], key


async def test_a_cancel_during_a_put_back_takes_the_entry_out(arena: Any) -> None:
    """A pair falls through (bob dropped) and ann is put back in the queue; her
    ``cancel_quick_match`` arrives while that entry is being written. The cancel waits
    for it (one queue change at a time per session) and takes it out: after the ``ack``
    ann is in no queue. (Unserialized, the cancel found nothing to take out, was acked,
    and the put-back's entry landed after it: queued behind her back.)"""
    node = await arena.start()
    ann, bob = await arena.client("ann"), await arena.client("bob")
    popped, go_on = asyncio.Event(), asyncio.Event()
    adding, added = asyncio.Event(), asyncio.Event()
    pop, add, of_conn = (
        node.presence.queues.pop_pair,
        node.presence.queues.add,
        node.session_service.of_conn,
    )

    async def held_pop(*args: Any, **kwargs: Any) -> Any:
        pair = await pop(*args, **kwargs)
        if pair is not None:
            popped.set()
            await go_on.wait()
        return pair

    async def held_add(queue: str, sid: str, *rest: Any) -> Any:
        if popped.is_set() and sid == ann.session:  # (the put-back's)
            adding.set()
            await added.wait()
        return await add(queue, sid, *rest)

    cancelling = asyncio.Event()

    def told_of_conn(conn: Any) -> Any:
        s = of_conn(conn)
        if adding.is_set() and s.id == ann.session:
            cancelling.set()
        return s

    node.presence.queues.pop_pair = held_pop
    node.presence.queues.add = held_add
    node.session_service.of_conn = told_of_conn
    await ann.quick_match("collapsi", rated=False)
    key = node.sessions[ann.session].queue
    await bob.quick_match("collapsi", rated=False)
    async with asyncio.timeout(10):
        await popped.wait()
        bob.abort()
        await until(lambda: _is(node.sessions[bob.session].conn, None), "bob dropped")
        go_on.set()
        await adding.wait()  # ann's put-back under way
        cancel = asyncio.create_task(ann.cancel_quick_match())
        await cancelling.wait()  # the server has the cancel
        added.set()
        await cancel
    assert await node.presence.queues.waiting(key) == []
    assert node.sessions[ann.session].queue is None
