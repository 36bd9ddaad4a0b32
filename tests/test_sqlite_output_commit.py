"""Output commit on the SQLite store: nobody hears of a change the disk did not keep.

A change returns at once and the frames that tell of it wait for its batch's commit
(server.write_batches.WriteBatches). Here the disk fills up mid-game (the database may
not grow by a page more: SQLite's ``max_page_count``, which fails a write with
``SQLITE_FULL`` as a full disk does): the event whose commit failed must reach no
client, its members are disconnected (1011), and every event a client did get is
in the database.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from test_server_resilience import start_game

from clients.client import ArenaError
from server.presence.sqlite_schema import DB_NAME


async def test_an_event_whose_commit_failed_reaches_nobody(arena: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = await arena.start(presence_url=f"sqlite:{data}", data_dir=str(data))
    room, clients, _ = await start_game(arena)
    ann = clients[0]
    # the database may not grow past its size now (it cannot shrink below it)
    server.presence._writer.write("PRAGMA max_page_count = 1")
    failed = None
    for i in range(400):  # chat lines are logged events: pages fill up fast
        try:
            await asyncio.wait_for(ann.chat(room, f"{i:03d} " + "x" * 300), 10)
        except ArenaError as exc:
            failed = exc
            break
    assert failed is not None, "the database never filled up"
    assert server.presence._writer.failed is not None
    for c in clients:  # both were to be told of the lost line: both are cut off
        await asyncio.wait_for(c.closed.wait(), 10)
        assert c.close_code == 1011, c.close_code
    with sqlite3.connect(data / DB_NAME) as db:
        on_disk = [s for (s,) in db.execute("SELECT seq FROM events WHERE room_id = ?", (room,))]
    assert on_disk == list(range(1, len(on_disk) + 1))
    for c in clients:
        seen = sorted(e.seq for e in c.events(room))
        assert seen and seen[-1] <= on_disk[-1], (seen[-1], on_disk[-1])
    # the refused line is in memory (the room went on) but not on disk, and nobody saw it
    logged = await server.presence.rooms.read_events(room)
    assert logged[-1]["seq"] > on_disk[-1]
