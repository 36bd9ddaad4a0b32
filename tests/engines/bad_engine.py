#!/usr/bin/env python3
"""A misbehaving engine for the tests: ``bad_engine.py MODE`` (standard library only).

Modes: ``crash`` (exits on the first go), ``crash-once`` (exits on the first go of its
first process only: marks a file named by ARENA_BAD_MARK), ``hang`` (never answers go,
ignores stop), ``slow`` (answers go only after stop), ``illegal`` (answers a move
that is not legal), ``garbage`` (prints nonsense instead of bestmove), ``nohandshake``
(never says arenaok), ``refuse`` (answers newgame with error), ``refuse-only`` (the
same, and no readyok for the isready after it), ``collapsi-only``
(answers a Collecto newgame with error, plays the others), ``fragile`` (dies on
a line it does not know), ``pause`` (a legal move, but only 0.15 s after each go:
games long enough for a spectator to join while they run).
"""

import os
import sys
import time

mode = sys.argv[1]
legal: list[str] = []
skip_ready = False
for line in sys.stdin:
    words = line.split()
    cmd = words[0] if words else ""
    if cmd == "arena":
        if mode != "nohandshake":
            print("id name bad-" + mode)
            print("arenaok 1")
    elif cmd == "newgame" and mode in ("refuse", "refuse-only"):
        print("error I play nothing")
        skip_ready = mode == "refuse-only"
    elif cmd == "newgame" and mode == "collapsi-only" and words[2] != "collapsi":
        print("error I play Collapsi only")
    elif cmd == "isready":
        if not skip_ready:
            print("readyok")
        skip_ready = False
    elif cmd == "legal":
        legal = words[1:]
    elif cmd == "go":
        if mode == "crash":
            sys.exit(3)
        if mode == "crash-once":
            mark = os.environ["ARENA_BAD_MARK"]
            if not os.path.exists(mark):
                open(mark, "w").close()
                print("dying on purpose", file=sys.stderr, flush=True)
                os._exit(4)
        if mode == "hang":
            time.sleep(3600)
        if mode == "pause":
            time.sleep(0.15)
        if mode == "illegal":
            print("bestmove 999")
        elif mode == "garbage":
            print("I think the best move is over there")
        elif mode != "slow":
            print("bestmove " + legal[0])
    elif cmd == "stop" and mode == "slow":
        print("bestmove " + legal[0])
    elif cmd == "quit":
        break
    elif (
        cmd not in ("setoption", "newgame", "position", "gameover", "stop", "")
        and mode == "fragile"
    ):
        sys.exit(5)
    sys.stdout.flush()
