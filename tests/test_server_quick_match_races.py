"""Quick match against a player who leaves while the pair is seated: no traceback, no
unsolicited error, the one still here stays queued (or plays). Real server and
clients on loopback; several tries, each racing a logout with the pairing."""

from __future__ import annotations

import asyncio
from typing import Any

from structlog.testing import capture_logs

from protocol import messages as m

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
