"""The server's work per move in counts a busy machine does not move, for A/B of checkouts.

On a shared 2-core machine ``bench/server.py``'s CPU per move varies by 20-50% between
runs of the same code, so a change of a few per cent cannot be seen. This bench runs
one fixed piece of work against ``arena serve`` from each checkout (``--root``,
repeatable; default this one), alternating, and counts it:

- **instructions per move** (default): the server runs under valgrind's callgrind
  with instrumentation on only while the measured games are played. Guest
  instructions do not depend on the machine's load; runs of the same code agree
  within 1% in rooms and 6% in new rooms (the games' random deals, and how many
  messages a step of the loop finds, differ). Not counted: the kernel's work
  (system calls), cache misses, and C code's speed against Python's (uvloop's
  instructions are few but not free).
- ``--native``: no valgrind; the server's CPU time per move from ``/proc`` instead of
  instructions (noisy, as ``bench/server.py``'s).
- ``--strace`` (with ``--native``): system calls per move, the kernel's share that
  instructions miss, counted by ``strace -c -f`` attached for the measured games
  (which slows the server: the counts are of a slowed server's batching too).

The work: ``--pairs`` pairs of clients (``bench/server.py``'s lean players: the first
legal move at once), one warm-up game each, then ``--games`` games each, in a new room
every game (create, join, sit, ready, play, leave: a quick match's path) or with
``--rematch`` as rematches in one room. ``--redis auto`` puts presence in a
throwaway Redis (its own CPU not counted). Each round runs every root once; the
order alternates. Under callgrind the server is 50-100x slower, so a step of its loop
handles many clients' messages at once: the counts are of the code, at a saturated
server's batching.

    .venv/bin/python bench/server_instr.py --root /tmp/base --root . [--rounds 2]
        [--pairs 10] [--games 4] [--rematch] [--redis auto] [--native [--strace]] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.pairs import open_game  # the repository root is on the path now
from bench.server import (
    Player,
    Stats,
    Window,
    free_port,
    login,
    open_ws,
    raise_nofile,
    redis_url,
)

ROOT = Path(__file__).resolve().parent.parent
#: ``arena serve``'s own parser and run(), imported from the checkout in the cwd
SERVE = (
    "import argparse, sys; sys.path.insert(0, '.'); from server.cli import add_arguments, run; "
    "p = argparse.ArgumentParser(); add_arguments(p); run(p.parse_args(sys.argv[1:]))"
)


def cpu_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Strace:
    """``strace -c -f`` attached to a process: system calls counted by name until stopped."""

    def __init__(self, pid: int, out: Path) -> None:
        self.out = out
        self.proc = subprocess.Popen(
            ["strace", "-c", "-f", "-p", str(pid), "-o", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        self.proc.stderr.readline()  # "strace: Process N attached": counting from here

    def stop(self) -> dict[str, int]:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(60)
        calls: dict[str, int] = {}
        for line in self.out.read_text().splitlines():
            cols = line.split()
            if len(cols) >= 5 and cols[0][0].isdigit() and cols[-1] != "total":
                calls[cols[-1]] = int(cols[3])
        return calls


class Server:
    """``arena serve`` of ``root`` on a free port, optionally under callgrind."""

    def __init__(self, root: Path, presence: list[str], native: bool, tmp: Path) -> None:
        self.port = free_port()
        self.out = tmp / f"callgrind.{self.port}"
        valgrind = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={self.out}",
        ]  # fmt: skip
        argv = [
            *([] if native else valgrind), sys.executable, "-c", SERVE,
            "--host", "127.0.0.1", "--port", str(self.port), "--rate", "1000000/1000000",
            "--log-format", "json", *presence,
        ]  # fmt: skip
        self.native = native
        self.proc = subprocess.Popen(
            argv,
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    async def started(self, within: float) -> None:
        deadline = time.monotonic() + within
        while True:
            with contextlib.suppress(OSError):
                _, w = await asyncio.open_connection("127.0.0.1", self.port)
                w.close()
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"arena serve did not start on port {self.port}")
            await asyncio.sleep(0.2)

    def instrument(self, *args: str) -> None:
        """callgrind_control on the server: ``-i on``/``-i off`` (count or not), ``-d`` (dump)."""
        if not self.native:
            subprocess.run(
                ["callgrind_control", *args, str(self.proc.pid)], check=True, capture_output=True
            )

    def instructions(self) -> int:
        """Instructions counted while instrumented: the largest ``totals:`` of the dumps
        (the one taken at the end of the games; the exit's adds nothing, as counting
        was off by then)."""
        total = 0
        for path in self.out.parent.glob(self.out.name + "*"):
            for line in path.read_text(errors="replace").splitlines():
                if line.startswith("totals:"):
                    total = max(total, int(line.split()[1]))
        return total

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def play(a: Player, b: Player, room: str | None, games: int, rematch: bool) -> str | None:
    """``games`` games of the pair: new rooms (left after each), or rematches in ``room``."""
    for _ in range(games):
        if rematch and room is not None:  # the players swap seats (PROTOCOL.md, Rematch)
            a.over, b.over = asyncio.Event(), asyncio.Event()
            a.seat, b.seat = b.seat, a.seat
            await a.request({"type": "offer_rematch", "room": room})
            await b.request({"type": "accept_rematch", "room": room})
        else:
            room = await open_game(a, b)
        await a.over.wait()
        await b.over.wait()
        if not rematch:
            for p in (a, b):
                await p.request({"type": "leave_room", "room": room})
            room = None
    return room


async def measure(srv: Server, args: argparse.Namespace) -> dict[str, Any]:
    await srv.started(600)
    stats = Stats()
    gate = asyncio.Semaphore(20)
    url = f"ws://127.0.0.1:{srv.port}"
    conns = [await open_ws(url, gate) for _ in range(2 * args.pairs)]
    for i, ws in enumerate(conns):
        await login(ws, f"instr{i}")
    players = [Player(ws, stats) for ws in conns]
    for p in players:
        p.window = Window(0.0, float("inf"))
    pairs = [(players[i], players[i + 1]) for i in range(0, len(players), 2)]
    rooms = await asyncio.gather(*(play(a, b, None, 1, args.rematch) for a, b in pairs))
    stats.count = 0
    srv.instrument("-i", "on")
    spy = Strace(srv.proc.pid, srv.out.with_suffix(".strace")) if args.strace else None
    cpu0 = cpu_seconds(srv.proc.pid)
    await asyncio.gather(
        *(
            play(a, b, room, args.games, args.rematch)
            for (a, b), room in zip(pairs, rooms, strict=True)
        )
    )
    cpu1 = cpu_seconds(srv.proc.pid)
    calls = spy.stop() if spy is not None else {}
    srv.instrument("-i", "off")
    srv.instrument("-d")
    for ws in conns:
        await ws.close()
    moves = stats.count
    if stats.errors or not moves:
        raise RuntimeError(f"the games went wrong: {moves} moves, errors {dict(stats.errors)}")
    return {
        "moves": moves,
        "cpu_us": (cpu1 - cpu0) / moves * 1e6,
        "syscalls": {name: n / moves for name, n in calls.items()},
    }


def run_one(root: Path, args: argparse.Namespace, presence: list[str], tmp: Path) -> dict[str, Any]:
    srv = Server(root, presence, args.native, tmp)
    try:
        res = asyncio.run(measure(srv, args))
    finally:
        srv.stop()
    if not args.native:
        res["instructions"] = srv.instructions() / res["moves"]
        if not res["instructions"]:
            found = sorted(p.name for p in tmp.iterdir())
            raise RuntimeError(f"no callgrind totals in {srv.out}*: {found}")
    return res


def label(root: Path) -> str:
    rev = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return f"{root} ({rev})" if rev else str(root)


def report(args: argparse.Namespace, runs: dict[str, list[dict[str, Any]]]) -> str:
    key = "cpu_us" if args.native else "instructions"
    unit = "CPU us per move" if args.native else "instructions per move"
    base = statistics.mean(r[key] for r in next(iter(runs.values())))
    lines = [
        f"{unit}, {'rematches in one room' if args.rematch else 'a new room each game'}, "
        f"{'Redis' if args.redis else 'memory'} presence; {args.pairs} pairs x {args.games} "
        f"games, {args.rounds} rounds",
        "",
        f"{'checkout':50} {'runs':>28} {'mean':>10} {'/ first':>8}",
    ]
    for name, rs in runs.items():
        each = ", ".join(f"{r[key]:,.0f}" for r in rs)
        mean = statistics.mean(r[key] for r in rs)
        # (a run too short for /proc's 10 ms CPU ticks can read 0: no ratio, not a crash)
        ratio = f"{mean / base:>8.3f}" if base else f"{'-':>8}"
        lines.append(f"{name:50} {each:>28} {mean:>10,.0f} {ratio}")
    if args.strace:
        lines += ["", "system calls per move (mean of the runs), the most frequent:"]
        for name, rs in runs.items():
            total: dict[str, float] = {}
            for r in rs:
                for call, n in r["syscalls"].items():
                    total[call] = total.get(call, 0.0) + n / len(rs)
            top = sorted(total.items(), key=lambda kv: -kv[1])[:6]
            lines.append(
                f"{name:50} {sum(total.values()):6.2f}: "
                + ", ".join(f"{call} {n:.2f}" for call, n in top)
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", type=Path, action="append", help="a checkout (repeatable; this one)")
    p.add_argument("--rounds", type=int, default=2, help="runs of each checkout (2)")
    p.add_argument("--pairs", type=int, default=10, help="pairs of players (10)")
    p.add_argument("--games", type=int, default=4, help="measured games per pair (4)")
    p.add_argument("--rematch", action="store_true", help="rematches in one room per pair")
    p.add_argument("--redis", metavar="URL", help="presence in Redis (a URL, or 'auto')")
    p.add_argument("--native", action="store_true", help="no valgrind: CPU time, not instructions")
    p.add_argument("--strace", action="store_true", help="with --native: system calls per move")
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = p.parse_args(argv)
    if not args.native and not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        p.error("valgrind (callgrind) is not installed here: install it, or use --native")
    if args.strace and not (args.native and shutil.which("strace")):
        p.error("--strace needs --native and strace on PATH")
    roots = [r.resolve() for r in (args.root or [ROOT])]
    raise_nofile()
    runs: dict[str, list[dict[str, Any]]] = {label(r): [] for r in roots}
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        url = stack.enter_context(redis_url(args.redis)) if args.redis else None
        for i in range(args.rounds):
            for root in roots if i % 2 == 0 else roots[::-1]:
                # (an old checkout's server may predate --store: memory was its only store)
                has_store = "--store" in (root / "server" / "cli.py").read_text()
                presence = ["--store", "memory"] if has_store else []
                if url is not None:  # a fresh key prefix per run
                    presence = ["--redis", url, "--redis-prefix", f"instr-{free_port()}:"]
                runs[label(root)].append(run_one(root, args, presence, Path(tmp)))
    print(report(args, runs))
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "runs": runs}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
