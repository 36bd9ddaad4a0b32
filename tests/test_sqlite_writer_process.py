"""The SQLite store's writer process (server.presence.sqlite_writer) lives and dies with
its server: a real ``arena serve`` on a real data dir.

- Ctrl-C in a terminal (SIGINT to the whole process group) stops the server cleanly:
  the writer process leaves it to the server, which commits what is left first.
- ``kill -9`` of the server: its writer process ends too (it reads the end of its
  input), so nothing is left holding the database.
- The writer process killed under a running server: the store has failed; nothing
  more is acknowledged (a change is refused, or its frames dropped and their
  connections closed with 1011), and the server says so in one log line, without a
  traceback.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from arena_process import serve_command, start_node
from test_durable_restart import node, player
from test_multinode import start_game

from clients.client import ArenaError, ConnectionLost


def writer_of(pid: int) -> int:
    """The pid of ``pid``'s writer process (its child running sqlite_child.py)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid and b"sqlite_child" in cmd:
            return int(entry)
    raise AssertionError(f"no writer process under {pid}")


async def gone(pid: int, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        if stat[stat.rindex(")") + 2] == "Z":  # (ended, not yet reaped by its parent)
            return True
        await asyncio.sleep(0.05)
    return False


async def test_ctrl_c_to_the_process_group_stops_the_server_cleanly(tmp_path: Path) -> None:
    data = tmp_path / "data"
    n = await start_node(serve_command("--data-dir", str(data)))
    ann, bob = await player(n.url, "ann"), await player(n.url, "bob")
    room = await start_game(ann, bob)
    await ann.chat(room, "hello")
    writer = writer_of(n.proc.pid)
    # what a terminal does on Ctrl-C: SIGINT to every process of the foreground group
    os.kill(writer, signal.SIGINT)
    n.proc.send_signal(signal.SIGINT)
    assert await asyncio.wait_for(n.proc.wait(), 30) == 0
    await n.drainer  # type: ignore[misc]
    assert n.events("store_write_failed") == []
    assert n.events("arena_stopped")
    assert await gone(writer)
    for c in (ann, bob):
        await c.close()


async def test_kill_9_of_the_server_ends_its_writer(tmp_path: Path) -> None:
    async with node(tmp_path / "data") as n:
        writer = writer_of(n.proc.pid)
        n.kill9()
        await n.proc.wait()
        assert await gone(writer)


async def test_the_writer_killed_fails_the_store_without_a_traceback(tmp_path: Path) -> None:
    async with node(tmp_path / "data") as n:
        ann, bob = await player(n.url, "ann"), await player(n.url, "bob")
        room = await start_game(ann, bob)
        os.kill(writer_of(n.proc.pid), signal.SIGKILL)
        refused = None
        try:  # the next change cannot be committed: nobody is told of it
            await asyncio.wait_for(ann.chat(room, "lost"), 10)
        except (ArenaError, ConnectionLost) as exc:
            refused = exc
        # refused outright (the failure seen first), or its frames dropped and their
        # connections closed (1011): either way no client heard of it
        assert refused is not None
        for c in (ann, bob):
            assert c.close_code in (None, 1011), c.close_code
            assert all(getattr(e, "text", None) != "lost" for e in c.events(room))
        failed = n.events("store_write_failed")
        assert failed and "writer process exited" in failed[0]["error"]
        assert not any("exception" in e for e in n.lines), [e for e in n.lines if "exception" in e]


def test_a_frame_the_writer_cannot_read_is_one_json_log_line(tmp_path: Path) -> None:
    """The writer's own failure reads as the server's logs do (one JSON line, no
    traceback among them), and it exits non-zero so the server sees it gone."""
    child = Path(__file__).parent.parent / "server" / "presence" / "sqlite_child.py"
    garbage = b"not a pickle"
    done = subprocess.run(
        [sys.executable, "-I", str(child), str(tmp_path / "db.sqlite")],
        input=len(garbage).to_bytes(4, "big") + garbage,
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 1
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    line = json.loads(lines[0])
    assert line["event"] == "sqlite_writer_failed" and line["level"] == "error"
    assert "UnpicklingError" in line["error"]
