"""Drive one engine program over the engine protocol: an asyncio subprocess (ENGINE_PROTOCOL.md).

:class:`EngineProcess` starts the program, does the handshake, and turns each
request (``newgame``, ``go``, ``isready``...) into awaited lines, with a timeout
on every wait. What goes wrong is a typed :class:`EngineProcessError` with a
stable ``code``, so a runner can apply its strike policy (ENGINE_PROTOCOL.md,
"Misbehaving engines") without parsing messages: :class:`EngineCrashed`,
:class:`EngineTimeout`, :class:`EngineGarbled`, :class:`EngineIllegalMove`,
:class:`EngineRefused`, :class:`EngineNotFound`. After a crash or a hang,
:meth:`EngineProcess.restart` starts a fresh process with the same options.

The codec is :mod:`clients.engines.protocol`, the errors are
:mod:`clients.engines.errors` (re-exported here), the output's reading
:mod:`clients.engines.replies`; this module only moves lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clients.engines import protocol as p
from clients.engines.errors import (
    EngineCrashed,
    EngineGarbled,
    EngineIllegalMove,
    EngineNotFound,
    EngineOptionUnknown,
    EngineProcessError,
    EngineRefused,
    EngineTimeout,
)
from clients.engines.replies import Eof, Item, LineHook, Malformed, Replies
from clients.engines.spawn import SpawnedProcess, spawn

if TYPE_CHECKING:
    from engine.base import Game


@dataclass(slots=True)
class EngineInfo:
    """What the handshake told: name, author, protocol version, declared options."""

    name: str
    author: str
    version: int
    options: dict[str, p.OptionDecl] = field(default_factory=dict)


@dataclass(slots=True)
class SearchResult:
    """An answer to ``go``: the move (``"resign"`` to resign), the ``info`` lines, the
    time the answer took, and lines that were no reply (logged, otherwise ignored)."""

    move: str
    infos: list[p.Info]
    elapsed_ms: float
    unknown: list[str] = field(default_factory=list)

    @property
    def last_info(self) -> p.Info | None:
        return self.infos[-1] if self.infos else None


@dataclass(frozen=True, slots=True)
class Search:
    """A ``go`` whose lines are written (:meth:`EngineProcess.begin_go`); its answer is
    :meth:`EngineProcess.finish_go`'s."""

    legal: Sequence[str] | None
    started: float


def _go_lines(position: p.Position, legal: Sequence[str] | None, clocks: p.Go | None) -> list[str]:
    cmds = [position, p.Legal(tuple(legal))] if legal is not None else [position]
    return [p.format_command(cmd) for cmd in (*cmds, clocks or p.Go())]


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _loop_time(deadline: float) -> float:
    """A ``time.monotonic()`` deadline on the running loop's clock (``loop.time()``)."""
    loop = asyncio.get_running_loop()
    return loop.time() + (deadline - time.monotonic())


class EngineProcess:
    """One engine program. Not safe for two concurrent requests: one game, one process.

    ``command`` is a shell-like string (split with :func:`shlex.split`, no shell) or an
    argument list. Timeouts are seconds.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        handshake_timeout: float = 10.0,
        stop_grace: float = 1.0,
        on_line: LineHook | None = None,
    ) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("an engine command is needed")
        self.cwd = cwd
        self.env = env
        self.handshake_timeout = handshake_timeout
        self.stop_grace = stop_grace
        self.on_line = on_line
        self.info: EngineInfo | None = None
        self.restarts = 0
        self._options: dict[str, str | None] = {}
        self._proc: SpawnedProcess | None = None
        self._queue: asyncio.Queue[Item] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._replies: Replies | None = None
        self._stderr: deque[str] = deque(maxlen=20)
        self._starting = False  # in start(): the begin_* calls write nothing meanwhile

    # -- life cycle -------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    @property
    def searching(self) -> bool:
        """A ``go`` was sent and its ``bestmove`` not read yet."""
        return self.running and self._replies is not None and not self._replies.answered

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    async def __aenter__(self) -> EngineProcess:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.quit()

    async def start(self) -> EngineInfo:
        """Start the program and do the handshake; raises on failure (and kills it)."""
        self._starting = True
        try:
            return await self._start()
        finally:
            self._starting = False

    async def _start(self) -> EngineInfo:
        queue: asyncio.Queue[Item] = asyncio.Queue()
        replies = Replies(queue, p.MAX_LINE + 2, self.on_line)  # (readline's limit)
        try:
            # started off the loop (spawn.py): a runner's other games play on meanwhile
            self._proc = await spawn(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                limit=p.MAX_LINE + 2,
                stdout=lambda: replies,
            )
        except OSError as exc:
            raise EngineNotFound(f"cannot start {shlex.join(self.argv)}: {exc}") from None
        self._queue, self._replies = queue, replies
        self._stderr.clear()
        assert self._proc.stderr is not None
        self._tasks = [asyncio.create_task(self._read_stderr(self._proc.stderr))]
        try:
            self.info = await self._handshake()
            for name, value in self._options.items():
                await self._send(p.SetOption(name, value))
        except BaseException:
            await self.kill()
            raise
        return self.info

    async def restart(self) -> EngineInfo:
        """Kill the process if it still runs and start a fresh one with the same options."""
        await self.kill()
        self.restarts += 1
        return await self.start()

    async def quit(self, timeout: float = 2.0) -> None:
        """Ask the program to quit; kill it if it has not exited within ``timeout``."""
        if self.running:
            with contextlib.suppress(EngineCrashed):
                await self._send(p.Quit())
            assert self._proc is not None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._proc.wait()
        await self.kill()

    async def kill(self) -> None:
        """Kill the process at once (if running) and stop reading it."""
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        if self._replies is not None:
            self._replies.close()
            self._replies = None
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        if proc is not None and proc.stdin is not None:
            proc.stdin.close()

    # -- requests ---------------------------------------------------------------
    async def set_option(self, name: str, value: str | int | bool | None = None) -> None:
        """Set an option (kept for restarts); ``bool`` is sent as ``true``/``false``.
        Raises :class:`EngineOptionUnknown` for one the engine did not declare, or a value
        its declaration does not take (ENGINE_PROTOCOL.md: only as declared)."""
        text = (
            None if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        )
        if self.info is not None:
            decl = self.info.options.get(name)
            if decl is None:
                declared = ", ".join(self.info.options) or "none"
                raise EngineOptionUnknown(
                    f"{self.info.name} declares no option {name} (it declares: {declared})"
                )
            if text is not None and (wants := decl.refuses(text)) is not None:
                raise EngineOptionUnknown(
                    f"{self.info.name}'s option {name} takes {wants}, got {text!r}"
                )
        self._options[name] = text
        await self._send(p.SetOption(name, text))

    async def isready(self, timeout: float = 10.0) -> None:
        """Send ``isready``, wait for ``readyok``; ``error`` raises :class:`EngineRefused`."""
        await self._send(p.IsReady())
        await self._expect(p.ReadyOk, timeout, "readyok")

    async def new_game(self, cmd: p.NewGame, timeout: float = 10.0) -> None:
        """Start a game (``newgame`` then ``isready``): the engine refuses with ``error``."""
        self._drain()
        await self._send(cmd)
        await self.isready(timeout)

    def begin_new_game(self, cmd: p.NewGame, on_ready: Callable[[], None]) -> bool:
        """:meth:`new_game`'s first half, from a callback: ``newgame`` and ``isready`` are
        written at once; ``on_ready()`` is called as the ``readyok`` is read (not if the
        engine refused with ``error`` first), so that the first search can begin from
        there; :meth:`finish_new_game` waits for it. False, having written nothing, when
        the process is not running or its pipe is not empty: then :meth:`new_game`."""
        replies = self._write_now([p.format_command(cmd), p.format_command(p.IsReady())])
        if replies is None:
            return False
        replies.on_ready = on_ready
        return True

    async def finish_new_game(self, timeout: float = 10.0) -> None:
        """The end of a game :meth:`begin_new_game` began: its ``readyok`` (an ``error``
        raises :class:`EngineRefused`, as in :meth:`new_game`)."""
        try:
            await self._expect(p.ReadyOk, timeout, "readyok")
        finally:
            if self._replies is not None:
                self._replies.on_ready = None

    async def go(
        self,
        position: p.Position,
        legal: Sequence[str] | None = None,
        clocks: p.Go | None = None,
        timeout: float | None = None,
    ) -> SearchResult:
        """Send the position (and the legal moves, if given) and ``go``; the answer.

        After ``timeout`` seconds ``stop`` is sent; a ``bestmove`` within ``stop_grace``
        is returned inside :class:`EngineTimeout` (``late_move``), otherwise the process
        is killed (``hung``). With ``legal``, a move not in it raises :class:`EngineIllegalMove`.
        """
        self._drain()
        started = time.perf_counter()
        if self._replies is not None:
            self._replies.answered = False  # (before the write: it may answer during it)
        await self._write(*_go_lines(position, legal, clocks))  # one write: one syscall
        return await self.finish_go(Search(legal, started), timeout)

    def begin_go(
        self,
        position: p.Position,
        legal: Sequence[str] | None = None,
        clocks: p.Go | None = None,
        on_move: Callable[[p.BestMove], None] | None = None,
    ) -> Search | None:
        """:meth:`go`'s first half, from a callback: the lines are written at once (no
        task, no turn of the loop); :meth:`finish_go` waits for the answer. ``on_move``
        gets the ``bestmove`` as its line is read, before the waiting task wakes (a runner
        sends the move from there). ``None``, having written nothing, when the process is
        not running or its pipe is not empty: then :meth:`go`."""
        started = time.perf_counter()
        replies = self._write_now(_go_lines(position, legal, clocks))
        if replies is None:
            return None
        replies.on_move, replies.answered = on_move, False
        return Search(legal, started)

    async def cancel_go(self) -> None:
        """Stop a search :meth:`begin_go` began that nobody will finish (its game ended
        first): ``stop`` unless it has answered, and its ``bestmove`` dropped, so that
        it is not taken for the answer to a later ``go``; no answer within
        ``stop_grace``: killed. Nothing is raised: the engine did nothing wrong."""
        replies = self._replies
        if replies is None or not self.running:
            return
        replies.on_move = None
        if not replies.answered:
            await self._after_timeout([], [])
        self._drain()

    async def finish_go(self, search: Search, timeout: float | None = None) -> SearchResult:
        """The answer to the search ``begin_go`` (or :meth:`go`) started: see :meth:`go`."""
        infos: list[p.Info] = []
        unknown: list[str] = []
        try:
            best = await self._answer(timeout, infos, unknown)
        except EngineTimeout:
            late = await self._after_timeout(infos, unknown)
            seen = f"; it printed {unknown[-1]!r}" if unknown else ""
            raise EngineTimeout(
                f"no bestmove within {timeout:.3g}s{seen}"
                + ("" if late else f"; no bestmove {self.stop_grace:g}s after stop"),
                late_move=late,
                hung=late is None,
            ) from None
        legal = search.legal
        elapsed = (time.perf_counter() - search.started) * 1000
        if legal is not None and not best.resign and best.move not in legal:
            raise EngineIllegalMove(
                f"illegal move {best.move!r}; legal: {' '.join(legal) or '(none)'}",
                best.move,
                legal,
            )
        return SearchResult(best.move, infos, elapsed, unknown)

    async def play(
        self, game: Game, clocks: p.Go | None = None, timeout: float | None = None
    ) -> SearchResult:
        """:meth:`go` for ``game`` as it stands, with its legal moves."""
        return await self.go(p.position_of(game), game.legal_moves(), clocks, timeout)

    async def stop(self) -> None:
        """Send ``stop`` (a search in progress answers ``bestmove``; :meth:`go` collects it)."""
        await self._send(p.Stop())

    async def game_over(self, winner: int | None, reason: str) -> None:
        """Tell the engine how the game ended (no answer is expected)."""
        await self._send(p.GameOver(winner, reason))

    async def send_line(self, text: str) -> None:
        """Send a raw line (the compliance checker's garbage)."""
        await self._write(text)

    # -- internals --------------------------------------------------------------
    async def _handshake(self) -> EngineInfo:
        await self._send(p.Hello())
        ids: dict[str, str] = {}
        options: dict[str, p.OptionDecl] = {}
        deadline = time.monotonic() + self.handshake_timeout
        while True:
            item = await self._next(deadline, "arenaok (the handshake)")
            if isinstance(item, Malformed):
                raise EngineGarbled(f"bad handshake line {item.line!r}: {item.error}", item.line)
            if isinstance(item, p.Id):
                ids[item.key] = item.value
            elif isinstance(item, p.OptionDecl):
                options[item.name] = item
            elif isinstance(item, p.EngineErrorLine):
                raise EngineRefused(f"the engine refused the handshake: {item.text}")
            elif isinstance(item, p.ArenaOk):
                if item.version not in p.VERSIONS:
                    raise EngineGarbled(
                        f"arenaok {item.version}: not a version the runner offered "
                        f"({' '.join(map(str, p.VERSIONS))})"
                    )
                name = ids.get("name") or os.path.basename(self.argv[0])
                return EngineInfo(name, ids.get("author", ""), item.version, options)

    async def _expect(
        self,
        kind: type[Any],
        timeout: float | None,
        what: str,
        infos: list[p.Info] | None = None,
        unknown: list[str] | None = None,
    ) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            item = await self._next(deadline, what)
            if isinstance(item, kind):
                return item
            if isinstance(item, Malformed) and item.line.split()[0] == what:
                raise EngineGarbled(f"garbled {what}: {item.line!r} ({item.error})", item.line)
            if isinstance(item, p.EngineErrorLine):
                if kind is p.ReadyOk:  # (its readyok follows: the next wait must not take it;
                    # a second at most, and an engine that exits meanwhile still declined)
                    with contextlib.suppress(EngineTimeout, EngineCrashed):
                        await self._expect(p.ReadyOk, min(1.0, _left(deadline) or 1.0), what)
                raise EngineRefused(f"the engine answered error: {item.text}")
            if isinstance(item, p.Info) and infos is not None:
                infos.append(item)
            elif isinstance(item, p.Unknown | Malformed) and unknown is not None:
                unknown.append(item.line if isinstance(item, Malformed) else item.text)

    async def _next(self, deadline: float | None, what: str) -> p.Reply | Malformed:
        queue = self._queue
        if not queue.empty() and (deadline is None or time.monotonic() < deadline):
            # (an answer already read: no wait, no timer)
            item = queue.get_nowait()
        else:
            # asyncio.timeout, not wait_for: wait_for wraps the get in a task of its own,
            # one more turn of the loop between the engine's line and the answer
            try:
                async with asyncio.timeout_at(None if deadline is None else _loop_time(deadline)):
                    item = await queue.get()
            except TimeoutError:
                raise EngineTimeout(f"no {what} in the time allowed") from None
        if isinstance(item, Eof):
            raise await self._crashed(f"the engine exited instead of answering {what}")
        return item

    async def _answer(self, timeout: float | None, infos: list[p.Info], unknown: list[str]) -> Any:
        """The ``bestmove``; the answer hook is disarmed however the wait ends (a late
        answer, after a timeout, is the runner's to judge, not the hook's)."""
        try:
            return await self._expect(p.BestMove, timeout, "bestmove", infos, unknown)
        finally:
            if self._replies is not None:
                self._replies.on_move = None

    async def _after_timeout(self, infos: list[p.Info], unknown: list[str]) -> str | None:
        with contextlib.suppress(EngineCrashed):
            await self._send(p.Stop())
            with contextlib.suppress(EngineTimeout, EngineGarbled, EngineRefused):
                best = await self._expect(p.BestMove, self.stop_grace, "bestmove", infos, unknown)
                return str(best.move)
        await self.kill()
        return None

    async def _crashed(self, message: str) -> EngineCrashed:
        code = None
        if self._proc is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    code = await self._proc.wait()
        await asyncio.sleep(0)  # let the stderr reader take the last lines
        tail = self.stderr_tail
        detail = f" (exit status {code})" if code is not None else ""
        detail += f"; stderr: {self._stderr[-1]}" if self._stderr else ""
        return EngineCrashed(message + detail, code, tail)

    def _write_now(self, lines: list[str]) -> Replies | None:
        """The begin_* calls' write, from a callback: ``lines`` written at once, after
        dropping replies nobody waited for; the output's reader to arm. None, having
        written nothing, when that cannot be done at once: the process is not running,
        is still starting (the handshake first: ENGINE_PROTOCOL.md's order), its pipe is
        not empty, or it is gone (the awaited request says it crashed)."""
        proc, replies = self._proc, self._replies
        if proc is None or proc.stdin is None or proc.returncode is not None or replies is None:
            return None
        if self._starting or proc.stdin.transport.get_write_buffer_size():
            return None
        self._drain()
        try:
            self._put(proc.stdin, lines)
        except (BrokenPipeError, ConnectionResetError):
            return None
        return replies

    def _drain(self) -> None:
        """Forget replies nobody waited for (a late ``bestmove``), keeping a pending EOF;
        an answer hook nobody waited for is dropped too."""
        if self._replies is not None:
            self._replies.on_move = self._replies.on_ready = None
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if isinstance(item, Eof):
                self._queue.put_nowait(item)
                return

    async def _send(self, *cmds: p.Command) -> None:
        await self._write(*(p.format_command(cmd) for cmd in cmds))

    async def _write(self, *lines: str) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            # (one that exited says so, as when it exits while answered: a check's report
            # is the same whichever of the two saw it first)
            gone = "the engine exited" if proc is not None else "the engine is not running"
            raise await self._crashed(gone)
        stdin = proc.stdin
        try:
            self._put(stdin, lines)
            # drain only when the pipe is full or gone: a move's lines fit in the pipe, and
            # awaiting a drain that has nothing to wait for costs a coroutine per write
            if stdin.transport.get_write_buffer_size() or stdin.transport.is_closing():
                await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise await self._crashed("the engine closed its input") from None

    def _put(self, stdin: asyncio.StreamWriter, lines: Sequence[str]) -> None:
        if self.on_line:
            for text in lines:
                self.on_line(">", text)
        stdin.write("".join(f"{text}\n" for text in lines).encode())

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        with contextlib.suppress(ValueError):
            while raw := await stream.readline():
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self._stderr.append(line)
                if self.on_line:
                    self.on_line("!", line)


__all__ = [
    "EngineCrashed",
    "EngineGarbled",
    "EngineIllegalMove",
    "EngineInfo",
    "EngineNotFound",
    "EngineOptionUnknown",
    "EngineProcess",
    "EngineProcessError",
    "EngineRefused",
    "EngineTimeout",
    "LineHook",
    "Search",
    "SearchResult",
]
