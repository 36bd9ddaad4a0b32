"""A deadline on shutting down: a shutdown that hangs still ends the process, and says where.

After SIGTERM the server tells its clients, stops its rooms and finishes the writes in
flight. Each step is bounded, but a bug (a task that swallows its cancellation, a peer
that never answers) must not keep alive a node its operator asked to stop: an
orchestrator would kill it without a word about why. When the deadline passes, the
stack of every task still pending is logged (``shutdown_stuck``) so the hang can be
fixed, and the process exits with :data:`EXIT_STUCK`. A thread keeps the deadline, so a
blocked event loop cannot stop it either (then the threads' stacks are logged instead).
A second signal ends the wait at once.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import traceback
from typing import Any

#: EX_SOFTWARE: the process had to end itself; a clean shutdown exits 0
EXIT_STUCK = 70


def await_chain(coro: Any) -> str:
    """Where a suspended coroutine waits: its frame, then each one it awaits, innermost
    last (``Task.get_stack`` shows only the outermost)."""
    lines = []
    while coro is not None and len(lines) < 40:
        frame = next((getattr(coro, a) for a in _FRAME if getattr(coro, a, None)), None)
        if frame is None:
            break
        code = frame.f_code
        lines.append(f"{code.co_filename}:{frame.f_lineno} in {code.co_qualname}")
        inner = next((getattr(coro, a) for a in _AWAITS if getattr(coro, a, None)), None)
        if inner is None or not any(hasattr(inner, a) for a in _FRAME):
            # an async context manager's exit awaits its generator through anext(),
            # which hides it: follow the generator itself
            gen = getattr(frame.f_locals.get("self"), "gen", None)
            inner = gen if hasattr(gen, "ag_frame") else inner
        coro = inner
    return "\n".join(lines)


_FRAME = ("cr_frame", "gi_frame", "ag_frame")
_AWAITS = ("cr_await", "gi_yieldfrom", "ag_await")


def task_stacks(loop: asyncio.AbstractEventLoop) -> list[dict[str, str]]:
    """Each pending task of ``loop``: its name and where it waits (call in the loop)."""
    return [
        {"task": task.get_name(), "stack": await_chain(task.get_coro())}
        for task in asyncio.all_tasks(loop)
    ]


def thread_stacks() -> list[dict[str, str]]:
    """Every thread's stack, for a loop that does not answer."""
    names = {t.ident: t.name for t in threading.enumerate()}
    return [
        {"thread": names.get(ident, str(ident)), "stack": "".join(traceback.format_stack(frame))}
        for ident, frame in sys._current_frames().items()
    ]


class ShutdownDeadline:
    """Started when shutdown begins; :meth:`cancel` it when shutdown finished in time."""

    def __init__(self, seconds: float, log: Any) -> None:
        self.seconds = seconds
        self.log = log
        self._cancelled = threading.Event()
        self._now = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.Thread(target=self._keep, name="shutdown-deadline", daemon=True)
        self._thread.start()

    def expire_now(self) -> None:
        """A second signal: the operator will not wait."""
        self._now.set()

    def cancel(self) -> None:
        self._cancelled.set()
        self._now.set()

    def _keep(self) -> None:
        self._now.wait(self.seconds)
        if self._cancelled.is_set():
            return
        stacks: list[dict[str, str]] = []
        answered = threading.Event()

        def collect() -> None:
            stacks.extend(task_stacks(self._loop))
            answered.set()

        try:
            self._loop.call_soon_threadsafe(collect)
        except RuntimeError:  # the loop has closed meanwhile: nothing of it to show
            answered.set()
        if answered.wait(1.0):
            self.log.error("shutdown_stuck", seconds=self.seconds, tasks=stacks)
        else:
            self.log.error(
                "shutdown_stuck", seconds=self.seconds, loop="blocked", threads=thread_stacks()
            )
        if self._cancelled.is_set():  # finished while we looked
            return
        sys.stderr.flush()
        os._exit(EXIT_STUCK)
