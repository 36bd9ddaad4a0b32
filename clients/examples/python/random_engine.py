#!/usr/bin/env python3
"""A complete engine for the arena's engine protocol (clients/ENGINE_PROTOCOL.md).

Standard library only: it plays every game and variant by picking one of the
legal moves the runner sends (``legal ...``) at random. Run it with
``arena bot --engine "python3 random_engine.py"`` or check it with
``arena engine check "python3 random_engine.py"``.
"""

import random
import sys


def main() -> None:
    rng = random.Random(0)
    legal: list[str] = []
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command = words[0]
        if command == "arena":  # the handshake: who we are, our options, the version
            print("id name random-engine")
            print("id author Collapsi Arena examples")
            print("option name Seed type spin default 0 min 0 max 1000000")
            print("arenaok 1")
        elif command == "setoption" and words[1:3] == ["name", "Seed"] and len(words) == 5:
            rng.seed(int(words[4]) if words[4].isdigit() else 0)
        elif command == "isready":
            print("readyok")
        elif command == "legal":
            legal = words[1:]
        elif command == "go":
            move = rng.choice(legal) if legal else "resign"
            print(f"info depth 1 nodes {len(legal)} string {len(legal)} legal moves")
            print(f"bestmove {move}")
        elif command == "quit":
            break
        # everything else (newgame, position, stop, gameover, unknown lines) needs no answer
        sys.stdout.flush()


if __name__ == "__main__":
    main()
