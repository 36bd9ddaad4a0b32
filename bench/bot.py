"""What ``arena bot`` adds to each move, with 100 games at once in one runner process.

A server (``arena serve``, with ``--bot-max-games`` at ``--concurrency`` and a
per-connection rate that does not pace the runner's one connection) and an opponent
runner (``arena bot`` whose engine, bench/instant_engine.py ``--think-ms MS``, answers
after ``--opponent-ms``, so that games last and many are under way at once) run as
subprocesses. The measured runner runs in this process with an engine program that
answers at once (``--engine c``, the default: bench/instant_engine.c, built with ``cc``;
or ``python``: bench/instant_engine.py, whose own line reading then counts as the
runner's), ``--concurrency`` games at a time, ``--games`` in all, by quick match.

Per move of the measured runner, the runner's time runs from the moment the kernel
received the frame that made it the bot's turn (the socket's SO_TIMESTAMPNS stamp of its
last bytes: on loopback, about when the server wrote them) until the move's frame is
written to the socket (its bytes handed to the kernel), minus the engine's own time: the
engine stamps when it read ``go`` and when it wrote its answer (CLOCK_MONOTONIC, one
clock for both processes). Everything else counts as the runner's: the loop's wait
before it reads the socket, the pipe to the engine and the engine's wake-up, the pipe
back, a game's ``newgame``/``isready`` round trip. The time until the runner's ``send``
returned is shown beside it (the write wakes the server, which may take the runner's
core first), and so is the measure used before 2026-11-26 06:00 (from the frame parsed
by websockets, less the whole ``go`` round trip). The runner's time is split into its
parts (see ``PARTS``), and the collector's pauses while games are on are counted.
``--others-nice N`` runs the server and the opponent (with its engines) N steps nicer
than the measured runner, as if they were on other machines (they share the same cores
here); ``--pin`` puts them on other CPUs than the measured runner and its engines
(taskset), which is nearer to that; ``--trace`` (with ``--pin``, as root) records the
kernel's switches on the runner's CPU (bench/cpu_trace.py) and gives, beside the
runner's time, that time less what other programs held its CPU meanwhile: the waits
the runner could not have shortened; ``--shield`` (with ``--pin``, as root) moves every
other task that may run elsewhere (this VM's agent among them) off the runner's CPU
for the run (bench/cpu_shield.py), as on a host of the runner's own. The games under
way (started, not over) are counted at every move; "steady" moves are those made once
every game had started, with half of them or more under way. Prints tables; ``--json
PATH`` writes the figures. ``--event-loop uvloop`` runs the measured runner on uvloop
rather than asyncio's own loop (arena bot's), to compare the two: uvloop reads its
socket in C, so the bench pauses that reading and reads a duplicate of the socket
itself, stamped, from a reader of uvloop's. ``--runner-root DIR`` measures the runner
of another checkout (a git worktree of an older commit) against this one's server and
opponent, so that two versions are compared in one session:

    .venv/bin/python bench/bot.py --games 100 --concurrency 100
    .venv/bin/python bench/bot.py --games 100 --concurrency 100 --runner-root /tmp/base
    .venv/bin/python bench/bot.py --games 100 --concurrency 100 --pin --trace
    .venv/bin/python bench/bot.py --games 100 --concurrency 100 --pin --shield
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import gc
import io
import itertools
import json
import os
import re
import resource
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

from cpu_shield import shield  # (bench/, beside this script)
from cpu_trace import CpuTrace

ROOT = Path(__file__).resolve().parent.parent

ENGINE = f"{sys.executable} {ROOT / 'bench' / 'instant_engine.py'}"
#: socket.SO_TIMESTAMPNS (Linux; not exported by Python 3.11's socket module)
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def realtime_offset() -> float:
    """CLOCK_REALTIME (the kernel's receive stamps) less CLOCK_MONOTONIC (perf_counter):
    a realtime reading between two monotonic ones, the closest pair of 50."""
    pairs = []
    for _ in range(50):
        before, real, after = time.perf_counter(), time.time(), time.perf_counter()
        pairs.append((after - before, real - (before + after) / 2))
    return min(pairs)[1]


class Move:
    """One move of the measured runner: its stamps (``time.perf_counter`` seconds, which is
    CLOCK_MONOTONIC, the engine's clock too) and its engine's answers."""

    __slots__ = (
        "decoded",
        "going",
        "gos",
        "handed",
        "kernel",
        "other",
        "parsed",
        "read",
        "sent",
        "written",
    )

    def __init__(self, kernel: float, read: float, parsed: float, decoded: float) -> None:
        self.kernel = kernel  # the kernel received the frame's last bytes (SO_TIMESTAMPNS)
        self.read = read  # the runner's loop read them off the socket
        self.parsed = parsed  # websockets parsed the frame
        self.decoded = decoded  # the runner decoded it (a message)
        #: each go: (called, its lines written, engine read go, engine wrote, go returned)
        self.gos: list[tuple[float, float, float, float, float]] = []
        self.other: list[tuple[float, float]] = []  # newgame/isready, a start-up: spans
        self.handed = 0.0  # the move reached Client.send_wire (or move_now)
        self.written = 0.0  # the move's bytes were handed to the kernel
        self.going = False  # a go is under way (the move may be sent before it returns)
        self.sent = 0.0  # send (or move_now) returned


class Stopwatch:
    """The bench's instruments, installed around the runner without changing it."""

    def __init__(self) -> None:
        #: data frames stamped (kernel, read, parsed), not yet decoded
        self.arrived: deque[tuple[float, float, float]] = deque()
        self.kernel_at = self.read_at = 0.0  # the last read off the runner's socket
        self.turn: dict[str, Move] = {}  # room -> the move being made
        self.by_brain: dict[int, str] = {}  # id(brain) -> its room
        #: the collector's pauses: (when, ms, generation, its CPU ms)
        self.gc_ms: list[tuple[float, float, int, float]] = []
        self.written = 0.0  # the last time bytes were handed to the runner's socket
        self.at_once = 0  # moves sent as the engine's answer was read (Client.move_now)
        self.write_back = 0.0  # and when that write returned
        self._gc_began = self._gc_cpu = 0.0
        self.seat: dict[str, int] = {}
        self.playing: set[str] = set()
        self.ramp: list[tuple[float, int]] = []  # (when, games under way) at each change
        #: per move, ms unless said: the runner's time (frame received by the kernel to
        #: the move's bytes written, less the engine's own), the engine's own, the time from
        #: the frame parsed by websockets to the move written less the whole go round trip
        #: (the measure before 2026-11-26 06:00), games under way, when (s), the process's
        #: CPU seconds then, to send returned (less the engine's own), the parts
        self.moves: list[dict[str, Any]] = []

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        """(gc.callbacks) Every collection's pause, in ms."""
        if phase == "start":
            self._gc_began, self._gc_cpu = time.perf_counter(), time.thread_time()
        else:
            now, cpu = time.perf_counter(), (time.thread_time() - self._gc_cpu) * 1000
            self.gc_ms.append((now, (now - self._gc_began) * 1000, info["generation"], cpu))

    def wrap_socket(self, ws: Any) -> None:
        """Stamp each data frame with the kernel's receive time of the bytes that complete
        it (SO_TIMESTAMPNS: on loopback, about when the server wrote them) and with the
        time the runner's loop read them; stamp each write of the runner's frames."""
        transport = ws.transport
        if not hasattr(transport, "_sock"):  # (uvloop's)
            self._wrap_uv(ws)
            return
        sock = transport._sock  # (asyncio's selector transport: its read, with a stamp)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        protocol = transport._protocol
        space = socket.CMSG_SPACE(16)
        offset = realtime_offset()

        def read_ready() -> None:  # (asyncio's _read_ready__data_received, stamped)
            if transport._conn_lost:
                return
            try:
                data, ancillary, _, _ = sock.recvmsg(transport.max_size, space)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                transport._fatal_error(exc, "Fatal read error on socket transport")
                return
            if not data:
                transport._read_ready__on_eof()
                return
            self._stamp(ancillary, offset)
            protocol.data_received(data)

        transport._read_ready_cb = read_ready
        self._stamp_frames_and_writes(ws)

    def _stamp(self, ancillary: list[tuple[int, int, bytes]], offset: float) -> None:
        """Bytes read now: the kernel's receive stamp of them (``offset`` converts)."""
        self.read_at = self.kernel_at = time.perf_counter()
        for level, kind, raw in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, ns = struct.unpack("qq", raw[:16])
                self.kernel_at = sec + ns / 1e9 - offset

    def _stamp_frames_and_writes(self, ws: Any) -> None:
        """Stamp each data frame parsed, and each write of the runner's frames."""
        from websockets.frames import DATA_OPCODES

        transport = ws.transport
        process = ws.process_event

        def process_event(event: Any) -> None:
            if event.opcode in DATA_OPCODES:
                self.arrived.append((self.kernel_at, self.read_at, time.perf_counter()))
            process(event)

        ws.process_event = process_event
        write = transport.write

        def stamped_write(data: Any) -> None:
            # the frame's bytes go to the kernel now: on loopback the send delivers them to
            # the server's socket; the woken server may then take the runner's core before
            # the call returns (the "write" part, not counted)
            self.written = time.perf_counter()
            write(data)
            self.write_back = time.perf_counter()

        transport.write = stamped_write

    def _wrap_uv(self, ws: Any) -> None:
        """uvloop's transport reads in C, without the kernel's stamps: its reading is
        paused, and a duplicate of its socket is read here (recvmsg, stamped) from a
        reader of uvloop's own (``add_reader``), its bytes handed to the protocol."""
        transport = ws.transport
        fd = os.dup(transport.get_extra_info("socket").fileno())
        sock = socket.socket(fileno=fd)
        sock.setblocking(False)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        transport.pause_reading()
        loop = asyncio.get_running_loop()
        space = socket.CMSG_SPACE(16)
        offset = realtime_offset()

        def done() -> None:  # (the duplicate closed with the connection, once)
            if sock.fileno() >= 0:
                loop.remove_reader(fd)
                sock.close()

        def read_ready() -> None:
            try:
                data, ancillary, _, _ = sock.recvmsg(2**16, space)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                done()
                transport.abort()  # (uvloop's transport tells the protocol)
                return
            if not data:
                done()
                transport.close()
                return
            self._stamp(ancillary, offset)
            ws.data_received(data)

        loop.add_reader(fd, read_ready)

        class Transport:  # (uvloop's, whose attributes cannot be set: its write stamped)
            write = transport.write

            def __getattr__(_, name: str) -> Any:
                return getattr(transport, name)

            def close(_) -> None:
                done()
                transport.close()

            def abort(_) -> None:
                done()
                transport.abort()

        ws.transport = Transport()
        # websockets' flow control (its queue of messages): this reader's, not uvloop's
        ws.recv_messages.pause = lambda: loop.remove_reader(fd)
        ws.recv_messages.resume = lambda: loop.add_reader(fd, read_ready)
        self._stamp_frames_and_writes(ws)

    def frame(self, msg: Any, me: str | None) -> None:
        """A frame decoded (in order: its stamps are the oldest left)."""
        now = time.perf_counter()
        kernel, read, parsed = self.arrived.popleft() if self.arrived else (now, now, now)
        room = getattr(msg, "room", None)
        if room is None:
            return
        kind = msg.type
        if kind == "room_state" and msg.you is not None:
            self.seat[room] = msg.you
            if msg.status == "playing":
                self.playing.add(room)
        elif kind == "game_started":
            self.playing.add(room)
            for s in msg.seats:
                if s.player is not None and s.player.name == me:
                    self.seat[room] = s.seat
        elif kind in ("game_over", "room_closed"):
            self.playing.discard(room)
        if not self.ramp or self.ramp[-1][1] != len(self.playing):
            self.ramp.append((kernel, len(self.playing)))
        if kind in ("room_state", "game_started", "move_made", "player_eliminated"):
            if msg.to_move is None or msg.to_move != self.seat.get(room):
                self.turn.pop(room, None)
            elif room not in self.turn:  # the first frame of this turn
                self.turn[room] = Move(kernel, read, parsed, now)

    def handed(self, room: str) -> None:
        """The move reaches Client.send_wire (its id given, the message built)."""
        if (mv := self.turn.get(room)) is not None:
            mv.handed = time.perf_counter()

    def sent(self, room: str) -> None:
        """The move's frame is on its way (its bytes written to the socket, then ``send``
        returned): the runner's time for this turn, once its go has returned too (a move
        sent as the engine's answer is read goes before)."""
        now = time.perf_counter()
        mv = self.turn.get(room)
        if mv is None or not mv.handed:
            return  # (a move sent again after a resume)
        mv.written = self.written if self.written >= mv.handed else now
        mv.sent = now
        if not mv.going:
            self.record(room)

    def record(self, room: str) -> None:
        """The move's figures, its stamps all in."""
        mv = self.turn.pop(room)
        now = mv.sent
        own = sum(w - r for _, _, r, w, _ in mv.gos) + sum(b - a for a, b in mv.other)
        trips = sum(b - a for _, a, _, _, b in mv.gos) + sum(b - a for a, b in mv.other)
        record = {
            "runner": (mv.written - mv.kernel - own) * 1000,
            "engine": own * 1000,
            "loop_measure": (mv.written - mv.parsed - trips) * 1000,
            "under_way": len(self.playing),
            "at": now,
            # the loop thread's CPU (where the runner works once engines are up): the
            # process's clock sums every thread's, and cost 75 us a call inside the loop
            "cpu": time.thread_time(),
            "returned": (now - mv.kernel - own) * 1000,
            # (--trace: who else held the CPU meanwhile, but in the engine's own time)
            "window": (mv.kernel, mv.written),
            "engine_spans": [(r, w) for _, _, r, w, _ in mv.gos] + list(mv.other),
        }
        if len(mv.gos) == 1 and not mv.other:
            called, wrote, e_read, e_wrote, back = mv.gos[0]
            stamps = (
                mv.kernel,
                mv.read,
                mv.parsed,
                mv.decoded,
                called,
                wrote,
                e_read,
                e_wrote,
                back,
            )
            ms = [(b - a) * 1000 for a, b in itertools.pairwise(stamps)]
            ms += [(mv.written - back) * 1000, (self.write_back - mv.written) * 1000]
            ms += [(now - self.write_back) * 1000]
            record["parts"] = dict(zip(PARTS, ms, strict=True))
        self.moves.append(record)

    def wrap_brain(self, brain: Any) -> Any:
        """Time the engine's answers: ``go`` (its lines written; the engine's own stamps
        of reading it and writing its answer; back), ``newgame``'s isready, a start-up."""
        proc = brain.proc
        go, new_game, start = proc.go, proc.new_game, proc.start
        write = proc._write
        begin_go, finish_go = getattr(proc, "begin_go", None), getattr(proc, "finish_go", None)
        put = getattr(proc, "_put", None)

        def current() -> Move | None:
            room = self.by_brain.get(id(brain))
            return None if room is None else self.turn.get(room)

        wrote = [0.0]  # (this engine's last lines: just before they were written)

        async def stamped_write(*lines: str) -> None:
            wrote[0] = time.perf_counter()
            await write(*lines)

        def went(called: float, result: Any, back: float) -> None:
            stamp = next((i.string for i in result.infos if (i.string or "")[:6] == "stamp "), "")
            e_read, e_wrote = (int(x) / 1e9 for x in stamp.split()[1:3]) if stamp else (back, back)
            if (mv := current()) is not None:
                mv.gos.append((called, wrote[0], e_read, e_wrote, back))
                mv.going = False
                if mv.sent:  # (sent as the answer was read, before go returned)
                    self.record(self.by_brain[id(brain)])

        async def timed_go(*args: Any, **kw: Any) -> Any:
            called = time.perf_counter()
            if (mv := current()) is not None:
                mv.going = True
            result = await go(*args, **kw)
            went(called, result, time.perf_counter())
            return result

        begun = [0.0, 0.0]  # (the search begun at once: called, its answer read)

        def timed_begin(
            position: Any, legal: Any = None, clocks: Any = None, on_move: Any = None
        ) -> Any:
            begun[:] = time.perf_counter(), 0.0

            def answered(best: Any) -> None:
                begun[1] = time.perf_counter()
                on_move(best)

            search = begin_go(position, legal, clocks, answered if on_move else None)
            if search is not None and (mv := current()) is not None:
                mv.going = True
            return search

        async def timed_finish(*args: Any, **kw: Any) -> Any:
            result = await finish_go(*args, **kw)
            went(begun[0], result, begun[1] or time.perf_counter())
            return result

        async def timed_new_game(*args: Any, **kw: Any) -> None:
            began = time.perf_counter()
            await new_game(*args, **kw)
            if (mv := current()) is not None:
                mv.other.append((began, began))  # (its round trip: the runner's)

        async def timed_start() -> Any:  # (a game that began before its engine was up)
            began = time.perf_counter()
            info = await start()
            if (mv := current()) is not None:
                mv.other.append((began, time.perf_counter()))
            return info

        proc.go, proc.new_game, proc.start, proc._write = (
            timed_go,
            timed_new_game,
            timed_start,
            stamped_write,
        )
        if begin_go is not None:  # (a runner that begins a search from the frame's callback)

            def stamped_put(*args: Any) -> None:
                wrote[0] = time.perf_counter()
                put(*args)

            proc.begin_go, proc.finish_go, proc._put = timed_begin, timed_finish, stamped_put
        if (finish_new := getattr(proc, "finish_new_game", None)) is not None:
            # (a runner that begins a game's newgame from the frame's callback)

            async def timed_finish_new(*args: Any, **kw: Any) -> None:
                began = time.perf_counter()
                await finish_new(*args, **kw)
                if (mv := current()) is not None:
                    mv.other.append((began, began))  # (its round trip: the runner's)

            proc.finish_new_game = timed_finish_new
        return brain


class Tee(io.StringIO):
    """The runner's output, kept (games are counted from it) and shown with ``-v``."""

    verbose = False

    def write(self, text: str) -> int:
        if self.verbose:
            sys.stderr.write(text)
        return super().write(text)


def measured_engine(kind: str) -> str:
    """The measured runner's engine command: ``python`` (bench/instant_engine.py) or
    ``c`` (bench/instant_engine.c, built here with the system's ``cc``: the same answers
    and stamps, with no interpreter between its read of ``go`` and its stamp, which a
    Python engine's line reading would add to the runner's figure)."""
    if kind == "python":
        return ENGINE
    where = tempfile.mkdtemp(prefix="instant-engine-")
    atexit.register(shutil.rmtree, where, True)  # (built for this run only)
    built = Path(where) / "instant_engine"
    source = ROOT / "bench" / "instant_engine.c"
    try:
        subprocess.run(["cc", "-O2", "-o", str(built), str(source)], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"--engine c needs a C compiler (cc): {exc}; or --engine python") from exc
    return str(built)


def niced(n: int) -> list[str]:
    """The command prefix that runs a program ``n`` steps nicer than this one (none: 0)."""
    return ["nice", "-n", str(n)] if n else []


def cpu_split(pin: bool) -> tuple[set[int], set[int]] | None:
    """With ``--pin``: (the measured runner's CPUs, the others'): the first CPU this
    process may use for the runner and its engines, the rest for the server and the
    opponent, as if those ran on another machine. None: no pinning."""
    if not pin:
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--pin needs two CPUs or more")
    return {cpus[0]}, set(cpus[1:])


def on_cpus(cpus: set[int] | None) -> list[str]:
    """The command prefix that runs a program on ``cpus`` (none: anywhere)."""
    return ["taskset", "-c", ",".join(map(str, sorted(cpus)))] if cpus else []


def start_server(
    games_at_once: int, nice: int = 0, cpus: set[int] | None = None
) -> tuple[subprocess.Popen[str], str]:
    # (the server writes to its own copy of the file: this one can be closed)
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen(
            [
                *on_cpus(cpus),
                *niced(nice),
                sys.executable,
                "-m",
                "clients.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--store",
                "memory",
                "--log-format",
                "json",
                # one runner's connection carries every game: the default per-connection
                # rate (20 frames a second) would pace 100 games' moves, not the runner
                "--rate",
                "2000/1000",
                # a bot may play this many games at once (a player: 8 rooms)
                "--bot-max-games",
                str(max(games_at_once, 8)),
            ],
            cwd=ROOT,
            # its log goes to a file (removed at once): a pipe would need a reader in the
            # measured process, whose thread would take turns with the runner's
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 30
        while server.poll() is None and time.monotonic() < deadline:
            log.seek(0)
            if m := re.search(r"ws://127\.0\.0\.1:\d+", log.read()):
                return server, m.group(0)
            time.sleep(0.05)
        server.kill()
        raise SystemExit("arena serve did not start")


async def bench(
    games: int,
    concurrency: int,
    opponent_ms: int,
    runner_root: Path = ROOT,
    others_nice: int = 0,
    engine: str = ENGINE,
    engine_kind: str = "python",
    pin: bool = False,
    trace: bool = False,
    trace_raw: Path | None = None,
) -> dict[str, Any]:
    # imported here: the same file is the opponent's engine, which must start fast; from
    # runner_root (another checkout: its runner measured by this bench, against this
    # checkout's server and opponent)
    sys.path.insert(0, str(runner_root))
    import clients.client
    from clients.bot.brains import EngineBrain
    from clients.bot.config import BotConfig
    from clients.bot.runner import BotRunner
    from server.eventloop import loop_name

    watch = Stopwatch()
    real_connect = clients.client.connect

    async def timed_connect(*args: Any, **kw: Any) -> Any:
        ws = await real_connect(*args, **kw)
        watch.wrap_socket(ws)
        return ws

    class TimedClient(clients.client.Client):
        def _receive(self, msg: Any) -> None:
            watch.frame(msg, None if self.player is None else self.player.name)
            super()._receive(msg)

        async def send_wire(self, data: dict[str, Any]) -> None:
            if data["type"] == "move":
                watch.handed(data["room"])
                watch.written = 0.0
            await super().send_wire(data)
            if data["type"] == "move":
                watch.sent(data["room"])

        def move_now(self, room: str, move: str) -> Any:  # (a runner that has it)
            watch.handed(room)
            watch.written = 0.0
            sent = super().move_now(room, move)  # type: ignore[misc]
            if sent is not None:
                watch.at_once += 1
                watch.sent(room)
            return sent

    class TimedRunner(BotRunner):
        def start_game(self, room: str, state: Any = None) -> None:
            super().start_game(room, state)
            if room in self.tasks:  # (whose engine answers for which room)
                watch.by_brain[id(self.tasks[room].brain)] = room

    clients.client.connect = timed_connect  # type: ignore[assignment]
    split = cpu_split(pin)
    server, url = start_server(concurrency, others_nice, split and split[1])
    opponent_engine = f"{ENGINE} --think-ms {opponent_ms}"
    opponent = subprocess.Popen(
        [
            *on_cpus(split and split[1]),
            *niced(others_nice),
            *(sys.executable, "-m", "clients.cli", "bot", "--url", url, "--name", "opponent"),
            *("--engine", opponent_engine, "--quick-match", "collapsi"),
            # its engine's wait is no misbehaviour (untimed games: 30 s a move by default)
            *("--untimed-move-s", str(opponent_ms / 1000 + 30)),
            *("--games", str(games), "--concurrency", str(concurrency)),
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    cfg = BotConfig(
        url=url,
        name="measured",
        engine=engine,
        quick_match=["collapsi"],
        games=games,
        concurrency=concurrency,
    ).check()
    runner = TimedRunner(
        cfg,
        lambda strike, log: watch.wrap_brain(EngineBrain(engine, {}, strike, log, 30.0)),
        Tee(),
    )
    runner.client = TimedClient(url, keep_events=False, patient=True)
    if split is not None:  # (the engines the runner starts inherit it)
        os.sched_setaffinity(0, split[0])
    tracer = CpuTrace(split[0], trace_raw) if trace and split is not None else None
    if tracer is not None:
        tracer.start()
    began, cpu_began = time.monotonic(), time.process_time()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    gc.callbacks.append(watch.on_gc)

    async def opponent_gone() -> None:  # then no game would ever come: stop
        while opponent.poll() is None:
            await asyncio.sleep(1)
        await asyncio.sleep(30)  # (its last games' ends reach the runner meanwhile)
        raise SystemExit(f"the opponent runner exited ({opponent.returncode}) too soon")

    watchdog = asyncio.create_task(opponent_gone())
    try:
        play = asyncio.create_task(runner.run())
        await asyncio.wait([play, watchdog], timeout=1200, return_when=asyncio.FIRST_COMPLETED)
        if not play.done():
            play.cancel()
            await asyncio.gather(play, return_exceptions=True)
            if watchdog.done():
                watchdog.result()  # raises its SystemExit
            raise SystemExit("the measured runner did not finish in 1200 s")
        code = play.result()
    finally:
        if tracer is not None:
            tracer.halt()  # (read once the run's own figures are taken)
        watchdog.cancel()
        opponent.kill()
        opponent.wait(10)
        server.terminate()
        server.wait(10)
        clients.client.connect = real_connect  # type: ignore[assignment]
        gc.callbacks.remove(watch.on_gc)
    wall, cpu = time.monotonic() - began, time.process_time() - cpu_began
    end = resource.getrusage(resource.RUSAGE_SELF)
    if tracer is not None:
        tracer.collect()
    moves = watch.moves
    own = [mv["runner"] for mv in moves]
    under_way = [mv["under_way"] for mv in moves]
    on = [g for g in watch.gc_ms if watch.ramp and g[0] > watch.ramp[0][0]]
    in_games = [g[1] for g in on]
    full = [g[1] for g in on if g[2] == 2]
    full_cpu = [g[3] for g in on if g[2] == 2]
    # the moves made once every game had started (no engine starting any more) while
    # half of them or more were under way
    rises = zip(watch.ramp[1:], watch.ramp, strict=False)
    last_start = max((t for (t, n), (_, before) in rises if n > before), default=0.0)
    steady_moves = [
        mv for mv in moves if mv["at"] > last_start and mv["under_way"] >= concurrency // 2
    ]
    steady = [mv["runner"] for mv in steady_moves]
    # the runner's CPU per move in steady state, its loop thread's (every frame of every
    # game, the engines' pipes: the loop's whole work between the first and last steady
    # move, over them); a busy machine stretches wall times, not this
    steady_cpu = (
        (steady_moves[-1]["cpu"] - steady_moves[0]["cpu"]) * 1000 / (len(steady_moves) - 1)
        if len(steady_moves) > 1
        else 0.0
    )
    parts = [mv["parts"] for mv in moves if "parts" in mv]
    held: dict[str, float] = {}  # (--trace) ms other tasks held the runner's CPU in moves
    for mv in moves:
        others = {} if tracer is None else tracer.others(*mv["window"], mv["engine_spans"])
        mv["others"] = sum(others.values()) * 1000
        for comm, s in others.items():
            held[comm] = held.get(comm, 0.0) + s * 1000

    def p50_p99(name: str, values: list[float]) -> dict[str, float]:
        return {
            f"{name}_p50_ms": statistics.median(values) if values else 0.0,
            f"{name}_p99_ms": pct(values, 0.99),
        }

    finished = sum(1 for ln in runner.out.getvalue().splitlines() if ln.startswith("game "))  # type: ignore[attr-defined]
    first = watch.ramp[0][0] if watch.ramp else 0.0
    peak_at = next((t for t, n in watch.ramp if n == max(under_way, default=0)), first)
    return {
        "runner_root": str(Path(clients.client.__file__).resolve().parent.parent),
        "event_loop": loop_name(),
        "others_nice": others_nice,
        "pinned": None if split is None else [sorted(split[0]), sorted(split[1])],
        "engine": engine_kind,
        "exit": code,
        "s_to_peak": peak_at - first,
        "games": finished,
        "peak_under_way": max(under_way, default=0),
        "median_under_way": statistics.median(under_way) if under_way else 0,
        "moves": len(own),
        "sent_at_once": watch.at_once,
        "moves_steady": len(steady),
        "runner_p99_steady_ms": pct(steady, 0.99),
        "runner_p50_steady_ms": statistics.median(steady) if steady else 0.0,
        "cpu_ms_per_move_steady": steady_cpu,
        "wall_s": wall,
        # the runner process over the run: user and system CPU, and its switches away
        # (voluntary: it waited; involuntary: another process took its core), per move
        "user_ms_per_move": (end.ru_utime - usage.ru_utime) * 1000 / max(1, len(own)),
        "sys_ms_per_move": (end.ru_stime - usage.ru_stime) * 1000 / max(1, len(own)),
        "voluntary_switches_per_move": (end.ru_nvcsw - usage.ru_nvcsw) / max(1, len(own)),
        "involuntary_switches_per_move": (end.ru_nivcsw - usage.ru_nivcsw) / max(1, len(own)),
        # the runner process's CPU (every game's frames, engines' pipes, quick matches,
        # the bench's own stamps) over its moves: steady under load, unlike wall times
        "cpu_ms_per_move": cpu * 1000 / len(own) if own else 0.0,
        **p50_p99("runner", own),
        "runner_max_ms": max(own, default=0.0),
        # the same, to the runner's send call returned rather than its bytes written
        **p50_p99("runner_returned", [mv["returned"] for mv in moves]),
        # the measure before 2026-11-26 06:00: from the frame parsed (not received) to the
        # move written, less the whole go round trip (the pipe both ways, the engine's
        # wake-up and the runner's read of its answer: the runner's, in fact)
        **p50_p99("loop_measure", [mv["loop_measure"] for mv in moves]),
        **p50_p99("loop_measure_steady", [mv["loop_measure"] for mv in steady_moves]),
        **p50_p99("engine", [mv["engine"] for mv in moves]),
        # (--trace) the runner's time less the time other tasks held its CPU meanwhile
        "traced": tracer is not None,
        "trace_events": 0 if tracer is None else tracer.events,
        "trace_lost": 0 if tracer is None else tracer.lost,
        "others_moves": sum(1 for mv in moves if mv["others"] >= 0.05),
        "others_ms": held,
        **p50_p99("less_others", [mv["runner"] - mv["others"] for mv in moves]),
        "less_others_max_ms": max((mv["runner"] - mv["others"] for mv in moves), default=0.0),
        **p50_p99("less_others_steady", [mv["runner"] - mv["others"] for mv in steady_moves]),
        # the collector's pauses once the first game had started (not the start-up's)
        # every move: seconds since the first game, runner ms, games under way, parts
        # (and with --trace, ms other tasks held the runner's CPU during the move)
        "each_move": [
            (round(mv["at"] - first, 3), round(mv["runner"], 3), mv["under_way"], mv.get("parts"))
            + ((round(mv["others"], 3),) if tracer is not None else ())
            for mv in moves
        ],
        "ramp": [(round(t - first, 3), n) for t, n in watch.ramp],
        "gc_pauses": len(in_games),
        "gc_each": [  # (generation, wall ms, CPU ms) of each
            (g[2], round(g[1], 3), round(g[3], 3)) for g in on
        ],
        "gc_max_ms": max(in_games, default=0.0),
        "gc_total_ms": sum(in_games),
        "gc_full_pauses": len(full),
        "gc_full_max_ms": max(full, default=0.0),
        "gc_full_cpu_max_ms": max(full_cpu, default=0.0),  # (a busy machine's wall: more)
        # where the runner's time goes (moves with one go, all of them): p50 and p99 per part
        "parts_moves": len(parts),
        **{k: v for name in PARTS for k, v in p50_p99(name, [x[name] for x in parts]).items()},
        "steady_parts": {
            k: v
            for name in PARTS
            for k, v in p50_p99(
                name, [mv["parts"][name] for mv in steady_moves if "parts" in mv]
            ).items()
        },
    }


#: the runner's time per move, in order (see Stopwatch.sent)
PARTS = (
    "socket_wait",  # the kernel had the frame -> the runner's loop read it
    "parse",  # read -> the frame parsed by websockets
    "decode",  # parsed -> decoded by the runner (the reading task's turn, the decoding)
    "to_go",  # decoded -> the engine's go called (routing, the game task's turn)
    "go_lines",  # go called -> its lines about to be written
    "to_engine",  # the pipe write -> the engine read go (its wake-up)
    "engine_own",  # the engine's own (not counted)
    "from_engine",  # the engine wrote its answer -> go returned (the pipe, the loop)
    "to_written",  # go returned -> the move's bytes handed to the socket (its write called)
    "write",  # the socket write's call (the woken server may run first: not counted)
    "after_write",  # the write returned -> send returned (not counted)
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--opponent-ms", type=int, default=15000)
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument(
        "--others-nice",
        type=int,
        default=0,
        metavar="N",
        help="run the server and the opponent (and its engines) N steps nicer than the "
        "measured runner: as if they were on other machines, taking a core from the "
        "runner and its engines only when they leave one free (default 0: equals)",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="run the measured runner and its engines on one CPU and the server and the "
        "opponent (with its engines) on the others (taskset): as if those ran on another "
        "machine, so that only the runner's own work is measured (needs 2 CPUs or more)",
    )
    parser.add_argument(
        "--shield",
        action="store_true",
        help="with --pin: move every other task that may run elsewhere (the machine's "
        "agent, unbound kernel threads...) off the runner's CPU for the run, and back "
        "after (bench/cpu_shield.py; root): as on a host of the runner's own",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="with --pin: record who else ran on the runner's CPU (ftrace; root) and "
        "give the runner's time less the time other tasks held that CPU during each move",
    )
    parser.add_argument(
        "--trace-raw",
        type=Path,
        metavar="PATH",
        help="with --trace: keep the raw record (ftrace's text) there for a closer look",
    )
    parser.add_argument(
        "--runner-root",
        type=Path,
        default=ROOT,
        metavar="DIR",
        help="measure the runner of this checkout (a git worktree of another commit)",
    )
    parser.add_argument(
        "--engine",
        choices=("c", "python"),
        default="c",
        help="the measured runner's engine: bench/instant_engine.c (default: built with "
        "cc; stamps as its read of go returns) or bench/instant_engine.py (its stamp "
        "comes after Python read and split the line, counted as the runner's)",
    )
    parser.add_argument("-v", action="store_true", help="show the runner's output")
    parser.add_argument(
        "--event-loop",
        choices=["asyncio", "uvloop"],
        default="asyncio",
        help="the measured runner's loop: asyncio's own (arena bot's) or uvloop (to compare)",
    )
    args = parser.parse_args()
    if args.trace and (not args.pin or (why := CpuTrace.usable()) is not None):
        parser.error(f"--trace: {why if args.pin else 'only with --pin'}")
    if args.shield and (not args.pin or os.geteuid() != 0):
        parser.error(f"--shield: {'run as root' if args.pin else 'only with --pin'}")
    Tee.verbose = args.v
    run = asyncio.run  # as arena bot
    if args.event_loop == "uvloop":
        import uvloop

        run = uvloop.run
    with contextlib.ExitStack() as stack:
        split = cpu_split(args.pin)
        moved = stack.enter_context(shield(split[0])) if args.shield and split else {}
        r = run(
            bench(
                args.games,
                args.concurrency,
                args.opponent_ms,
                args.runner_root.resolve(),
                args.others_nice,
                measured_engine(args.engine),
                args.engine,
                args.pin,
                args.trace,
                args.trace_raw,
            )
        )
    r["shielded_tasks"] = len(moved) if args.shield else None
    where = "the same CPUs as the others"
    if r["pinned"] is not None:
        own, others = r["pinned"]
        where = f"CPU {own} (the server and the opponent on {others})"
        if r["shielded_tasks"] is not None:
            where += f"; {r['shielded_tasks']} other tasks moved off it for the run"
    print(
        f"The runner measured: {r['runner_root']}; its engine: {r['engine']}; its loop: "
        f"{r['event_loop']}; on {where}"
    )
    print()
    print(
        "| games | under way: peak | s to peak | median | moves | wall s | "
        "runner p50 ms | runner p99 ms | runner max ms | steady: moves | p50 ms | p99 ms | "
        "engine's own p50 ms | p99 ms | to send returned p99 ms | "
        "old measure: p99 ms | steady p99 ms | CPU ms per move |"
    )
    print("| ---: " * 18 + "|")
    print(
        f"| {r['games']} | {r['peak_under_way']} | {r['s_to_peak']:.1f} | "
        f"{r['median_under_way']:g} | {r['moves']} | {r['wall_s']:.1f} | "
        f"{r['runner_p50_ms']:.3f} | {r['runner_p99_ms']:.3f} | {r['runner_max_ms']:.3f} | "
        f"{r['moves_steady']} | {r['runner_p50_steady_ms']:.3f} | "
        f"{r['runner_p99_steady_ms']:.3f} | "
        f"{r['engine_p50_ms']:.3f} | {r['engine_p99_ms']:.3f} | "
        f"{r['runner_returned_p99_ms']:.3f} | {r['loop_measure_p99_ms']:.3f} | "
        f"{r['loop_measure_steady_p99_ms']:.3f} | {r['cpu_ms_per_move']:.3f} |"
    )
    print()
    print(
        f"The runner's CPU per move in steady state: {r['cpu_ms_per_move_steady']:.3f} ms; "
        f"over the run, per move: user {r['user_ms_per_move']:.3f} ms, system "
        f"{r['sys_ms_per_move']:.3f} ms, {r['voluntary_switches_per_move']:.1f} waits, "
        f"{r['involuntary_switches_per_move']:.2f} preemptions. Moves sent as the "
        f"engine's answer was read: {r['sent_at_once']} of {r['moves']}."
    )
    if r["traced"]:
        print()
        if r["trace_lost"]:
            print(f"(The trace's buffer lost {r['trace_lost']} events: waits may be missed.)")
        top = sorted(r["others_ms"].items(), key=lambda kv: -kv[1])[:4]
        print(
            f"Other tasks on the runner's CPU (traced) held it during {r['others_moves']} "
            f"moves: {', '.join(f'{k} {v:.1f} ms' for k, v in top) or 'none'}. The runner's "
            f"time less theirs: p50 {r['less_others_p50_ms']:.3f} ms, p99 "
            f"{r['less_others_p99_ms']:.3f} ms, max {r['less_others_max_ms']:.3f} ms; steady "
            f"p99 {r['less_others_steady_p99_ms']:.3f} ms."
        )
    print()
    print(f"Where the time goes ({r['parts_moves']} moves with one engine answer), ms:")
    print()
    print("| | " + " | ".join(PARTS) + " |")
    print("| --- " + "| ---: " * len(PARTS) + "|")
    for label in ("p50", "p99"):
        cells = " | ".join(f"{r[f'{name}_{label}_ms']:.3f}" for name in PARTS)
        print(f"| {label} | {cells} |")
        steady = r["steady_parts"]
        cells = " | ".join(f"{steady[f'{name}_{label}_ms']:.3f}" for name in PARTS)
        print(f"| steady {label} | {cells} |")
    print()
    print(
        f"The collector while games were on: {r['gc_pauses']} pauses, "
        f"{r['gc_total_ms']:.1f} ms in all, the longest {r['gc_max_ms']:.2f} ms; "
        f"{r['gc_full_pauses']} full collections, the longest {r['gc_full_max_ms']:.2f} ms "
        f"({r['gc_full_cpu_max_ms']:.2f} ms of CPU)."
    )
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2))
    return 0 if r["exit"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
