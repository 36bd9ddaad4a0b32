"""Records (server/records.py): kept in presence, written to disk, loaded back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import structlog.testing

from server.presence.memory import MemoryPresence
from server.records import RecordStore


async def test_records_survive_a_new_store_on_the_same_dir(tmp_path: Path) -> None:
    store = RecordStore(MemoryPresence(), tmp_path)
    await store.load()
    await store.save("g1", {"game": "collapsi", "players": ["a", "b"], "ended_at": 1})
    await store.save("g2", {"game": "collecto", "players": ["b", "c"], "ended_at": 2})
    assert (await store.get("g1"))["players"] == ["a", "b"]
    await store.flush()
    assert json.loads((tmp_path / "records" / "g2.json").read_text())["game"] == "collecto"
    fresh = RecordStore(MemoryPresence(), tmp_path)
    assert await fresh.load() == 2
    assert (await fresh.get("g1"))["game"] == "collapsi"
    assert [r["game_id"] for r in await fresh.list()] == ["g2", "g1"]


async def test_unreadable_files_are_skipped_and_bad_ids_refused(tmp_path: Path) -> None:
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "broken.json").write_text("{not json")
    store = RecordStore(MemoryPresence(), tmp_path)
    assert await store.load() == 0
    with pytest.raises(ValueError):
        await store.save("../escape", {})


async def test_without_a_data_dir_records_live_in_presence_only() -> None:
    store = RecordStore(MemoryPresence(), None)
    await store.save("g1", {"game": "x", "players": []})
    await store.flush()
    assert await store.get("g1") == {"game": "x", "players": []}


async def test_a_record_that_cannot_be_written_is_logged_and_still_served(
    tmp_path: Path,
) -> None:
    (tmp_path / "records").write_text("a file where the records directory should be")
    store = RecordStore(MemoryPresence(), tmp_path)
    with structlog.testing.capture_logs() as logs:
        await store.save("g1", {"game": "collapsi", "players": ["a", "b"], "ended_at": 1})
        await store.flush()
    failed = [e for e in logs if e["event"] == "record_not_written"]
    assert [e["record"] for e in failed] == ["g1"] and "Error" in failed[0]["error"]
    assert (await store.get("g1"))["game"] == "collapsi"
