"""Records in the SQLite store: the statements that keep one, and the record files of
an older server (``DATA_DIR/records/*.json``, one per game) taken into the database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import structlog

from server.presence.base import JSON
from server.presence.sqlite_schema import dumps

log = structlog.get_logger("arena.store")


def import_record_files(conn: sqlite3.Connection, data_dir: Path) -> int:
    """Records an older server wrote as files (``records/*.json``) move into the
    database; the folder is renamed ``records.imported``, left-over ``*.json.tmp``
    (writes a crash interrupted, never announced) are removed."""
    folder = data_dir / "records"
    if not folder.is_dir():
        return 0
    found = []
    for path in folder.glob("*.json"):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            log.warning("record_unreadable", path=str(path), error=str(exc))
            continue
        if not isinstance(record, dict):
            log.warning("record_unreadable", path=str(path), error="not a JSON object")
            continue
        found.append((record.get("ended_at", 0), path.stem, record))
    found.sort(key=lambda t: (t[0], t[1]))
    n = conn.execute("SELECT coalesce(max(n), 0) FROM records").fetchone()[0]
    conn.execute("BEGIN")
    for i, (_, game_id, record) in enumerate(found, n + 1):
        for sql, params in record_statements(game_id, record, i):
            conn.execute(sql, params)
    conn.execute("COMMIT")
    for tmp in folder.glob("*.json.tmp"):
        tmp.unlink()
    done = folder.with_name("records.imported")
    while done.exists():  # (taken in before: keep both)
        done = done.with_name(done.name + "+")
    folder.rename(done)
    log.info("records_imported", records=len(found), into=str(data_dir))
    return len(found)


def record_statements(game_id: str, record: JSON, n: int) -> list[tuple[str, tuple[Any, ...]]]:
    """The statements that keep a record (a re-put replaces it and counts as newest)."""
    game = record.get("game") if isinstance(record.get("game"), str) else None
    players = record.get("players") if isinstance(record.get("players"), list) else []
    out: list[tuple[str, tuple[Any, ...]]] = [
        ("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?)", (game_id, n, game, dumps(record))),
        ("DELETE FROM record_players WHERE game_id = ?", (game_id,)),
    ]
    out += [
        ("INSERT OR IGNORE INTO record_players VALUES (?, ?)", (p, game_id))
        for p in players
        if isinstance(p, str)
    ]
    return out
