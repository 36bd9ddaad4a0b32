"""The event loop ``arena serve`` runs on: uvloop where it installs, asyncio's own otherwise.

uvloop (libuv under asyncio's API) makes the loop's own share of a move cheaper: about
3-4% of the server's CPU per move in issue 18's measurements. The server uses nothing
beyond asyncio's API, so either loop runs it the same way; ``--event-loop asyncio``
keeps the standard one (to compare, or where uvloop misbehaves).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

CHOICES = ("auto", "uvloop", "asyncio")


class EventLoopError(Exception):
    """The loop asked for cannot run here (``--event-loop uvloop`` without uvloop)."""


def loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The factory of the loop ``choice`` names (None: asyncio's default)."""
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise EventLoopError("--event-loop uvloop: uvloop is not installed") from None
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, Any], choice: str = "auto") -> Any:
    """``asyncio.run(main)`` on the loop ``choice`` names."""
    with asyncio.Runner(loop_factory=loop_factory(choice)) as runner:
        return runner.run(main)


def loop_name() -> str:
    """``uvloop`` or ``asyncio``: what the running loop is."""
    return type(asyncio.get_running_loop()).__module__.split(".")[0]
