"""What ``arena bot`` adds to each move, and many games in one runner process.

A server (``arena serve``) and an opponent runner (``arena bot --level random``) run
as subprocesses; the measured runner runs in this process with an engine program
that answers at once (clients/examples/python/random_engine.py), ``--concurrency``
games at a time, ``--games`` in all, by quick match. For every move it records the
runner's own time (from routing the server's event to the game, until the move is
handed to the client library, without the engine) and the engine's (the pipe round
trip and its answer). Prints a table; ``--json PATH`` writes the figures.

    .venv/bin/python bench/bot.py --games 100 --concurrency 100
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
sys.path.insert(0, str(ROOT))

from clients.bot.brains import EngineBrain  # noqa: E402
from clients.bot.config import BotConfig  # noqa: E402
from clients.bot.runner import BotRunner  # noqa: E402

ENGINE = f"{sys.executable} {ROOT / 'clients' / 'examples' / 'python' / 'random_engine.py'}"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def bench(games: int, concurrency: int) -> dict[str, float]:
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
        nonlocal peak
        real_start(room, state)  # type: ignore[arg-type]
        peak = max(peak, len(runner.tasks))
        timings_of.append(runner.tasks[room])

    timings_of: list = []
    runner._start_game = start_game  # type: ignore[method-assign]
    began = time.monotonic()
    try:
        code = await asyncio.wait_for(runner.run(), 600)
    finally:
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
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    r = asyncio.run(bench(args.games, args.concurrency))
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
