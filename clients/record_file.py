"""Reading a game to replay from a file: a server's record file (``records/ROOM-1.json``,
the record or ``{"data": record}``) or one game of a tournament's ``games.jsonl`` (one
record line per game, chosen by its tournament id), so ``arena tui --replay`` opens both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class RecordFileError(ValueError):
    """The file holds no record, several without a choice, or not the game asked for."""


def read_record(path: Path, game: str | None = None) -> tuple[dict[str, Any], str]:
    """The record to replay and a title for it; ``game``: a tournament game's id."""
    text = path.read_text(encoding="utf-8")
    if game is None:
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # several lines: JSON lines, read below
        if isinstance(data, dict):
            return data.get("data", data), path.name
    try:
        lines = [json.loads(raw) for raw in text.splitlines() if raw.strip()]
    except json.JSONDecodeError as exc:
        raise RecordFileError(f"{path} is not a record file: {exc}") from None
    records = [r for r in lines if isinstance(r, dict) and "moves" in r]
    if not records:
        raise RecordFileError(f"{path} holds no game record")
    ids = [r.get("tournament", {}).get("id") for r in records]
    if game is None:
        if len(records) == 1:
            return records[0], path.name
        raise RecordFileError(
            f"{path} holds {len(records)} games: choose one with --game ID (ids such as {ids[0]})"
        )
    if game not in ids:
        raise RecordFileError(f"no game {game} in {path} (ids such as {ids[0]})")
    return records[ids.index(game)], f"{path.name} {game}"
