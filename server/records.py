"""Finished games' records: kept in presence and, with the memory store, written as JSON
files under --data-dir (the SQLite store keeps them in its database: no files then).

Each record is one file, ``DATA_DIR/records/<game_id>.json``, written atomically
(temporary file, fsync, rename) in a worker thread so the event loop never
waits on the disk. On start every file is loaded back into presence, so a
restarted server still serves every finished game. :meth:`RecordStore.flush`
waits for the writes in flight (the server calls it on shutdown).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import structlog

from engine.base import GameRecord, replay_steps
from server.presence import Presence

log = structlog.get_logger("arena.records")

GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class RecordStore:
    def __init__(self, presence: Presence, data_dir: str | os.PathLike[str] | None) -> None:
        self.presence = presence
        self.dir = None if data_dir is None else Path(data_dir) / "records"
        self._writes: set[asyncio.Task[None]] = set()

    async def load(self) -> int:
        """Put every record on disk into presence (oldest first); returns how many."""
        if self.dir is None:
            return 0
        self.dir.mkdir(parents=True, exist_ok=True)
        loaded = await asyncio.to_thread(self._read_all)
        for game_id, record in loaded:
            await self.presence.records.put(game_id, record)
        return len(loaded)

    def _read_all(self) -> list[tuple[str, dict[str, Any]]]:
        assert self.dir is not None
        found = []
        for path in self.dir.glob("*.json"):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError) as exc:
                log.warning("record_unreadable", path=str(path), error=str(exc))
                continue
            found.append((record.get("ended_at", 0), path.stem, record))
        found.sort(key=lambda t: (t[0], t[1]))
        return [(game_id, record) for _, game_id, record in found]

    async def save(self, game_id: str, record: dict[str, Any]) -> None:
        """Keep ``record``: in presence now, on disk by the time :meth:`flush` returns."""
        if not GAME_ID.fullmatch(game_id):
            raise ValueError(f"bad game id {game_id!r}")
        await self.presence.records.put(game_id, record)
        if self.dir is not None:
            task = asyncio.create_task(asyncio.to_thread(self._write, game_id, record))
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)
            task.add_done_callback(lambda t: self._written(game_id, t))

    @staticmethod
    def _written(game_id: str, task: asyncio.Task[None]) -> None:
        """A write that failed (a full disk, a bad --data-dir) is said in the log; the
        record stays served from presence until the process ends."""
        if not task.cancelled() and task.exception() is not None:
            log.error("record_not_written", record=game_id, error=repr(task.exception()))

    def _write(self, game_id: str, record: dict[str, Any]) -> None:
        assert self.dir is not None
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / f"{game_id}.json"
        tmp = path.with_suffix(".json.tmp")
        with open(tmp, "w") as f:
            json.dump(record, f, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    async def get(self, game_id: str) -> dict[str, Any] | None:
        return await self.presence.records.get(game_id)

    async def list(
        self, limit: int = 50, player: str | None = None, game: str | None = None, offset: int = 0
    ) -> list[dict[str, Any]]:
        return await self.presence.records.latest(
            limit=limit, player=player, game=game, offset=offset
        )

    async def flush(self) -> None:
        """Wait until every record handed to :meth:`save` is on disk."""
        while self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)


def record_views(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The view of a recorded game at its start and after each move (``get_record``'s
    ``views``): the engine replays it, so a client needs no rules to step through it."""
    return [game.view() for game in replay_steps(GameRecord.from_dict(data))]
