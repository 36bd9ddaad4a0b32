#!/usr/bin/env python3
"""A well-behaved engine that thinks in a thread, as ENGINE_PROTOCOL.md allows: it
answers ``isready`` at once while thinking, and ``stop`` makes it answer at once. After
``go`` it answers the first legal move it was given when its thinking time is up
(argument 1, seconds). For the tests of searches the runner stops (a game ended first).
"""

from __future__ import annotations

import sys
import threading

_lock = threading.Lock()


def say(text: str) -> None:
    with _lock:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


class Search:
    def __init__(self, move: str, think: float) -> None:
        self.move, self.think, self.stopped = move, think, threading.Event()
        threading.Thread(target=self.run, daemon=True).start()

    def run(self) -> None:
        self.stopped.wait(self.think)
        say("bestmove " + self.move)


def main() -> None:
    think = float(sys.argv[1])
    search: Search | None = None
    legal: list[str] = []
    for line in sys.stdin:
        words = line.split()
        word = words[0] if words else ""
        if word == "arena":
            say("id name thinker")
            say("arenaok 1")
        elif word == "isready":
            say("readyok")
        elif word == "legal":
            legal = words[1:]
        elif word == "go":
            search = Search(legal[0] if legal else "resign", think)
        elif word == "stop" and search is not None:
            search.stopped.set()
        elif word == "quit":
            return


if __name__ == "__main__":
    main()
