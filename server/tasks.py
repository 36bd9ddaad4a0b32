"""Stopping background tasks for sure, though a cancellation can be lost on the way.

On Python 3.11 ``asyncio.wait_for`` returns its inner task's result, and drops the
cancellation of its caller, when the inner task completes in the same loop step as the
cancellation arrives (CPython issue 86296; fixed in 3.12, whose ``wait_for`` is built on
``asyncio.timeout``). redis-py sends every command through ``wait_for``, so any task of
ours that talks to Redis can be cancelled and go on. A loop that goes on runs forever,
and whoever awaits it (the shutdown) waits forever: that hung a node on CI.

So every loop that runs until cancelled calls :func:`checkpoint` each round (the task
still counts the cancellation it was asked for: :meth:`asyncio.Task.cancelling`), and
:func:`stop` cancels again what is still running, within a bound. Our own timeouts use
``asyncio.timeout``, not ``wait_for``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import structlog

from server.shutdown_deadline import await_chain

log = structlog.get_logger("arena.tasks")

#: seconds between cancellations of a task that goes on after being cancelled
RECANCEL_AFTER = 0.1


def checkpoint() -> None:
    """Raise :class:`asyncio.CancelledError` if this task was cancelled but went on
    (its cancellation was lost); call it where a loop starts a round."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def stop(tasks: Iterable[asyncio.Task[Any]], timeout: float = 5.0) -> set[asyncio.Task[Any]]:
    """Cancel ``tasks`` and wait until they end, cancelling again those that go on, for
    at most ``timeout`` seconds; those still running then are logged and returned."""
    tasks = list(tasks)
    pending = {t for t in tasks if not t.done()}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while pending:
        left = deadline - loop.time()
        if left <= 0:
            log.error(
                "tasks_not_stopped",
                tasks=[{"task": t.get_name(), "stack": await_chain(t.get_coro())} for t in pending],
            )
            break
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=min(RECANCEL_AFTER, left))
    for task in tasks:  # retrieved, so none is reported as never retrieved
        if task.done() and not task.cancelled():
            task.exception()
    return pending
