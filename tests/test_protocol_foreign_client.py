"""A client in another language, written from ``protocol/PROTOCOL.md`` alone, plays a game.

``clients/examples/node/arena-bot.mjs`` is a Node.js bot (built-in WebSocket, JSON
text frames, no packages). Against a real ``arena serve`` subprocess, one instance
creates a Collapsi room and prints its id, a second joins it, both play legal moves to
the end and print the same result.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "clients" / "examples" / "node" / "arena-bot.mjs"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH")


def node_argv() -> list[str]:
    """Plain ``node``, as a user runs it: on Node 20 the script itself adds the flag its
    global WebSocket needs (issue 16: it failed there with "no global WebSocket")."""
    assert NODE is not None
    return [NODE]


class Serve:
    """``arena serve`` on a free loopback port (``--port 0``; the URL is in its log)."""

    def __init__(self) -> None:
        argv = [sys.executable, "-m", "clients.cli", "serve", "--host", "127.0.0.1", "--port", "0"]
        argv += ["--store", "memory"]  # (nothing to keep; SQLite by default)
        self.proc = subprocess.Popen(
            [*argv, "--log-format", "json"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.log: list[str] = []
        self.url: str | None = None
        self.listening = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()
        if not self.listening.wait(20) or self.url is None:
            self.close()
            raise AssertionError("arena serve did not start listening:\n" + "".join(self.log))

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            if self.url is None:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("event") == "listening":
                    self.url = entry["url"]
                    self.listening.set()
        self.listening.set()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def result_of(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith("result ")]
    assert len(lines) == 1, stdout
    return json.loads(lines[0].removeprefix("result "))


@pytest.mark.timeout(30)
def test_node_bots_play_a_collapsi_game_to_the_end() -> None:
    node = node_argv()
    server = Serve()
    creator = joiner = None
    try:
        assert server.url is not None
        creator = subprocess.Popen(
            [*node, str(BOT), server.url, "--timeout", "20"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert creator.stdout is not None
        first = creator.stdout.readline()  # "room <id>", printed once the room exists
        assert first.startswith("room "), (first, creator.stderr.read() if creator.poll() else "")
        room = first.split()[1]

        joiner = subprocess.Popen(
            [*node, str(BOT), server.url, "--join", room, "--timeout", "20"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        j_out, j_err = joiner.communicate(timeout=25)
        c_rest, c_err = creator.communicate(timeout=25)
        c_out = first + c_rest
        assert joiner.returncode == 0, (j_out, j_err, "".join(server.log))
        assert creator.returncode == 0, (c_out, c_err, "".join(server.log))
    finally:
        for proc in (creator, joiner):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(5)
        server.close()

    assert j_out.splitlines()[0] == f"room {room}"
    mine, theirs = result_of(c_out), result_of(j_out)
    assert (mine["you"], theirs["you"]) == (0, 1)
    assert mine["room"] == theirs["room"] == room
    # the same game over, seen from both seats
    for key in ("winner", "order", "reason", "record"):
        assert mine[key] == theirs[key], (key, mine, theirs)
    assert mine["winner"] in (0, 1)
    assert sorted(mine["order"]) == [0, 1]
    assert mine["order"][0] == mine["winner"]
    assert mine["reason"] == "no_moves"
    assert mine["record"]
