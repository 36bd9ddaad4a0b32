"""Every other task that may move, kept off the measured runner's CPUs for a run.

Why: on this VM, the machine's own agent (PID 1, at nice -10) and the kernel's DAMON
thread take the runner's CPU for milliseconds at a time, with no preemption
(bench/README.md, "session 15"); on a host of its own the runner would not share its
CPU with them. :func:`shield` moves every task whose affinity allows another CPU (user
threads and unbound kernel threads alike) onto the other CPUs, and puts each back as it
was afterwards, as ``cset shield`` does. Tasks bound to one CPU (per-CPU kernel
threads) stay: they are the machine's. Linux only, as root.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path


def _tasks() -> Iterator[int]:
    for task in Path("/proc").glob("[0-9]*/task/[0-9]*"):
        yield int(task.name)


@contextlib.contextmanager
def shield(cpus: set[int], tasks: Iterable[int] | None = None) -> Iterator[dict[int, set[int]]]:
    """Within: no task runs on ``cpus`` but this process's and those started inside;
    yields the tasks moved, each with its affinity before. ``tasks``: only those
    (default: every task of the machine). A task whose affinity changed meanwhile (its
    own doing) is left as it is then."""
    own = {int(t.name) for t in Path(f"/proc/{os.getpid()}/task").iterdir()}
    moved: dict[int, set[int]] = {}
    try:
        for tid in _tasks() if tasks is None else tasks:
            if tid in own:
                continue
            try:
                before = os.sched_getaffinity(tid)
                if before & cpus and before - cpus:  # (it may run elsewhere: moved)
                    os.sched_setaffinity(tid, before - cpus)
                    moved[tid] = before
            except OSError:  # gone meanwhile, or a kernel thread that may not move
                continue
        yield moved
    finally:
        for tid, before in moved.items():
            with contextlib.suppress(OSError):
                if os.sched_getaffinity(tid) == before - cpus:
                    os.sched_setaffinity(tid, before)
