"""The room registry: opening rooms (their game checked, their seats known), finding a room
here or (several nodes) on its owner, closing it, and renewing this node's leases."""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

import structlog

from engine.base import SetupError, new_game
from protocol.errors import ErrorCode, ProtocolError
from server.host import Host
from server.presence import PresenceError
from server.room import Room, RoomSettings, now_ms
from server.room_calls import RoomHandle
from server.sessions import Session
from server.tasks import checkpoint
from server.variants import check_game

log = structlog.get_logger("arena.server")


class RoomRegistry:
    """Rooms of this node: create, find, close, leases."""

    def __init__(self, arena: Host) -> None:
        self.arena = arena
        self._seatings: dict[tuple[str, str, str, int | None], tuple[int, list[str]]] = {}

    def nowait(self, room_id: str) -> RoomHandle | None:
        """The room if this node hosts it, else a stand-in for posting to its owner."""
        room = self.arena.rooms.get(room_id)
        if room is None:
            return self.arena.cluster.cached_room(room_id)
        return room

    async def room_closed(self, room: Room) -> None:
        self.arena.rooms.pop(room.id, None)
        if room.settings.invite:
            self.arena.invites.pop(room.settings.invite, None)
        self.arena.metrics.rooms.set(len(self.arena.rooms))
        await self.arena.presence.rooms.drop_closed(room.id)

    async def find_or_none(self, room_id: str) -> RoomHandle | None:
        """This node's room, or (several nodes) a stand-in for the room on its owner."""
        room = self.arena.rooms.get(room_id)
        if room is not None and not room.closed:
            return room
        return await self.arena.cluster.find_room(room_id)

    async def find(self, room_id: str) -> RoomHandle:
        room = await self.find_or_none(room_id)
        if room is None:
            raise ProtocolError(ErrorCode.UNKNOWN_ROOM, f"no room {room_id}")
        return room

    def check_game(self, game: str, rules: str | None, variant: str | None) -> tuple[str, str]:
        return check_game(game, rules, variant)  # (server.variants: combinations too)

    def room_limit(self, s: Session) -> int:
        """Rooms ``s`` may play in at once: a bot as many as the operator's per-bot cap
        says, when set (below or above the players' limit: one runner may play 100)."""
        cfg = self.arena.config
        if s.player and s.player.get("bot") and cfg.bot_max_games > 0:
            return cfg.bot_max_games
        return cfg.max_rooms_per_player

    def at_limit(self, s: Session) -> bool:
        return self.player_rooms(s) >= self.room_limit(s)

    def check_game_cap(self, s: Session) -> None:
        """Refuse one more room (``too_many_rooms``) to a player at its limit."""
        if self.at_limit(s):
            raise ProtocolError(ErrorCode.TOO_MANY_ROOMS, "you are in too many rooms")

    def player_rooms(self, s: Session) -> int:
        return sum(
            1
            for r in s.rooms
            if r in self.arena.rooms and self.arena.rooms[r].members.get(s.id) == "player"
        )

    def seating(
        self, game: str, rules: str, variant: str, seats: int | None, options: dict[str, Any]
    ) -> tuple[int, list[str]]:
        """Seat count and labels of a room's game, from a trial deal (which raises
        :class:`SetupError` for a bad set-up); remembered for the usual rooms without options."""
        key = (game, rules, variant, seats)
        known = None if options else self._seatings.get(key)
        if known is None:
            probe = new_game(game, rules=rules, variant=variant, players=seats, options=options)
            known = probe.num_players, probe.seat_names()
            if not options and len(self._seatings) < 256:
                self._seatings[key] = known
        return known[0], list(known[1])

    async def create_room(
        self,
        s: Session,
        game: str,
        rules: str | None,
        variant: str | None,
        options: dict[str, Any],
        seats: int | None,
        time_control: Any,
        rated: bool,
        private: bool,
        quick: bool = False,
        seat: int | None = None,
    ) -> Room:
        """Open a room; ``seat``, the creator's, is checked first: a refused request
        leaves no room behind (errors are never partial)."""
        rules, variant = self.check_game(game, rules, variant)
        if rated and s.player and s.player.get("guest"):
            raise ProtocolError(ErrorCode.FORBIDDEN, "rated games need a claimed name (a token)")
        self.check_game_cap(s)
        try:
            if self.arena.deals.costly(game, variant, options):  # (its trial deal: a search)
                num_players, labels = await self.arena.deals.seating(
                    game, rules, variant, seats, options
                )
            else:
                num_players, labels = self.seating(game, rules, variant, seats, options)
        except SetupError as exc:
            raise ProtocolError(ErrorCode.BAD_SETUP, str(exc)) from None
        if seat is not None and seat >= num_players:
            raise ProtocolError(ErrorCode.BAD_REQUEST, f"no seat {seat} in this room")
        self.arena.deals.admit(game, rules, variant, seats, options)
        room_id = f"r{secrets.token_hex(5)}"
        invite = secrets.token_urlsafe(8) if private else None
        settings = RoomSettings(
            room_id=room_id,
            game=game,
            rules=rules,
            variant=variant,
            seats=num_players,
            time_control=time_control,
            rated=rated,
            private=private,
            options=dict(options),
            invite=invite,
            created_at=now_ms(),
            quick=quick,
        )
        meta = {**settings.to_dict(), "node": self.arena.node}
        if not await self.arena.presence.rooms.open(
            room_id, self.arena.node, self.arena.config.lease_ttl, meta
        ):
            raise ProtocolError(ErrorCode.INTERNAL, "room id collision")
        room = Room(self.arena, settings, labels)
        room.start()
        self.arena.rooms[room_id] = room
        if invite:
            self.arena.invites[invite] = room_id
        self.arena.metrics.rooms.set(len(self.arena.rooms))
        room.log.info("room_created", game=game, rules=rules, variant=variant, private=private)
        return room

    async def run_leases(self) -> None:
        """This node owns its rooms through leases; renew them well before they lapse.

        Every room in one call: renewed one by one, each renewal waiting for a turn
        of a saturated loop, hundreds of rooms took longer than a lease lasts."""
        down = False  # the store is out: said once per outage, not per round
        while True:
            checkpoint()
            await asyncio.sleep(self.arena.config.lease_ttl / 3)
            try:
                await self.renew_leases()
            except PresenceError as exc:
                if not down:
                    log.warning("lease_renew_failed", rooms=len(self.arena.rooms), error=str(exc))
                down = True
            except Exception:  # the next round tries again
                log.exception("lease_renew_failed")
            else:
                if down:
                    log.info("lease_renew_recovered")
                down = False

    async def renew_leases(self) -> None:
        """Renew every room's lease; retire those whose lease went (PresenceError: none)."""
        rooms = dict(self.arena.rooms)
        t0 = time.monotonic()
        lost = await self.arena.presence.leases.renew(
            list(rooms), self.arena.node, self.arena.config.lease_ttl
        )
        took = time.monotonic() - t0
        if took > self.arena.config.lease_ttl / 6:
            log.warning("lease_renew_slow", rooms=len(rooms), seconds=round(took, 3))
        for room_id in lost:
            room = rooms[room_id]
            if room.closed or self.arena.rooms.get(room_id) is not room:
                continue  # closed meanwhile: it released its lease itself
            log.warning("lease_lost", room=room_id)
            self.arena.cluster.retire(room)
