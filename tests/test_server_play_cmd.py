"""``arena play`` as a real subprocess: a person plays through stdin, another one watches."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


async def arena_play(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clients.cli",
        "play",
        *args,
        cwd=ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def read_line(proc: asyncio.subprocess.Process, lines: list[str]) -> str:
    raw = await asyncio.wait_for(proc.stdout.readline(), 20)  # type: ignore[union-attr]
    assert raw, f"arena play ended early: {lines[-5:]}"
    lines.append(raw.decode().rstrip("\n"))
    return lines[-1]


@pytest.mark.timeout(90)
async def test_play_and_watch_from_the_terminal(arena: Any) -> None:
    await arena.start()
    player = await arena_play("--url", arena.url, "--name", "ann", "--create", "collapsi")
    out: list[str] = []
    line = await read_line(player, out)
    assert line.startswith("room ")
    room = line.split()[1]
    watcher = await arena_play("--url", arena.url, "--watch", room)
    seen: list[str] = []
    await read_line(watcher, seen)  # the watcher is in once it prints anything
    bob = await arena.client("bob")
    await bob.join(room)
    await bob.take_seat(room, 1)
    await bob.ready(room)

    async def bob_plays() -> None:
        while True:
            ev = await bob.next(type=("game_started", "move_made", "game_over"), room=room)
            if ev.type == "game_over":
                return
            if ev.to_move == 1:
                await bob.move(room, ev.legal_moves[-1])

    bob_task = asyncio.create_task(bob_plays())
    ann_moves = 0
    while True:
        line = await read_line(player, out)
        if line.startswith("your move; legal: "):
            legal = line.removeprefix("your move; legal: ").split()
            if ann_moves == 0:
                player.stdin.write(b"99\n")  # type: ignore[union-attr]
                assert (await read_line(player, out)).startswith("refused: ")
                await read_line(player, out)
            player.stdin.write(f"{legal[0]}\n".encode())  # type: ignore[union-attr]
            ann_moves += 1
        if line.startswith("game over: "):
            break
    await asyncio.wait_for(bob_task, 20)
    assert await asyncio.wait_for(player.wait(), 20) == 0
    while not (await read_line(watcher, seen)).startswith("game over: "):
        pass
    assert await asyncio.wait_for(watcher.wait(), 20) == 0
    assert ann_moves >= 1
    plays = [x for x in seen if " plays " in x]
    assert plays == [x for x in out if " plays " in x]
    assert seen[-1] == out[-1]


async def test_list_rooms_from_the_terminal(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann")
    state = await ann.create_room("collecto", seat=0)
    proc = await arena_play("--url", arena.url, "--list")
    stdout, _ = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 0
    assert f"{state.room}  collecto/standard/base  waiting  [ann, -]" in stdout.decode()
