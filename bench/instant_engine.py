#!/usr/bin/env python3
"""bench/bot.py's measured engine: answers at once and says how long it took.

An engine-protocol program (clients/ENGINE_PROTOCOL.md, standard library only) that
plays a random legal move the moment it reads ``go``. Its answer is preceded by
``info string stamp READ WRITE``: CLOCK_MONOTONIC nanoseconds (one clock for every
process on the machine) when its ``go`` line was read and just before its answer is
written. The engine's own time per move is WRITE - READ; everything else between the
server's frame and the runner's move (the pipe both ways, the engine's wake-up, the
runner's loop) is counted as the runner's. ``--think-ms MS``: it waits before answering,
MS on average, uniformly between half and one and a half times MS (the bench's opponent,
whose slowness keeps many games under way at once; at a fixed wait, games started
together would bring their moves to the runner in the same millisecond, every time).
"""

import random
import sys
import time

MONO = time.CLOCK_MONOTONIC


def main() -> None:
    think = int(sys.argv[2]) / 1000 if sys.argv[1:2] == ["--think-ms"] else 0.0
    rng = random.Random(0)
    waits = random.Random()  # (each process its own: the games' moves spread out)
    legal: list[str] = []
    out = sys.stdout
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command = words[0]
        if command == "go":
            read = time.clock_gettime_ns(MONO)
            if think:
                time.sleep(think * waits.uniform(0.5, 1.5))
            move = rng.choice(legal) if legal else "resign"
            text = f"info string stamp {read} {{}}\nbestmove {move}\n"
            out.write(text.format(time.clock_gettime_ns(MONO)))
            out.flush()
        elif command == "legal":
            legal = words[1:]
        elif command == "isready":
            out.write("readyok\n")
            out.flush()
        elif command == "arena":
            out.write("id name instant\narenaok 1\n")
            out.flush()
        elif command == "quit":
            break


if __name__ == "__main__":
    main()
