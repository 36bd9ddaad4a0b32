"""The SQLite data dir: its lock, its schema versions and migrations, clear start errors.

A data dir holds ``arena.db`` (SQLite, WAL mode) and ``lock``. One server at a time:
the lock is an exclusive ``flock`` on ``lock``, held as long as the server runs (the
kernel releases it when the process dies, even by ``kill -9``, so a crash never leaves
a stale lock behind). The schema version is SQLite's ``user_version``; a newer server
applies the missing :data:`MIGRATIONS` in one transaction, an older one refuses a
newer file. Every problem found while opening is a :class:`DataDirError` with one
line that says what to do, never a traceback (``arena serve`` prints it and exits).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from server.presence.base import PresenceError

DB_NAME = "arena.db"
LOCK_NAME = "lock"

#: schema version -> the statements that bring version - 1 up to it
MIGRATIONS: dict[int, list[str]] = {
    1: [
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, token_hash TEXT NOT NULL,"
        " data TEXT NOT NULL, expires REAL NOT NULL)",
        "CREATE INDEX sessions_token ON sessions (token_hash)",
        "CREATE TABLE names (key TEXT PRIMARY KEY, secret_hash TEXT NOT NULL)",
        "CREATE TABLE lobby (room_id TEXT PRIMARY KEY, packed BLOB NOT NULL)",
        "CREATE TABLE rooms (room_id TEXT PRIMARY KEY, meta TEXT NOT NULL)",
        "CREATE TABLE events (room_id TEXT NOT NULL, seq INTEGER NOT NULL,"
        " packed BLOB NOT NULL, PRIMARY KEY (room_id, seq)) WITHOUT ROWID",
        "CREATE TABLE ratings (game TEXT NOT NULL, player TEXT NOT NULL,"
        " data TEXT NOT NULL, PRIMARY KEY (game, player)) WITHOUT ROWID",
        # n: the order of puts (a re-put counts as newest)
        "CREATE TABLE records (game_id TEXT PRIMARY KEY, n INTEGER NOT NULL,"
        " game TEXT, data TEXT NOT NULL)",
        "CREATE INDEX records_n ON records (n)",
    ],
    # version 2: records are listed by player through an index, not by reading them all
    2: [
        "CREATE TABLE record_players (player TEXT NOT NULL, game_id TEXT NOT NULL,"
        " PRIMARY KEY (player, game_id)) WITHOUT ROWID",
        "INSERT OR IGNORE INTO record_players (player, game_id)"
        " SELECT j.value, r.game_id FROM records r, json_each(r.data, '$.players') j"
        " WHERE json_valid(r.data) AND json_type(r.data, '$.players') = 'array'",
    ],
}
SCHEMA_VERSION = max(MIGRATIONS)


class DataDirError(PresenceError):
    """The data dir cannot be used (locked, unwritable, corrupt, newer): one clear line."""


def lock_data_dir(data_dir: Path) -> int:
    """Create the dir if needed and take its lock; the open lock file's descriptor."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(data_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise DataDirError(f"data dir {data_dir}: cannot use it: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise DataDirError(
            f"data dir {data_dir} is in use by another arena server (pid {holder}); "
            "stop it first or give this one another --data-dir"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def unlock_data_dir(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)  # (closing releases the flock)


#: every connection's settings (the writer process's too, server.presence.sqlite_child)
PRAGMAS = ("journal_mode=WAL", "synchronous=FULL")


def connect(path: Path) -> sqlite3.Connection:
    """A connection in WAL mode, every commit on disk before it returns (``FULL``)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=5)
    for pragma in PRAGMAS:
        conn.execute(f"PRAGMA {pragma}")
    return conn


def open_database(data_dir: Path) -> sqlite3.Connection:
    """Open (or create) the data dir's database at the current schema version."""
    path = data_dir / DB_NAME
    try:
        if not os.access(data_dir, os.W_OK):
            raise DataDirError(f"data dir {data_dir}: not writable by this user")
        conn = connect(path)
        migrate(conn, path)
        return conn
    except sqlite3.DatabaseError as exc:
        raise DataDirError(
            f"data dir {data_dir}: {path.name} is not a readable arena database ({exc}); "
            "restore it from a backup (arena admin restore) or move it away"
        ) from None
    except (sqlite3.Error, OSError) as exc:
        raise DataDirError(f"data dir {data_dir}: cannot open {path.name}: {exc}") from None


def migrate(conn: sqlite3.Connection, path: Path, target: int = SCHEMA_VERSION) -> int:
    """Bring the schema up to ``target``; the version found. Refuses a newer file."""
    found = conn.execute("PRAGMA user_version").fetchone()[0]
    if found > SCHEMA_VERSION:
        raise DataDirError(
            f"{path} has schema version {found}, newer than this server knows "
            f"({SCHEMA_VERSION}): run the newer server, or restore an older backup"
        )
    if found < target:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for version in range(found + 1, target + 1):
                for statement in MIGRATIONS[version]:
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {int(target)}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return found


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
