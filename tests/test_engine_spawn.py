"""clients.engines.spawn: a real program started off the loop, its three pipes as asyncio
streams, its exit status by pidfd, and by a worker thread where there is no pidfd."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
from typing import Any

import pytest

from clients.engines.spawn import spawn

ECHO = [
    sys.executable,
    "-c",
    "import sys\n"
    "line = sys.stdin.readline()\n"
    "print('got ' + line.strip(), flush=True)\n"
    "print('on stderr', file=sys.stderr, flush=True)\n"
    "sys.exit(int(line))\n",
]


async def _talk(status: int) -> None:
    proc = await spawn(ECHO)
    assert proc.returncode is None and proc.pid > 0
    proc.stdin.write(f"{status}\n".encode())
    await proc.stdin.drain()
    assert await asyncio.wait_for(proc.stdout.readline(), 30) == f"got {status}\n".encode()
    assert await asyncio.wait_for(proc.stderr.readline(), 30) == b"on stderr\n"
    waits = [proc.wait(), proc.wait()]  # (two waiters share the one watch)
    assert await asyncio.wait_for(asyncio.gather(*waits), 30) == [status, status]
    assert proc.returncode == status
    assert await proc.stdout.read() == b""  # its output is at its end
    with pytest.raises(ProcessLookupError):
        proc.kill()
    proc.stdin.close()


async def test_a_program_talks_and_exits() -> None:
    await _talk(3)


async def test_without_a_pidfd_a_thread_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pidfd(pid: int) -> int:
        raise OSError("no pidfd here")

    monkeypatch.setattr("os.pidfd_open", no_pidfd, raising=False)
    await _talk(5)


async def test_a_killed_program_and_a_missing_one() -> None:
    proc = await spawn([sys.executable, "-c", "import time; time.sleep(60)"])
    proc.kill()
    assert await asyncio.wait_for(proc.wait(), 30) == -9
    proc.stdin.close()
    with pytest.raises(OSError):
        await spawn(["/nonexistent/engine-program"])


STUBBORN = [sys.executable, "-c", "import time\ntime.sleep(120)\n"]


def _watch_popen(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], threading.Event]:
    """The programs the worker thread starts, and an event set when it is done."""
    started: list[subprocess.Popen[bytes]] = []
    thread_done = threading.Event()

    class Watched(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            try:
                super().__init__(*args, **kwargs)
                started.append(self)
            finally:
                thread_done.set()

    monkeypatch.setattr(subprocess, "Popen", Watched)
    return started, thread_done


async def _killed(started: list[Any], thread_done: threading.Event) -> None:
    assert await asyncio.to_thread(thread_done.wait, 30)
    (proc,) = started
    try:
        assert await asyncio.to_thread(proc.wait, 30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:  # (left running: the test failed; it goes all the same)
            proc.kill()
            proc.wait()


async def test_a_start_cancelled_midway_leaves_no_program_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cancelled while the worker thread starts the program (a bot stopped as its next
    engine starts): the program is killed, not orphaned. This one ignores the end of
    its input, so only the kill ends it. (Popen is watched to learn which process the
    thread started.)"""
    started, thread_done = _watch_popen(monkeypatch)
    starting = asyncio.create_task(spawn(STUBBORN))
    await asyncio.sleep(0)  # (its thread is handed the start)
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    await _killed(started, thread_done)


async def test_a_start_cut_short_by_the_loops_end_leaves_no_program_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same as SIGTERM does it: the loop ends (``asyncio.run`` cancels what is left,
    the thread's own task too) while the thread starts the program."""
    started, thread_done = _watch_popen(monkeypatch)

    async def stopped_at_once() -> None:
        asyncio.get_running_loop().create_task(spawn(STUBBORN))
        await asyncio.sleep(0)

    await asyncio.to_thread(asyncio.run, stopped_at_once())
    await _killed(started, thread_done)
