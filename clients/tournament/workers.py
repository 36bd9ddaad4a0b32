"""Worker processes that play games between built-in levels for the runner.

Each worker holds one end of a pipe: it reads a chunk of games, plays and encodes
them (:func:`clients.tournament.runner.play_builtin`) and writes back their record
text and summaries. The runner keeps a few chunks queued in every worker's pipe and
reads the answers in its event loop (``add_reader``), sending the next chunk as one
comes back: a worker never waits for the runner, and a chunk's way there and back is
one pipe each, with no threads in between (a process pool's feeder and manager threads
each need the CPU in turn, which on a busy machine left the workers idle half the
time). A worker that dies or fails is an error for the run (a resume plays the games
that were in flight again).
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import signal
import traceback
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

#: chunks waiting in each worker's pipe besides the one it plays
QUEUED = 2

Chunk = TypeVar("Chunk")


class WorkerError(RuntimeError):
    """A worker process died or raised (its traceback is the message)."""


def _serve(conn: Connection, play: Callable[[Any], Any]) -> None:
    """A worker's life: play chunks until told to stop (None) or the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the runner decides when to stop
    # what the fork inherited stays out of the collector's sweeps: they would touch (and
    # so copy) every inherited page and walk objects this process never frees
    gc.freeze()
    try:
        while (chunk := conn.recv()) is not None:
            try:
                answer = (True, play(chunk))
            except Exception:  # the runner reports it (a bug in a level); the worker goes on
                answer = (False, traceback.format_exc())
            conn.send(answer)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return  # the runner is gone


class WorkerPool:
    """``size`` processes running ``play`` (a picklable function of one chunk)."""

    def __init__(self, size: int, play: Callable[[Any], Any]) -> None:
        self._procs: list[BaseProcess] = []
        self._conns: list[Connection] = []
        self._broken = False
        ctx = multiprocessing.get_context()
        for _ in range(size):
            mine, theirs = ctx.Pipe(duplex=True)
            proc = ctx.Process(target=_serve, args=(theirs, play), daemon=True)
            proc.start()
            theirs.close()
            self._procs.append(proc)
            self._conns.append(mine)

    async def imap_unordered(self, chunks: Sequence[Chunk]) -> AsyncIterator[tuple[Chunk, Any]]:
        """``(chunk, answer)`` as the workers finish them. Leaving the loop early leaves
        answers in the pipes: the pool is then closed (:meth:`close`)."""
        if self._broken:
            raise WorkerError("the worker pool was left with games in flight")
        loop = asyncio.get_running_loop()
        todo = deque(chunks)
        total = len(todo)
        answers: asyncio.Queue[tuple[Chunk | None, bool, Any]] = asyncio.Queue()
        inflight: list[deque[Chunk]] = [deque() for _ in self._conns]

        def send(i: int) -> None:
            chunk = todo.popleft()
            inflight[i].append(chunk)
            self._conns[i].send(chunk)

        def readable(i: int) -> None:
            try:
                ok, answer = self._conns[i].recv()
            except (EOFError, OSError):
                loop.remove_reader(self._conns[i].fileno())
                answers.put_nowait((None, False, f"worker {self._procs[i].pid} died"))
                return
            chunk = inflight[i].popleft()
            if todo:
                send(i)
            answers.put_nowait((chunk, ok, answer))

        for i, conn in enumerate(self._conns):
            loop.add_reader(conn.fileno(), readable, i)
            for _ in range(1 + QUEUED):
                if todo:
                    send(i)
        try:
            # as many answers as chunks: an answer may wait in the queue after its chunk
            # has left ``inflight`` (two workers' read in one turn of the loop)
            for _ in range(total):
                chunk, ok, answer = await answers.get()
                if not ok:
                    raise WorkerError(answer)
                yield chunk, answer  # type: ignore[misc]
        finally:
            for conn in self._conns:
                if not conn.closed:
                    loop.remove_reader(conn.fileno())
            if any(inflight):
                self._broken = True

    def close(self) -> None:
        """Stop the workers: at once if games are in flight, else after their chunk."""
        for conn, proc in zip(self._conns, self._procs, strict=True):
            if self._broken:
                proc.kill()
            else:
                try:
                    conn.send(None)
                except OSError:
                    proc.kill()
        for conn, proc in zip(self._conns, self._procs, strict=True):
            proc.join(5)
            if proc.is_alive():
                proc.kill()
                proc.join()
            conn.close()
