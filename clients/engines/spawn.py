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
import os
import subprocess
from collections.abc import Callable, Sequence


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


def _kill_started(starting: asyncio.Future[subprocess.Popen[bytes]]) -> None:
    """A program started for a caller that was cancelled meanwhile: killed (and reaped
    by :mod:`subprocess` later)."""
    if not starting.cancelled() and starting.exception() is None:
        popen = starting.result()
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
    starting = asyncio.ensure_future(
        asyncio.to_thread(
            subprocess.Popen,
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
    )
    try:
        popen = await asyncio.shield(starting)
    except asyncio.CancelledError:  # (the thread goes on: what it starts is not left running)
        starting.add_done_callback(_kill_started)
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
