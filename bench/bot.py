"""What ``arena bot`` adds to each move, with 100 games at once in one runner process.

A server (``arena serve``, with ``--bot-max-games`` at ``--concurrency`` and a
per-connection rate that does not pace the runner's one connection) and an opponent
runner (``arena bot`` whose engine, this file run as ``--slow-engine MS``, answers
after ``--opponent-ms``, so that games last and many are under way at once) run as
subprocesses. The measured runner runs in this process with
an engine program that answers at once (clients/examples/python/random_engine.py),
``--concurrency`` games at a time, ``--games`` in all, by quick match.

Per move of the measured runner, the runner's own time is taken from the arrival of
the frame that made it the bot's turn (as websockets takes the bytes off the socket,
before the runner reads the frame) until the move's frame is written to the socket (its
bytes handed to the kernel), minus the engine's own time in between (from its ``go``
line sent until its ``bestmove`` read, and a game's ``newgame``/``isready`` at its first
move). The time until the runner's ``send`` returned is shown beside it: on a busy
machine the write wakes the server, which may take the runner's core first, so that
figure holds the server's time too. The runner's time is split into its parts (frame
decoded; the engine's ``go`` called; ``go``'s own; the move handed to ``send_wire``;
written; ``send`` returned), and the collector's pauses while games are on are counted.
The games under way (started, not over) are counted at every move. Prints tables;
``--json PATH`` writes the figures. ``--runner-root DIR`` measures the runner of another
checkout (a git worktree of an older commit) against this one's server and opponent, so
that two versions are compared in one session:

    .venv/bin/python bench/bot.py --games 100 --concurrency 100
    .venv/bin/python bench/bot.py --games 100 --concurrency 100 --runner-root /tmp/base

``bench/bot.py --slow-engine MS`` is the opponent's engine (standard library only).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import json
import re
import statistics
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

ENGINE = f"{sys.executable} {ROOT / 'clients' / 'examples' / 'python' / 'random_engine.py'}"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def slow_engine(ms: int) -> None:
    """An engine that answers the first legal move after ``ms`` milliseconds."""
    legal: list[str] = []
    for line in sys.stdin:
        words = line.split()
        if words[:1] == ["arena"]:
            print("id name slow\narenaok 1", flush=True)
        elif words[:1] == ["isready"]:
            print("readyok", flush=True)
        elif words[:1] == ["legal"]:
            legal = words[1:]
        elif words[:1] == ["go"]:
            time.sleep(ms / 1000)
            print(f"bestmove {legal[0] if legal else 'resign'}", flush=True)
        elif words[:1] == ["quit"]:
            return


class Stopwatch:
    """The bench's instruments, installed around the runner without changing it."""

    def __init__(self) -> None:
        self.arrived: deque[float] = deque()  # data frames stamped, not yet parsed
        self.turn_at: dict[str, float] = {}  # room -> the frame that made it our turn
        self.decoded_at: dict[str, float] = {}  # room -> that frame decoded (a message)
        self.send_at: dict[str, float] = {}  # room -> the move handed to Client.send
        self.go_at: dict[int, tuple[float, float]] = {}  # id(brain) -> last go: called, back
        #: per move (ms): arrival -> decoded, -> go called, go's own (not the engine's),
        #: go back -> Client.send_wire, -> bytes written, -> send returned
        self.parts: list[tuple[float, ...]] = []
        #: the collector's pauses: (when, ms, generation, its CPU ms)
        self.gc_ms: list[tuple[float, float, int, float]] = []
        self.written = 0.0  # the last time bytes were handed to the runner's socket
        self._gc_began = self._gc_cpu = 0.0
        self.seat: dict[str, int] = {}
        self.playing: set[str] = set()
        self.ramp: list[tuple[float, int]] = []  # (when, games under way) at each change
        self.engine: dict[int, list[tuple[float, float]]] = {}  # id(brain) -> spans
        #: per move: runner ms (to its bytes written), turn-to-written ms, engine ms, games
        #: under way, when, runner ms to send returned, the process's CPU seconds then
        self.moves: list[tuple[float, float, float, int, float, float, float]] = []

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        """(gc.callbacks) Every collection's pause, in ms."""
        if phase == "start":
            self._gc_began, self._gc_cpu = time.perf_counter(), time.thread_time()
        else:
            now, cpu = time.perf_counter(), (time.thread_time() - self._gc_cpu) * 1000
            self.gc_ms.append((now, (now - self._gc_began) * 1000, info["generation"], cpu))

    def wrap_socket(self, ws: Any) -> None:
        """Stamp each data frame as the bytes that complete it arrive (websockets parses
        them as they come, before anything of the runner's reads the frame)."""
        from websockets.frames import DATA_OPCODES

        process = ws.process_event

        def process_event(event: Any) -> None:
            if event.opcode in DATA_OPCODES:
                self.arrived.append(time.perf_counter())
            process(event)

        ws.process_event = process_event
        send_data = ws.send_data

        def stamped_send_data() -> None:  # (the frame's bytes go to the socket now)
            self.written = time.perf_counter()
            send_data()

        ws.send_data = stamped_send_data

    def frame(self, msg: Any, me: str | None) -> None:
        """A frame parsed (in order: its stamp is the oldest one left)."""
        at = self.arrived.popleft() if self.arrived else time.perf_counter()
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
            self.ramp.append((at, len(self.playing)))
        if kind in ("room_state", "game_started", "move_made", "player_eliminated"):
            if msg.to_move is None or msg.to_move != self.seat.get(room):
                self.turn_at.pop(room, None)
            elif room not in self.turn_at:  # the first frame of this turn
                self.turn_at[room] = at
                self.decoded_at[room] = time.perf_counter()

    def sent(self, room: str, brain: object) -> None:
        """The move's frame is on its way (its bytes written to the socket, then ``send``
        returned): the runner's time for this turn."""
        now = time.perf_counter()
        turn = self.turn_at.pop(room, None)
        decoded, handed = self.decoded_at.pop(room, None), self.send_at.pop(room, None)
        if turn is None or handed is None:
            return  # (a move sent again after a resume)
        written = self.written if self.written >= handed else now
        spans = [(a, b) for a, b in self.engine.get(id(brain), []) if a >= turn]
        self.engine.get(id(brain), []).clear()
        engine = sum(end - start for start, end in spans) * 1000
        total, returned = (written - turn) * 1000, (now - turn) * 1000
        under_way = len(self.playing)
        cpu = time.process_time()
        self.moves.append((total - engine, total, engine, under_way, now, returned - engine, cpu))
        called, back = self.go_at.pop(id(brain), (0.0, 0.0))
        if decoded is not None and turn < called and spans and spans[-1][0] >= called:
            before_go = sum(b - a for a, b in spans[:-1]) * 1000  # (a game's newgame...)
            ms = [decoded - turn, called - decoded, back - called, handed - back]
            ms = [x * 1000 for x in (*ms, written - handed, now - written)]
            ms[1] -= before_go
            ms[2] -= engine - before_go
            self.parts.append(tuple(ms))

    def handed(self, room: str) -> None:
        """The move reaches Client.send (its id given, the message built)."""
        self.send_at[room] = time.perf_counter()

    def wrap_brain(self, brain: Any) -> Any:
        """Time the engine's own answers (``go`` to ``bestmove``, ``newgame``'s isready,
        and a start-up)."""
        spans = self.engine.setdefault(id(brain), [])
        proc = brain.proc
        go, new_game, start = proc.go, proc.new_game, proc.start

        async def timed_go(*args: Any, **kw: Any) -> Any:
            called = time.perf_counter()
            result = await go(*args, **kw)
            end = time.perf_counter()
            spans.append((end - result.elapsed_ms / 1000, end))
            self.go_at[id(brain)] = (called, end)
            return result

        async def timed_new_game(*args: Any, **kw: Any) -> None:
            start = time.perf_counter()
            await new_game(*args, **kw)
            spans.append((start, time.perf_counter()))

        async def timed_start() -> Any:  # (a game that began before its engine was up)
            began = time.perf_counter()
            info = await start()
            spans.append((began, time.perf_counter()))
            return info

        proc.go, proc.new_game, proc.start = timed_go, timed_new_game, timed_start
        return brain


class Tee(io.StringIO):
    """The runner's output, kept (games are counted from it) and shown with ``-v``."""

    verbose = False

    def write(self, text: str) -> int:
        if self.verbose:
            sys.stderr.write(text)
        return super().write(text)


def start_server(games_at_once: int) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [
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
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert server.stdout is not None
    for line in server.stdout:
        if m := re.search(r"ws://127\.0\.0\.1:\d+", line):
            return server, m.group(0)
    raise SystemExit("arena serve did not start")


async def bench(
    games: int, concurrency: int, opponent_ms: int, runner_root: Path = ROOT
) -> dict[str, Any]:
    # imported here: the same file is the opponent's engine, which must start fast; from
    # runner_root (another checkout: its runner measured by this bench, against this
    # checkout's server and opponent)
    sys.path.insert(0, str(runner_root))
    import clients.client
    from clients.bot.brains import EngineBrain
    from clients.bot.config import BotConfig
    from clients.bot.runner import BotRunner

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
                task = runner.tasks.get(data["room"])
                watch.sent(data["room"], None if task is None else task.brain)

        if not hasattr(clients.client.Client, "send_wire"):  # (a runner before 2026-11-26)

            async def send(self, msg: Any) -> None:
                if msg.type == "move":
                    watch.handed(msg.room)
                    watch.written = 0.0
                await super().send(msg)
                if msg.type == "move":
                    task = runner.tasks.get(msg.room)
                    watch.sent(msg.room, None if task is None else task.brain)

    clients.client.connect = timed_connect  # type: ignore[assignment]
    server, url = start_server(concurrency)
    opponent_engine = f"{sys.executable} {Path(__file__).resolve()} --slow-engine {opponent_ms}"
    opponent = subprocess.Popen(
        [
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
        engine=ENGINE,
        quick_match=["collapsi"],
        games=games,
        concurrency=concurrency,
    ).check()
    runner = BotRunner(
        cfg,
        lambda strike, log: watch.wrap_brain(EngineBrain(ENGINE, {}, strike, log, 30.0)),
        Tee(),
    )
    runner.client = TimedClient(url, keep_events=False, patient=True)
    began, cpu_began = time.monotonic(), time.process_time()
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
        watchdog.cancel()
        opponent.kill()
        opponent.wait(10)
        server.terminate()
        server.wait(10)
        clients.client.connect = real_connect  # type: ignore[assignment]
        gc.callbacks.remove(watch.on_gc)
    wall, cpu = time.monotonic() - began, time.process_time() - cpu_began
    own = [mv[0] for mv in watch.moves]
    total = [mv[1] for mv in watch.moves]
    engine = [mv[2] for mv in watch.moves]
    under_way = [mv[3] for mv in watch.moves]
    returned = [mv[5] for mv in watch.moves]
    on = [g for g in watch.gc_ms if watch.ramp and g[0] > watch.ramp[0][0]]
    in_games = [g[1] for g in on]
    full = [g[1] for g in on if g[2] == 2]
    full_cpu = [g[3] for g in on if g[2] == 2]
    # the moves made once every game had started (no engine starting any more: a start
    # forks a process from the runner's loop) while half of them or more were under way
    rises = zip(watch.ramp[1:], watch.ramp, strict=False)
    last_start = max((t for (t, n), (_, before) in rises if n > before), default=0.0)
    steady_moves = [mv for mv in watch.moves if mv[4] > last_start and mv[3] >= concurrency // 2]
    steady = [mv[0] for mv in steady_moves]
    # the runner's CPU per move in steady state (every frame of every game, the engines'
    # pipes: the loop's whole work between the first and last steady move, over them);
    # a busy machine stretches wall times, not this
    steady_cpu = (
        (steady_moves[-1][6] - steady_moves[0][6]) * 1000 / (len(steady_moves) - 1)
        if len(steady_moves) > 1
        else 0.0
    )
    finished = sum(1 for ln in runner.out.getvalue().splitlines() if ln.startswith("game "))  # type: ignore[attr-defined]
    first = watch.ramp[0][0] if watch.ramp else 0.0
    peak_at = next((t for t, n in watch.ramp if n == max(under_way, default=0)), first)
    return {
        "runner_root": str(Path(clients.client.__file__).resolve().parent.parent),
        "exit": code,
        "s_to_peak": peak_at - first,
        "games": finished,
        "peak_under_way": max(under_way, default=0),
        "median_under_way": statistics.median(under_way) if under_way else 0,
        "moves": len(own),
        "moves_steady": len(steady),
        "runner_p99_steady_ms": pct(steady, 0.99),
        "cpu_ms_per_move_steady": steady_cpu,
        "wall_s": wall,
        # the runner process's CPU (every game's frames, engines' pipes, quick matches,
        # the bench's own stamps) over its moves: steady under load, unlike wall times
        "cpu_ms_per_move": cpu * 1000 / len(own) if own else 0.0,
        "runner_p50_ms": statistics.median(own) if own else 0.0,
        "runner_p99_ms": pct(own, 0.99),
        "runner_max_ms": max(own, default=0.0),
        "turn_to_sent_p99_ms": pct(total, 0.99),
        # the same, to the runner's send call returned rather than its bytes written: a
        # write wakes the server, which may take the runner's core before it returns
        "runner_returned_p50_ms": statistics.median(returned) if returned else 0.0,
        "runner_returned_p99_ms": pct(returned, 0.99),
        "engine_p50_ms": statistics.median(engine) if engine else 0.0,
        "engine_p99_ms": pct(engine, 0.99),
        # the collector's pauses once the first game had started (not the start-up's)
        "gc_pauses": len(in_games),
        "gc_max_ms": max(in_games, default=0.0),
        "gc_total_ms": sum(in_games),
        "gc_full_pauses": len(full),
        "gc_full_max_ms": max(full, default=0.0),
        "gc_full_cpu_max_ms": max(full_cpu, default=0.0),  # (a busy machine's wall: more)
        # where the runner's time goes (moves with one go, all of them): p50 and p99 per part
        "parts_moves": len(watch.parts),
        **{
            f"{name}_{label}_ms": pct([p[i] for p in watch.parts], q)
            for i, name in enumerate(PARTS)
            for label, q in (("p50", 0.5), ("p99", 0.99))
        },
    }


#: the runner's time per move, in order (see Stopwatch.sent)
PARTS = ("decode", "to_engine", "go_own", "to_send", "write", "after_write")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--opponent-ms", type=int, default=15000)
    parser.add_argument("--slow-engine", type=int, metavar="MS", help=argparse.SUPPRESS)
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument(
        "--runner-root",
        type=Path,
        default=ROOT,
        metavar="DIR",
        help="measure the runner of this checkout (a git worktree of another commit)",
    )
    parser.add_argument("-v", action="store_true", help="show the runner's output")
    args = parser.parse_args()
    if args.slow_engine is not None:
        slow_engine(args.slow_engine)
        return 0
    Tee.verbose = args.v
    r = asyncio.run(  # as arena bot
        bench(args.games, args.concurrency, args.opponent_ms, args.runner_root.resolve())
    )
    print(f"The runner measured: {r['runner_root']}")
    print()
    print(
        "| games | under way: peak | s to peak | median | moves | wall s | "
        "runner p50 ms | runner p99 ms | runner max ms | steady: moves | runner p99 ms | "
        "to send returned: p50 ms | p99 ms | "
        "turn to sent p99 ms | engine p50 ms | engine p99 ms | CPU ms per move |"
    )
    print("| ---: " * 17 + "|")
    print(
        f"| {r['games']} | {r['peak_under_way']} | {r['s_to_peak']:.1f} | "
        f"{r['median_under_way']:g} | {r['moves']} | "
        f"{r['wall_s']:.1f} | {r['runner_p50_ms']:.3f} | {r['runner_p99_ms']:.3f} | "
        f"{r['runner_max_ms']:.3f} | {r['moves_steady']} | {r['runner_p99_steady_ms']:.3f} | "
        f"{r['runner_returned_p50_ms']:.3f} | {r['runner_returned_p99_ms']:.3f} | "
        f"{r['turn_to_sent_p99_ms']:.2f} | {r['engine_p50_ms']:.2f} | {r['engine_p99_ms']:.2f} | "
        f"{r['cpu_ms_per_move']:.3f} |"
    )
    print()
    print(f"The runner's CPU per move in steady state: {r['cpu_ms_per_move_steady']:.3f} ms.")
    print()
    print(f"Where the runner's time goes ({r['parts_moves']} moves with one engine answer), ms:")
    print()
    print("| | " + " | ".join(PARTS) + " |")
    print("| --- " + "| ---: " * len(PARTS) + "|")
    for label in ("p50", "p99"):
        cells = " | ".join(f"{r[f'{name}_{label}_ms']:.3f}" for name in PARTS)
        print(f"| {label} | {cells} |")
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
