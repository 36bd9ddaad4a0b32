"""``arena admin``: back up, restore and export the data dir of the SQLite store.

- ``backup OUT``: a consistent copy of the database through SQLite's online backup
  API, safe while the server runs (WAL: the server goes on writing meanwhile), with
  the tournaments (their own database, ``tournaments.sqlite3``) copied into it too.
- ``restore BACKUP``: the data dir's databases replaced by a backup's, only while no
  server runs on it (its lock is taken for the time of the restore).
- ``export``: every finished game's record as JSON lines, oldest first, each
  ``{"game_id": ..., "record": {...}}`` (what ``get_record`` serves).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from pathlib import Path

from clients.cli import CliError
from server.presence.sqlite_schema import (
    DB_NAME,
    SCHEMA_VERSION,
    DataDirError,
    lock_data_dir,
    unlock_data_dir,
)
from server.tournaments.store import DB_FILE as TOURNAMENTS_DB
from server.tournaments.store import SCHEMA as TOURNAMENTS_SCHEMA


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("ARENA_DATA_DIR", "arena-data"),
        help="the server's data dir ($ARENA_DATA_DIR, default ./arena-data)",
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    backup = sub.add_parser("backup", help="copy the database to FILE (safe while serving)")
    backup.add_argument("file", type=Path)
    restore = sub.add_parser("restore", help="replace the database by a backup (server stopped)")
    restore.add_argument("file", type=Path)
    export = sub.add_parser("export", help="finished games' records as JSON lines")
    export.add_argument("--out", type=Path, help="write here instead of standard output")


def _open_existing(path: Path) -> sqlite3.Connection:
    """An existing arena database, read-only, that this server can read."""
    if not path.is_file():
        raise CliError(f"{path}: no such database")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        conn.execute("SELECT count(*) FROM records").fetchone()
    except sqlite3.Error as exc:
        raise CliError(f"{path} is not a readable arena database ({exc})") from None
    if not 0 < version <= SCHEMA_VERSION:
        conn.close()
        raise CliError(f"{path} has schema version {version}; this arena reads 1-{SCHEMA_VERSION}")
    return conn


def _copy(src: sqlite3.Connection, dst_path: Path) -> None:
    dst = sqlite3.connect(dst_path)
    try:
        src.backup(dst)
    except sqlite3.Error as exc:
        raise CliError(f"cannot write {dst_path}: {exc}") from None
    finally:
        dst.close()


def run(args: argparse.Namespace) -> int:
    data_dir = Path(args.data_dir)
    db = data_dir / DB_NAME
    if args.action == "backup":
        if args.file.exists():
            raise CliError(f"{args.file} exists already: give a new file")
        src = _open_existing(db)
        _copy(src, args.file)
        src.close()
        _backup_tournaments(data_dir / TOURNAMENTS_DB, args.file)
        print(f"backed up {db} to {args.file}")
    elif args.action == "restore":
        src = _open_existing(args.file)
        try:
            fd = lock_data_dir(data_dir)
        except DataDirError as exc:
            raise CliError(str(exc)) from None
        try:
            _copy(src, db)
            _restore_tournaments(db, data_dir / TOURNAMENTS_DB)
        finally:
            unlock_data_dir(fd)
            src.close()
        print(f"restored {db} from {args.file}")
    else:
        _export(_open_existing(db), args.out)
    return 0


def _tournaments_table(schema: str) -> str:
    return TOURNAMENTS_SCHEMA.replace("EXISTS tournaments", f"EXISTS {schema}.tournaments")


def _backup_tournaments(live: Path, backup: Path) -> None:
    """The tournaments' table, copied into the backup file (one file to keep)."""
    if not live.is_file():
        return
    conn = sqlite3.connect(backup)
    try:
        conn.execute("ATTACH DATABASE ? AS t", (f"file:{live}?mode=ro",))
        with conn:
            conn.execute(
                TOURNAMENTS_SCHEMA.replace("EXISTS tournaments", "EXISTS main.tournaments")
            )
            conn.execute("INSERT INTO main.tournaments SELECT * FROM t.tournaments")
    except sqlite3.Error as exc:
        raise CliError(f"cannot copy the tournaments of {live}: {exc}") from None
    finally:
        conn.close()


def _restore_tournaments(db: Path, target: Path) -> None:
    """A restored database's tournaments table goes back to its own database."""
    conn = sqlite3.connect(db)
    try:
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tournaments'"
        ).fetchone()
        if not found:
            return
        for suffix in ("", "-wal", "-shm"):
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        conn.execute("ATTACH DATABASE ? AS t", (str(target),))
        with conn:
            conn.execute(_tournaments_table("t"))
            conn.execute("INSERT INTO t.tournaments SELECT * FROM main.tournaments")
            conn.execute("DROP TABLE main.tournaments")
    except sqlite3.Error as exc:
        raise CliError(f"cannot restore the tournaments into {target}: {exc}") from None
    finally:
        conn.close()


def _export(conn: sqlite3.Connection, out: Path | None) -> None:
    stream = sys.stdout if out is None else open(out, "w")  # noqa: SIM115 - closed below
    try:
        for game_id, data in conn.execute("SELECT game_id, data FROM records ORDER BY n"):
            line = {"game_id": game_id, "record": json.loads(data)}
            stream.write(json.dumps(line, separators=(",", ":")) + "\n")
    except BrokenPipeError:  # (| head): the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        conn.close()
        if out is not None:
            stream.close()
