"""``arena serve`` in which one task's cancellation is lost as Python 3.11 loses it.

Run as ``python tests/lost_cancel_serve.py serve ...`` with ``ARENA_LOSE_CANCEL`` set to
a task's name. On Python 3.11 ``asyncio.wait_for`` returns its inner task's result and
drops the cancellation of its caller when the inner task completes in the same loop step
as the cancellation arrives (CPython issue 86296; fixed in 3.12), and redis-py sends every
command through ``wait_for``. That race is rare; here it is certain: the named task's
first redis-py write is held once written (``lost_cancel_armed`` is logged), and when the
task is cancelled the write is let go in the same step, so ``wait_for`` returns and the
cancellation is lost (``lost_cancel_fired``). Everything else is the real server.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Coroutine
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TARGET = os.environ["ARENA_LOSE_CANCEL"]
#: the target task -> the event that lets its held write complete
_held: dict[asyncio.Task[Any], asyncio.Event] = {}
_armed = False


def _say(event: str) -> None:
    print(json.dumps({"event": event, "task": TARGET}), file=sys.stderr, flush=True)


class _Task(asyncio.Task):  # type: ignore[type-arg]
    def cancel(self, msg: Any = None) -> bool:
        release = _held.pop(self, None)
        if release is not None:  # the write completes first, in this same step
            release.set()
            _say("lost_cancel_fired")
        return super().cancel(msg)


async def _held_write(coro: Coroutine[Any, Any, Any], release: asyncio.Event) -> Any:
    result = await coro  # written: now only the caller's wakeup is missing
    _say("lost_cancel_armed")
    await release.wait()
    return result


def _factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
    global _armed
    caller = asyncio.current_task(loop)
    if (
        not _armed
        and caller is not None
        and caller.get_name() == TARGET
        and getattr(coro, "__qualname__", "").endswith("._send_packed_command")
    ):
        _armed = True
        release = asyncio.Event()
        _held[caller] = release
        coro = _held_write(coro, release)
    return _Task(coro, loop=loop, **kwargs)


class _Policy(asyncio.DefaultEventLoopPolicy):
    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        loop = super().new_event_loop()
        loop.set_task_factory(_factory)
        return loop


asyncio.set_event_loop_policy(_Policy())
# the task factory comes with asyncio's loop policy, which a uvloop runner does not ask
os.environ["ARENA_EVENT_LOOP"] = "asyncio"

from clients.cli import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
