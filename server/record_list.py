"""``list_records``: finished games, newest first, a page at a time (protocol v1,
added: PROTOCOL.md "Records, ratings, tournaments").

The records port lists the stored records by position (``offset``); a private room's
records are skipped here unless the asking connection may read them as ``get_record``
would without an invite (``server.private_records``: its players; an invite code does
not list them). So a page's
``next_offset`` counts stored records, not listed ones, and a page may come back short
(or empty) while there is more; a request reads at most :data:`SCAN_MAX` records.
"""

from __future__ import annotations

from typing import Any

import structlog
from pydantic import ValidationError

from protocol import messages as m
from server.connection import Connection
from server.host import Handler, Host
from server.private_records import may_read

log = structlog.get_logger("arena.records")

#: the most stored records one request reads (a page of someone else's private games
#: ends early rather than scanning the whole store)
SCAN_MAX = 500


class RecordListing:
    """The ``list_records`` handler."""

    def __init__(self, arena: Host) -> None:
        self.arena = arena

    def handlers(self) -> dict[str, Handler]:
        return {"list_records": self.on_list_records}

    async def on_list_records(self, conn: Connection, msg: m.ListRecords) -> None:
        s = self.arena.sessions.get(conn.session or "")
        player = None if s is None else s.player
        who, guest = (None, True) if player is None else (player["name"], player["guest"])
        sid = None if s is None else s.id
        listed: list[m.RecordSummary] = []
        offset, scanned, next_offset = msg.offset, 0, None
        while True:
            want = min(msg.limit - len(listed), SCAN_MAX - scanned)
            rows = await self.arena.records.list(
                limit=want + 1, player=msg.player, game=msg.game, offset=offset
            )
            for row in rows[:want]:
                offset, scanned = offset + 1, scanned + 1
                readable = may_read(row["record"], who, None, guest, sid)  # (as get_record)
                if readable and (item := summary(row)) is not None:
                    listed.append(item)
            if len(rows) <= want:  # the store has no more
                break
            if len(listed) >= msg.limit or scanned >= SCAN_MAX:
                next_offset = offset
                break
        conn.send(m.RecordList(re=msg.id, records=listed, next_offset=next_offset))


def summary(row: dict[str, Any]) -> m.RecordSummary | None:
    """A stored record as listed; ``None`` (and a warning) for one that does not fit the
    protocol (an imported or damaged record: ``get_record`` would refuse it too)."""
    rec = row["record"]
    data = rec.get("data") or {}
    try:
        return m.RecordSummary.model_validate(
            {
                "record": row["game_id"],
                "game": data.get("game", rec.get("game")),
                "rules": data.get("rules"),
                "variant": data.get("variant"),
                "players": data.get("players", rec.get("players", [])),
                "result": data.get("result"),
                "moves": len(data.get("moves") or []),
                "rated": bool(rec.get("rated", False)),
                "private": bool(rec.get("private", False)),
                "finished_at": rec.get("finished_at"),
            }
        )
    except ValidationError as exc:
        log.warning("record_unlistable", record=row["game_id"], error=str(exc).splitlines()[0])
        return None
