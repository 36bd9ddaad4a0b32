"""The lobby: the public rooms' list, and its changes fanned out to subscribed connections
(one presence subscription per node)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from protocol import messages as m
from protocol.outgoing import Outgoing
from server.connection import Connection
from server.host import Handler, Host
from server.presence import PresenceError
from server.tasks import checkpoint


class Lobby:
    """Lobby requests and the fan-out."""

    def __init__(self, arena: Host) -> None:
        self.arena = arena

    def handlers(self) -> dict[str, Handler]:
        return {
            "list_rooms": self.on_list_rooms,
            "lobby_subscribe": self.on_lobby_subscribe,
            "lobby_unsubscribe": self.on_lobby_unsubscribe,
        }

    async def public_rooms(self, game: str | None) -> list[dict[str, Any]]:
        rooms = await self.arena.presence.lobby.entries()
        rooms = [r for r in rooms if game is None or r.get("game") == game]
        rooms.sort(key=lambda r: r.get("created_at") or 0, reverse=True)
        return rooms

    async def on_list_rooms(self, conn: Connection, msg: m.ListRooms) -> None:
        rooms = await self.public_rooms(msg.game)
        conn.send(
            m.RoomList(
                re=msg.id,
                rooms=[m.RoomSummary.model_validate(r) for r in rooms[:500]],
                truncated=len(rooms) > 500,
            )
        )

    async def on_lobby_subscribe(self, conn: Connection, msg: m.LobbySubscribe) -> None:
        conn.lobby = True
        conn.lobby_game = msg.game
        self.arena.lobby_conns.add(conn)
        await self.on_list_rooms(conn, m.ListRooms(id=msg.id, game=msg.game))

    async def on_lobby_unsubscribe(self, conn: Connection, msg: m.LobbyUnsubscribe) -> None:
        conn.lobby = False
        self.arena.lobby_conns.discard(conn)
        conn.send(m.Ack(re=msg.id))

    async def run(self) -> None:
        """One lobby subscription per node, fanned out to the subscribed connections.

        A subscription that ends (the store went away) is opened again."""
        while True:
            checkpoint()
            with contextlib.suppress(PresenceError):
                await self._fanout_once()
            await asyncio.sleep(0.25)

    async def _fanout_once(self) -> None:
        known: set[str] = set()
        async with await self.arena.presence.lobby.subscribe() as sub:
            # (Re)subscribed: events may have been lost in between (a subscriber that fell
            # too far behind is dropped), so every subscriber gets the lobby as it is now.
            rooms = await self.public_rooms(None)
            known.update(r["room"] for r in rooms)
            snapshots: dict[str | None, Outgoing] = {}
            for conn in list(self.arena.lobby_conns):
                game = conn.lobby_game
                if game not in snapshots:
                    mine = [r for r in rooms if game is None or r.get("game") == game]
                    snapshots[game] = Outgoing.of(
                        m.RoomList(
                            rooms=[m.RoomSummary.model_validate(r) for r in mine[:500]],
                            truncated=len(mine) > 500,
                        )
                    )
                conn.send(snapshots[game])
            async for ev in sub:
                if ev["op"] == "upsert":
                    room = ev["room"]["room"]
                    added = room not in known
                    known.add(room)
                    if not self.arena.lobby_conns:  # nobody listens: no message to build
                        continue
                    summary = m.RoomSummary.model_validate(ev["room"])
                    cls = m.RoomAdded if added else m.RoomUpdated
                    out = Outgoing.of(cls(summary=summary))
                    game = summary.game
                else:
                    known.discard(ev["room_id"])
                    if not self.arena.lobby_conns:
                        continue
                    out = Outgoing.of(m.RoomRemoved(room=ev["room_id"]))
                    game = None
                for conn in list(self.arena.lobby_conns):
                    if game is None or conn.lobby_game in (None, game):
                        conn.send(out)
