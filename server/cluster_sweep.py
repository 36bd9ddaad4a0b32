"""The sweep: every ``lease_ttl / 3`` a node renews its heartbeat, takes over the rooms
its clients are in that lost their owner, follows rooms that moved, and forgets what
nobody needs any more (mixed into :class:`server.cluster.Cluster`)."""

from __future__ import annotations

import asyncio

import structlog

from server import room_calls as rc
from server.presence import PresenceError
from server.tasks import checkpoint

log = structlog.get_logger("arena.cluster")


class Sweeps:
    """The periodic sweep of :class:`server.cluster.Cluster`."""

    async def _sweep_loop(self) -> None:
        n = 0
        down = False  # the store is out: said once per outage, not every round
        while True:
            checkpoint()  # (a cancellation lost in redis-py: server.tasks)
            await asyncio.sleep(self.ttl / 3)
            n += 1
            try:
                await self.sweep(lobby=n % 3 == 0)
            except PresenceError as exc:
                if not down:
                    log.warning("sweep_failed", error=str(exc))
                down = True
            except Exception:
                log.exception("sweep_failed")
            else:
                if down:
                    log.info("sweep_recovered")
                down = False

    async def sweep(self, lobby: bool = False) -> None:
        """Heartbeat; take over ownerless rooms; re-attach members whose room moved."""
        await self.presence.bus.heartbeat(self.node, self.ttl)
        interest = {
            r
            for s in self.arena.sessions.values()
            if s.conn is not None
            for r in s.rooms
            if r not in self.arena.rooms
        }
        if lobby:
            for entry in await self.presence.lobby.entries():
                rid = entry.get("room")
                if rid and rid not in self.arena.rooms:
                    interest.add(rid)
        await self._check_member_nodes()
        if lobby:
            self._prune(interest)
        owners = await self.presence.leases.owners(sorted(interest))
        for room_id, owner in owners.items():
            if owner is None or owner == self.node:  # ownerless, or ours but retired here
                self.arena.spawn(self._try_take_over(room_id))
            elif self.remote.get(room_id) != owner:  # moved, or was ours until it lapsed
                log.info("room_moved", room=room_id, owner=owner)
                self._attach(room_id, owner)

    def _prune(self, interest: set[str]) -> None:
        """Forget routes, cursors and locks nobody needs any more (bounded memory)."""
        arena = self.arena
        members = {sid for room in arena.rooms.values() for sid in room.members}
        idle = {sid for sid in self.routes if sid not in members}
        for sid in idle & self._idle_routes:  # idle twice in a row: not just being seated
            del self.routes[sid]
            self.names.pop(sid, None)
        self._idle_routes = idle - self._idle_routes
        for key in [k for k in self.cursors if k[0] not in arena.sessions]:
            del self.cursors[key]
        self._refetched = {k: t for k, t in self._refetched.items() if k in self.cursors}
        for room_id in [r for r in self.remote if r not in interest]:
            del self.remote[room_id]
        for room_id, lock in list(self._locks.items()):
            if not lock.locked() and room_id not in arena.rooms:
                del self._locks[room_id]
        for room_id in [r for r in self._requests if r not in arena.rooms]:
            del self._requests[room_id]

    async def _check_member_nodes(self) -> None:
        """Members of our rooms whose node died are disconnected: they have the grace
        period to resume on another node, or lose by abandonment."""
        peers = {n for n in self.routes.values() if n != self.node}
        if not peers:
            return
        alive = await self.presence.bus.alive(sorted(peers))
        dead = {n for n, ok in alive.items() if not ok}
        if not dead:
            return
        for sid, node in list(self.routes.items()):
            if node not in dead:
                continue
            del self.routes[sid]
            for room in list(self.arena.rooms.values()):
                if sid in room.members:
                    room.tell(rc.Disconnected(sid))
                    if room.seat_of(sid) is not None:
                        self._await_attach(room, sid)
        log.warning("member_nodes_gone", nodes=sorted(dead))

    async def _try_take_over(self, room_id: str) -> None:
        try:
            room = await self.take_over(room_id)
            if room is None:
                owner = await self.presence.leases.owner(room_id)
                if owner is not None and owner != self.node and self.remote.get(room_id) != owner:
                    self._attach(room_id, owner)
        except PresenceError as exc:
            log.warning("takeover_failed", room=room_id, error=str(exc))
        except Exception:
            log.exception("takeover_failed", room=room_id)
