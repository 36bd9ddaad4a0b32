"""Engine programs started off the event loop, then driven as asyncio streams.

Why: ``asyncio.create_subprocess_exec`` forks from the loop's own thread and holds it
until the child has started the program (4 ms from a 50 MB runner on a quiet machine,
tens of ms under load: bench/README.md), and ``arena bot`` starts one engine per game
while its other games wait for their moves meanwhile. Here :class:`subprocess.Popen`
runs in a worker thread; its pipes are then joined to the loop as asyncio streams, and
the program's exit is watched with a pidfd (Linux) or, elsewhere, by a worker thread.
:class:`SpawnedProcess` has what :class:`clients.engines.process.EngineProcess` uses of
:class:`asyncio.subprocess.Process`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import Any


class SpawnedProcess:
    """A started program: ``pid``, ``returncode``, ``stdin`` (a StreamWriter),
    ``stdout`` (a StreamReader, or None: read by a protocol of the caller's) and
    ``stderr`` (a StreamReader), :meth:`kill`, :meth:`wait`."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader | None,
        stderr: asyncio.StreamReader,
    ) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self._exit: asyncio.Future[int] | None = None

    @property
    def returncode(self) -> int | None:
        """The exit status once the program has exited (and been reaped), else None."""
        code = self._popen.returncode
        return code if code is not None else self._popen.poll()

    def kill(self) -> None:
        """SIGKILL (raises :class:`ProcessLookupError` if it is gone, as asyncio's does)."""
        if self.returncode is not None:
            raise ProcessLookupError(self.pid)
        self._popen.kill()

    async def wait(self) -> int:
        """Wait until the program exits; its exit status."""
        code = self.returncode
        if code is not None:
            return code
        if self._exit is None:
            self._exit = asyncio.get_running_loop().create_future()
            self._watch(self._exit)
        return await asyncio.shield(self._exit)

    def _watch(self, done: asyncio.Future[int]) -> None:
        loop = asyncio.get_running_loop()
        try:
            fd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux 5.3+, or already reaped: a thread
            task = loop.create_task(asyncio.to_thread(self._popen.wait))
            task.add_done_callback(lambda t: _settle(done, t))
            return

        def exited() -> None:
            loop.remove_reader(fd)
            os.close(fd)
            if not done.done():
                done.set_result(self._popen.wait())  # (it has exited: no wait)

        loop.add_reader(fd, exited)


class _Start:
    """``Popen`` in a worker thread, for a caller that may be cancelled meanwhile: what
    the thread starts after :meth:`abandon` is killed there (the loop may be closing: a
    bot stopped by SIGTERM as an engine starts), and what it started before, here."""

    def __init__(self, argv: list[str], **kwargs: Any) -> None:
        self.argv, self.kwargs = argv, kwargs
        self._lock = threading.Lock()
        self._abandoned = False
        self._started: subprocess.Popen[bytes] | None = None

    def run(self) -> subprocess.Popen[bytes]:
        popen = subprocess.Popen(self.argv, **self.kwargs)
        with self._lock:
            self._started = popen
            abandoned = self._abandoned
        if abandoned:
            _kill(popen)
        return popen

    def abandon(self) -> None:
        with self._lock:
            self._abandoned = True
            started = self._started
        if started is not None:
            _kill(started)


def _kill(popen: subprocess.Popen[bytes]) -> None:
    """Kill a program nobody will drive (:mod:`subprocess` reaps it later)."""
    with contextlib.suppress(ProcessLookupError):
        popen.kill()
    for pipe in (popen.stdin, popen.stdout, popen.stderr):
        if pipe is not None:
            pipe.close()


def _settle(done: asyncio.Future[int], task: asyncio.Task[int]) -> None:
    if done.done():
        return
    if task.cancelled():
        done.cancel()
    elif (exc := task.exception()) is not None:
        done.set_exception(exc)
    else:
        done.set_result(task.result())


async def spawn(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    limit: int = 2**16,
    stdout: Callable[[], asyncio.Protocol] | None = None,
) -> SpawnedProcess:
    """Start ``argv`` with its three standard streams piped; raises :class:`OSError` as
    ``create_subprocess_exec`` does (no such program...). ``stdout``: a protocol factory
    that gets the program's output as it arrives (``SpawnedProcess.stdout`` is then
    None), rather than a StreamReader, which a reading task must wait on."""
    loop = asyncio.get_running_loop()
    start = _Start(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
    )
    try:
        popen = await asyncio.to_thread(start.run)
    except asyncio.CancelledError:  # (the thread goes on: what it starts is not left running)
        start.abandon()
        raise
    assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
    try:
        out = None if stdout is not None else asyncio.StreamReader(limit=limit, loop=loop)
        err = asyncio.StreamReader(limit=limit, loop=loop)
        if out is not None:
            await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(out, loop=loop), popen.stdout
            )
        else:
            assert stdout is not None
            await loop.connect_read_pipe(stdout, popen.stdout)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(err, loop=loop), popen.stderr
        )
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop=loop), popen.stdin
        )  # (flow control for drain; nothing is read on this side)
    except BaseException:
        popen.kill()
        await asyncio.to_thread(popen.wait)
        raise
    return SpawnedProcess(popen, asyncio.StreamWriter(transport, protocol, None, loop), out, err)
