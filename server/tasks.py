"""Stopping background tasks, when a cancellation can be lost.

``task.cancel()`` then ``await gather(task)`` waits forever if the task swallows the
cancellation and goes back to waiting: that hung a node's shutdown in CI (its outbox
task, cancelled during a Redis publish, was found waiting for work again; see
server/shutdown_deadline.py for how it was caught). Python 3.11's ``asyncio.wait_for``
and ``asyncio.timeout``, and libraries built on them, can lose a cancellation that
arrives just as what they await completes. So a task still running is cancelled again,
until it ends or the time is up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any


async def cancel_and_wait(
    tasks: Iterable[asyncio.Task[Any]], timeout: float = 2.0
) -> list[asyncio.Task[Any]]:
    """Cancel ``tasks`` and wait for them, ``timeout`` s at most; those still running."""
    tasks = list(tasks)
    pending = {t for t in tasks if not t.done()}
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while pending:
        for task in pending:
            task.cancel()
        left = end - loop.time()
        if left <= 0:
            break
        _, pending = await asyncio.wait(pending, timeout=min(left, 0.1))
    for task in tasks:  # retrieve their outcomes, so none is reported as never retrieved
        if task.done() and not task.cancelled():
            task.exception()
    return list(pending)
