"""The room messages of a session (create, join, watch, seats, moves, rematch, chat):
each found room is asked to act, here or on its owner node."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from protocol import messages as m
from protocol.errors import ErrorCode, ProtocolError
from protocol.outgoing import Outgoing
from server import room_calls as rc
from server.connection import Connection
from server.costly_requests import CostlyRequests
from server.host import Handler, Host


class RoomRequests:
    """Handlers of the room messages."""

    def __init__(self, arena: Host) -> None:
        self.arena = arena
        self.costly = CostlyRequests(arena.config, arena.addresses.exempt)

    def handlers(self) -> dict[str, Handler]:
        return {
            "create_room": self.on_create_room,
            "join_room": self.on_join_room,
            "watch": self.on_watch,
            "leave_room": self.on_leave_room,
            "take_seat": self.on_take_seat,
            "leave_seat": self.on_leave_seat,
            "ready": self.on_ready,
            "move": self.on_move,
            "resign": self.on_resign,
            "abort": self.on_abort,
            "offer_rematch": self.on_offer_rematch,
            "accept_rematch": self.on_accept_rematch,
            "chat": self.on_chat,
        }

    async def on_create_room(self, conn: Connection, msg: m.CreateRoom) -> None:
        s = self.arena.session_service.of_conn(conn)
        self.costly.charge_deal(conn, msg.game, msg.variant, msg.options)  # (a solo puzzle)
        room = await self.arena.registry.create_room(
            s,
            msg.game,
            msg.rules,
            msg.variant,
            msg.options,
            msg.seats,
            msg.time_control,
            msg.rated,
            msg.private,
            seat=msg.seat,
        )
        s.rooms.add(room.id)
        await self.arena.session_service.save(s)
        await room.ask(room.open_for, s.id, s.player, msg.seat, msg.id)

    async def on_join_room(self, conn: Connection, msg: m.JoinRoom) -> None:
        s = self.arena.session_service.of_conn(conn)
        if msg.invite is not None:
            room_id = self.arena.invites.get(msg.invite)
            if room_id is None:  # a room of another node?
                room_id = await self.arena.cluster.find_invite(msg.invite)
            if room_id is None:
                raise ProtocolError(ErrorCode.UNKNOWN_ROOM, "no room with that invite code")
        else:
            room_id = msg.room  # type: ignore[assignment]
        room = await self.arena.registry.find(room_id)
        if room.settings.private and msg.invite is None and s.id not in room.members:
            raise ProtocolError(ErrorCode.FORBIDDEN, "a private room needs its invite code")
        if msg.role == "player" and room.members.get(s.id) != "player":  # (a spectator too)
            if s.player is None:
                raise ProtocolError(ErrorCode.NOT_AUTHENTICATED, "log in to join as a player")
            self.arena.registry.check_game_cap(s)
        await room.request(rc.Join(s.id, s.player, msg.role, msg.id))
        s.rooms.add(room.id)
        await self.arena.session_service.save(s)

    async def on_watch(self, conn: Connection, msg: m.Watch) -> None:
        s = self.arena.session_service.of_conn(conn)
        room = await self.arena.registry.find(msg.room)
        await room.request(rc.Watch(s.id, msg.since_seq, msg.id))
        s.rooms.add(room.id)
        await self.arena.session_service.save(s)

    async def on_leave_room(self, conn: Connection, msg: m.LeaveRoom) -> None:
        await self._room_call(conn, msg, rc.Leave)

    async def _room_call(
        self,
        conn: Connection,
        msg: Any,
        call: Callable[[str], rc.RoomCall],
        deals: bool = False,
    ) -> None:
        """Ask the room to run ``call(session)``, then ``ack`` (for a room of this node,
        from inside its turn: the ack shares the write of the events it follows);
        ``deals``: the call may deal the room's next game (charged when that is costly)."""
        s = self.arena.session_service.of_conn(conn)
        room = await self.arena.registry.find(msg.room)
        if deals and room.settings is not None:
            st = room.settings
            self.costly.charge_deal(conn, st.game, st.variant, st.options)
        ack = Outgoing({"type": "ack"} if msg.id is None else {"type": "ack", "re": msg.id})
        await room.request(call(s.id), partial(conn.send, ack))

    async def on_take_seat(self, conn: Connection, msg: m.TakeSeat) -> None:
        player = self.arena.session_service.of_conn(conn).player
        await self._room_call(conn, msg, lambda sid: rc.TakeSeat(sid, player, msg.seat))

    async def on_leave_seat(self, conn: Connection, msg: m.LeaveSeat) -> None:
        await self._room_call(conn, msg, rc.LeaveSeat)

    async def on_ready(self, conn: Connection, msg: m.Ready) -> None:
        await self._room_call(conn, msg, lambda sid: rc.SetReady(sid, msg.ready))

    async def on_move(self, conn: Connection, msg: m.MakeMove) -> None:
        if msg.reply == "event":  # the move's own move_made, with re, is the reply: no ack
            s = self.arena.session_service.of_conn(conn)
            room = await self.arena.registry.find(msg.room)
            await room.request(rc.Move(s.id, msg.move, msg.id))
            return
        await self._room_call(conn, msg, lambda sid: rc.Move(sid, msg.move))

    async def on_resign(self, conn: Connection, msg: m.Resign) -> None:
        await self._room_call(conn, msg, rc.Resign)

    async def on_abort(self, conn: Connection, msg: m.AbortGame) -> None:
        await self._room_call(conn, msg, rc.Abort)

    async def on_offer_rematch(self, conn: Connection, msg: m.OfferRematch) -> None:
        await self._room_call(conn, msg, lambda sid: rc.OfferRematch(sid, False), deals=True)

    async def on_accept_rematch(self, conn: Connection, msg: m.AcceptRematch) -> None:
        await self._room_call(conn, msg, lambda sid: rc.OfferRematch(sid, True), deals=True)

    async def on_chat(self, conn: Connection, msg: m.Chat) -> None:
        name = (self.arena.session_service.of_conn(conn).player or {}).get("name", "anonymous")
        await self._room_call(conn, msg, lambda sid: rc.Chat(sid, name, msg.text))
