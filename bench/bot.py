"""What ``arena bot`` adds to each move, and many games in one runner process.

A server (``arena serve``) and an opponent runner (``arena bot`` with an engine that
answers after ``--opponent-ms``, so that games last and many are under way at once)
run as subprocesses; the measured runner runs in this process with an engine program
that answers at once (clients/examples/python/random_engine.py), ``--concurrency``
games at a time, ``--games`` in all, by quick match. For every move it records the
runner's own time (from routing the server's event to the game, until the move is
handed to the client library, without the engine) and the engine's (the pipe round
trip and its answer). Prints a table; ``--json PATH`` writes the figures.

    .venv/bin/python bench/bot.py --games 100 --concurrency 100

``bench/bot.py --slow-engine MS`` is the opponent's engine (standard library only).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

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


async def bench(games: int, concurrency: int, opponent_ms: int) -> dict[str, float]:
    # imported here: the same file is the opponent's engine, which must start fast
    sys.path.insert(0, str(ROOT))
    from clients.bot.brains import EngineBrain
    from clients.bot.config import BotConfig
    from clients.bot.runner import BotRunner

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
            "--log-format",
            "json",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = None
    assert server.stdout is not None
    for line in server.stdout:
        if m := re.search(r"ws://127\.0\.0\.1:\d+", line):
            url = m.group(0)
            break
    assert url, "arena serve did not start"
    opponent = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clients.cli",
            "bot",
            "--url",
            url,
            "--name",
            "opponent",
            "--level",
            "random",
            "--quick-match",
            "collapsi",
            "--games",
            str(games),
            "--concurrency",
            str(concurrency),
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
        cfg, lambda strike, log: EngineBrain(ENGINE, {}, strike, log, 30.0), io.StringIO()
    )
    timings: list[tuple[float, float]] = []
    peak = 0
    real_start = runner._start_game

    def start_game(room: str, state: object = None) -> None:
        real_start(room, state)  # type: ignore[arg-type]
        timings_of.append(runner.tasks[room])

    async def sample() -> None:  # games under way at once, every 20 ms
        nonlocal peak
        while True:
            peak = max(peak, len(runner.tasks))
            await asyncio.sleep(0.02)

    timings_of: list = []
    runner._start_game = start_game  # type: ignore[method-assign]
    began = time.monotonic()
    sampler = asyncio.create_task(sample())
    try:
        code = await asyncio.wait_for(runner.run(), 1200)
    finally:
        sampler.cancel()
        opponent.kill()
        server.terminate()
        server.wait(10)
    wall = time.monotonic() - began
    for task in timings_of:
        timings.extend(task.timings)
    own = [t for t, _ in timings]
    brain = [b for _, b in timings]
    finished = sum(1 for ln in runner.out.getvalue().splitlines() if ln.startswith("game "))  # type: ignore[attr-defined]
    return {
        "exit": code,
        "games": finished,
        "peak_concurrent": peak,
        "moves": len(own),
        "wall_s": wall,
        "runner_p50_ms": statistics.median(own) if own else 0.0,
        "runner_p99_ms": pct(own, 0.99),
        "runner_max_ms": max(own) if own else 0.0,
        "engine_p50_ms": statistics.median(brain) if brain else 0.0,
        "engine_p99_ms": pct(brain, 0.99),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--opponent-ms", type=int, default=3000)
    parser.add_argument("--slow-engine", type=int, metavar="MS", help=argparse.SUPPRESS)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    if args.slow_engine is not None:
        slow_engine(args.slow_engine)
        return 0
    r = asyncio.run(bench(args.games, args.concurrency, args.opponent_ms))
    print(
        "| games | peak at once | moves | wall s | runner p50 ms | runner p99 ms | "
        "runner max ms | engine p50 ms | engine p99 ms |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| {r['games']} | {r['peak_concurrent']} | {r['moves']} | {r['wall_s']:.1f} | "
        f"{r['runner_p50_ms']:.3f} | {r['runner_p99_ms']:.3f} | {r['runner_max_ms']:.3f} | "
        f"{r['engine_p50_ms']:.2f} | {r['engine_p99_ms']:.2f} |"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2))
    return 0 if r["exit"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
