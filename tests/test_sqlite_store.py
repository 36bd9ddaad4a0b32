"""The SQLite store's own promises, on real files: what a reopened data dir holds, its
schema versions, the old record files it takes in, and the data dirs ``arena serve``
refuses, each with one clear line and a non-zero exit (a real subprocess)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import msgpack
import pytest
from arena_process import run_arena, serve_command, start_node

from server.presence.sqlite import SqlitePresence
from server.presence.sqlite_schema import MIGRATIONS, SCHEMA_VERSION
from tests.presence_appends import append_packed


def serve_refused(data: Path) -> subprocess.CompletedProcess[str]:
    """``arena serve`` on ``data``, run to its end (logging JSON lines)."""
    return run_arena("serve", "--port", "0", "--log-format", "json", "--data-dir", str(data))


def error_lines(stderr: str) -> list[str]:
    """What a person reads besides the server's JSON log lines (its ``settings``)."""
    out = []
    for line in stderr.strip().splitlines():
        try:
            json.loads(line)
        except ValueError:
            out.append(line)
    return out


async def opened(data: Path) -> SqlitePresence:
    p = SqlitePresence(data)
    await p.start()
    return p


async def test_a_reopened_data_dir_holds_what_was_acknowledged(tmp_path: Path) -> None:
    data = tmp_path / "data"
    p = await opened(data)
    await p.sessions.create("s1", "tok", {"player": {"name": "ann"}, "rooms": ["r1"]}, ttl=60)
    assert await p.names.claim("Ann", "pw")
    assert await p.rooms.open("r1", "n1", 5, {"room_id": "r1", "invite": "abc"})
    await p.lobby.upsert("r1", {"room": "r1"})
    for seq in (1, 2):
        packed = msgpack.packb({"type": "x", "seq": seq})
        assert await append_packed(p, "r1", {"type": "x", "seq": seq}, packed, seq, "n1") == seq
    await p.ratings.put("collapsi", {"ann": {"rating": 1612.5}})
    await p.records.put("g1", {"game": "collapsi", "players": ["ann", "bob"]})
    await p.close()
    p = await opened(data)  # what a restart finds
    try:
        assert await p.sessions.resume("tok") == (
            "s1",
            {"player": {"name": "ann"}, "rooms": ["r1"]},
        )
        assert not await p.names.claim("ann", "other")
        assert await p.rooms.get("r1") == {"room_id": "r1", "invite": "abc"}
        assert await p.rooms.find_invite("abc") == "r1"
        assert await p.leases.owner("r1") is None  # the previous run's lease: taken over
        assert [e["seq"] for e in await p.rooms.read_events("r1")] == [1, 2]
        assert await p.lobby.entries() == [{"room": "r1"}]
        assert (await p.ratings.get("collapsi", "ann")) == {"rating": 1612.5}
        assert [r["game_id"] for r in await p.records.latest(player="bob")] == ["g1"]
        await p.rooms.drop_closed("r1")
    finally:
        await p.close()
    p = await opened(data)
    try:
        assert await p.rooms.get("r1") is None and await p.rooms.read_events("r1") == []
        assert await p.lobby.entries() == []
    finally:
        await p.close()


async def test_an_older_schema_is_migrated_and_a_newer_one_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    conn = sqlite3.connect(data / "arena.db")
    for statement in MIGRATIONS[1]:  # a data dir of schema version 1, with a record
        conn.execute(statement)
    record = {"game": "collapsi", "players": ["ann", "bob"]}
    conn.execute("INSERT INTO records VALUES ('g1', 1, 'collapsi', ?)", (json.dumps(record),))
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    p = await opened(data)
    try:
        assert await p.records.latest(player="ann") == [{"game_id": "g1", "record": record}]
    finally:
        await p.close()
    conn = sqlite3.connect(data / "arena.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")  # as a newer server leaves it
    conn.commit()
    conn.close()
    done = serve_refused(data)
    assert done.returncode == 2
    assert error_lines(done.stderr) == [
        f"arena serve: error: {data / 'arena.db'} has schema version {SCHEMA_VERSION + 1}, "
        f"newer than this server knows ({SCHEMA_VERSION}): run the newer server, "
        "or restore an older backup"
    ]


async def test_record_files_of_an_older_server_are_taken_in(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "records").mkdir(parents=True)
    for i, game_id in enumerate(("old1", "old2")):
        record = {"game": "collapsi", "players": ["ann"], "ended_at": i}
        (data / "records" / f"{game_id}.json").write_text(json.dumps(record))
    (data / "records" / "half.json.tmp").write_text('{"game": "col')  # a crash mid-write
    p = await opened(data)
    try:
        assert [r["game_id"] for r in await p.records.latest()] == ["old2", "old1"]
        assert p.opened["records_imported"] == 2
    finally:
        await p.close()
    assert not (data / "records").exists()
    assert sorted(f.name for f in (data / "records.imported").iterdir()) == [
        "old1.json",
        "old2.json",
    ]


async def test_a_second_server_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = await start_node(serve_command("--data-dir", str(data)))
    try:
        done = serve_refused(data)
        assert done.returncode == 2
        lines = error_lines(done.stderr)
        assert len(lines) == 1, done.stderr
        assert lines[0] == (
            f"arena serve: error: data dir {data} is in use by another arena server "
            f"(pid {first.proc.pid}); stop it first or give this one another --data-dir"
        )
    finally:
        first.kill9()
        await first.proc.wait()
    # a crashed server's lock is gone with it
    again = await start_node(serve_command("--data-dir", str(data)))
    again.kill9()
    await again.proc.wait()


@pytest.mark.parametrize("damage", ["not_a_database", "unwritable"])
def test_a_corrupt_or_unwritable_data_dir_stops_the_start_in_one_line(
    tmp_path: Path, damage: str
) -> None:
    if damage == "not_a_database":
        data = tmp_path / "data"
        data.mkdir()
        (data / "arena.db").write_bytes(b"this is no database" * 100)
        expected = "arena.db is not a readable arena database"
    else:
        (tmp_path / "file").write_text("a file where a folder should be")
        data = tmp_path / "file" / "data"
        expected = "cannot use it: Not a directory"
    done = serve_refused(data)
    assert done.returncode == 2
    lines = error_lines(done.stderr)
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"arena serve: error: data dir {data}")
    assert expected in lines[0]
