"""Background tasks stop even when a cancellation is lost on the way (server.tasks.stop).

redis-py sends its commands through Python 3.11's ``asyncio.wait_for``, which drops a
cancellation that arrives as the command completes (CPython issue 86296): here about a
quarter of the tasks cancelled inside a redis-py call carried on as if nothing happened.
A node's loop cancelled that way in ``Cluster.stop`` went round again and the node's
shutdown hung. The loop below is a node outbox's shape, against a real Redis.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import redis.asyncio as aioredis

from server.tasks import stop as stop_tasks

TRIALS = 60


async def test_tasks_cancelled_inside_redis_py_calls_all_stop(redis_url: str) -> None:
    r = aioredis.Redis.from_url(redis_url)
    rng = random.Random(7)
    try:
        tasks = []
        for _ in range(TRIALS):
            wake = asyncio.Event()

            async def outbox(wake: asyncio.Event = wake) -> None:
                while True:
                    await wake.wait()
                    wake.clear()
                    async with r.pipeline(transaction=False) as p:
                        p.publish("arena-test", "x" * 100)
                        await p.execute()

            task = asyncio.create_task(outbox())
            wake.set()
            for _ in range(rng.randint(0, 6)):  # cancel it somewhere inside the command
                await asyncio.sleep(0)
            tasks.append(task)
            assert await stop_tasks([task], timeout=5) == set()
        assert all(t.done() for t in tasks)
    finally:
        await r.aclose()


async def test_a_task_that_never_lets_go_is_reported_not_awaited_forever() -> None:
    stop = asyncio.Event()

    async def stubborn() -> None:
        while not stop.is_set():
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue  # swallowed, every time

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    assert await stop_tasks([task], timeout=0.3) == {task}
    stop.set()
    task.cancel()
    await asyncio.wait([task], timeout=1)
    assert task.done()


async def test_a_session_save_cancelled_before_its_first_step_lets_its_waiters_go(
    arena: Any,
) -> None:
    """At exit a batch's save task can be cancelled before it ran: whoever waits for
    that save goes on, and the next save starts a batch of its own and is done."""
    server = await arena.start()
    ann = await arena.client("ann")
    session = server.sessions[ann.session]
    before = set(server._background)
    saved = server.session_service.save_soon(session)
    (task,) = set(server._background) - before
    task.cancel()  # before its first step: it never took the batch
    async with asyncio.timeout(5):
        await asyncio.shield(saved)
        again = server.session_service.save_soon(session)
        assert again is not saved
        await asyncio.shield(again)
    assert server.session_service._saving is None and not server.session_service._unsaved
