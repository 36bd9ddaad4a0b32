"""clients.bot.logs: a game's file log writes its lines in batches, in order, stamped
with the time each was logged; nothing is lost at a game's or a run's end."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from clients.bot.logs import FLUSH_S, FileLog, GameLog, flush_all

STAMP = r"\d\d:\d\d:\d\d\.\d\d\d"


async def test_lines_are_written_together_soon_after_and_all_at_the_end(tmp_path: Path) -> None:
    errors: list[str] = []
    log = FileLog(tmp_path / "logs" / "r1.log", errors.append)
    for n in range(3):
        log(f"line {n}")
    assert not log.path.exists()  # (kept: none of them was written on the move's path)
    async with asyncio.timeout(FLUSH_S + 10):  # (written by its timer: nobody flushes)
        while not log.path.exists():
            await asyncio.sleep(0.01)
    text = log.path.read_text()
    assert re.fullmatch(rf"({STAMP} line \d\n){{3}}", text), text
    assert [ln.split()[-1] for ln in text.splitlines()] == ["0", "1", "2"]
    log("late")  # after the game: flushed with the run's end
    held = GameLog()
    held("before the room")
    other = FileLog(tmp_path / "logs" / "r2.log", errors.append)
    held.attach(other)
    flush_all()
    assert log.path.read_text().endswith(" late\n")
    assert other.path.read_text().endswith(" before the room\n")
    assert errors == []


def test_a_log_that_cannot_be_written_says_so_once(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where the log's folder should be")
    errors: list[str] = []
    log = FileLog(tmp_path / "taken" / "r1.log", errors.append)
    log("one")  # (no running loop: written at once)
    log("two")
    assert len(errors) == 1 and "cannot write the game log" in errors[0], errors


async def test_lines_kept_before_the_room_keep_the_time_they_were_logged(tmp_path: Path) -> None:
    held = GameLog()
    held("engine < arenaok")  # (a warm engine's handshake, long before its game)
    await asyncio.sleep(0.3)
    log = FileLog(tmp_path / "r3.log", lambda text: None)
    held.attach(log)
    held("game 1 starts")
    log.flush()
    stamps = [ln.split()[0] for ln in log.path.read_text().splitlines()]
    assert len(stamps) == 2 and re.fullmatch(STAMP, stamps[0]), stamps

    def ms(stamp: str) -> int:
        h, m, s = stamp.split(":")
        return round((int(h) * 3600 + int(m) * 60 + float(s)) * 1000)

    apart = (ms(stamps[1]) - ms(stamps[0])) % 86_400_000  # (midnight between them)
    assert apart >= 250, stamps  # (not both stamped at attach)
