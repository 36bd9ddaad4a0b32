"""How long starting an engine process holds ``arena bot``'s loop: asyncio's own
``create_subprocess_exec`` against ``clients.engines.spawn.spawn`` (Popen in a worker
thread), from a process with a heap the size of a busy runner's.

A task ticks every 0.2 ms while ``--starts`` programs are started one after another (each
waited for); the longest gaps between ticks are what the loop was held. The two ways
alternate ``--rounds`` times. Prints a table; ``--json PATH`` writes the figures.

    .venv/bin/python bench/engine_spawn.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from clients.engines.spawn import spawn


async def _ticker(stop: asyncio.Event, gaps: list[float]) -> None:
    last = time.perf_counter()
    while not stop.is_set():
        await asyncio.sleep(0.0002)
        now = time.perf_counter()
        gaps.append((now - last) * 1000)
        last = now


async def _round(way: str, argv: list[str], starts: int) -> dict[str, float]:
    stop, gaps, took = asyncio.Event(), [], []
    ticker = asyncio.create_task(_ticker(stop, gaps))
    await asyncio.sleep(0.01)
    pipe = subprocess.PIPE
    for _ in range(starts):
        began = time.perf_counter()
        if way == "asyncio":
            proc = await asyncio.create_subprocess_exec(*argv, stdin=pipe, stdout=pipe, stderr=pipe)
        else:
            proc = await spawn(argv)  # type: ignore[assignment]
        took.append((time.perf_counter() - began) * 1000)
        await proc.wait()
        assert proc.stdin is not None
        proc.stdin.close()
        await asyncio.sleep(0.005)
    stop.set()
    await ticker
    gaps.sort()
    return {
        "start_median_ms": statistics.median(took),
        "held_max_ms": gaps[-1],
        "held_p99_ms": gaps[int(len(gaps) * 0.99)],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--heap-mb", type=int, default=50, help="objects kept meanwhile")
    parser.add_argument("--program", default="/bin/true")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    ballast = [list(range(50)) for _ in range(args.heap_mb * 4000)]  # ~1 MB per 4000
    rows = []
    for i in range(args.rounds):
        for way in ("asyncio", "thread"):
            r = asyncio.run(_round(way, [args.program], args.starts))
            rows.append({"round": i + 1, "way": way, **r})
    del ballast
    print("| round | way | start median ms | loop held: max ms | p99 ms |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['round']} | {r['way']} | {r['start_median_ms']:.2f} | "
            f"{r['held_max_ms']:.2f} | {r['held_p99_ms']:.2f} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
