"""The one clock every search budget in the engine counts: CPU time of the calling thread.

A budget in seconds (``arena collapsi solve --max-seconds``, a player's
``budget_ms``) is CPU time, not wall-clock time: on a busy machine a search
still gets the work it was promised (issue 20), and a bot searching in a
worker thread of a server is charged for its own thread only. Callers that
must also respect a wall-clock limit (a room's move clock) keep a margin.
"""

from __future__ import annotations

import time

#: seconds of CPU time used by the calling thread (a monotonic count, arbitrary origin)
cpu_now = time.thread_time

__all__ = ["cpu_now"]
