"""Records and the leaderboard (tournaments: server.tournaments.handlers)."""

from __future__ import annotations

import asyncio

from protocol import messages as m
from protocol.errors import ErrorCode, ProtocolError
from server.connection import Connection
from server.host import Handler, Host
from server.private_records import may_read
from server.records import record_views


class Standings:
    """Handlers of records and leaderboard messages."""

    def __init__(self, arena: Host) -> None:
        self.arena = arena

    def handlers(self) -> dict[str, Handler]:
        return {
            "get_record": self.on_get_record,
            "get_leaderboard": self.on_get_leaderboard,
        }

    async def on_get_record(self, conn: Connection, msg: m.GetRecord) -> None:
        rec = await self.arena.records.get(msg.record)
        s = self.arena.sessions.get(conn.session or "")
        player = None if s is None else s.player
        who, guest = (None, True) if player is None else (player["name"], player["guest"])
        sid = None if s is None else s.id
        if rec is None or not may_read(rec, who, msg.invite, guest, sid):  # private: unsaid
            raise ProtocolError(ErrorCode.UNKNOWN_RECORD, f"no record {msg.record}")
        conn.send(
            m.Record(
                re=msg.id,
                record=msg.record,
                data=m.GameRecordData.model_validate(rec["data"]),
                rated=rec.get("rated", False),
                ratings=[m.RatingChange.model_validate(c) for c in rec.get("ratings", [])],
                finished_at=rec.get("finished_at"),
                views=await asyncio.to_thread(record_views, rec["data"]) if msg.views else None,
            )
        )

    async def on_get_leaderboard(self, conn: Connection, msg: m.GetLeaderboard) -> None:
        rows = await self.arena.presence.ratings.leaderboard(msg.game, limit=msg.offset + msg.limit)
        rows = rows[msg.offset :]
        conn.send(
            m.Leaderboard(
                re=msg.id,
                game=msg.game,
                entries=[
                    m.LeaderboardEntry(
                        rank=msg.offset + i + 1,
                        name=r["player"],
                        rating=round(r["rating"], 2),
                        deviation=round(r.get("rd", 350.0), 2),
                        games=r.get("games", 0),
                        bot=bool(r.get("bot", False)),
                    )
                    for i, r in enumerate(rows)
                ],
            )
        )
