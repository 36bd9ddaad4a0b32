"""Requests forwarded between nodes: a room's request sent to the node that owns the
room, run there in the room's actor at most once, and answered back (mixed into
:class:`server.cluster.Cluster`).

A forwarded request carries an id (node, boot, counter); when the owner changes
while it waits, it is sent again to the new owner under the same id. The owner
logs the id with the events the request caused, so a request that already took
effect is answered its first outcome instead of running twice (the commands marked
:attr:`server.room_calls.RoomCall.once`; joins and reads are harmless to repeat).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import structlog

from protocol.errors import ErrorCode, ProtocolError, is_error_code
from protocol.outgoing import Outgoing
from server import node_messages as nm
from server import room_calls as rc
from server.cluster_remote import RemoteRoom
from server.presence import PresenceError
from server.room import Room

log = structlog.get_logger("arena.cluster")

#: forwarded requests a room's owner remembers the outcome of, per room
REQUESTS_KEPT = 1000
#: seconds a forwarded request waits for the owner's answer
CALL_TIMEOUT = 5.0


class Moved(Exception):
    """The node asked no longer hosts the room (taken over meanwhile): look it up again."""


def logged_requests(events: list[dict[str, Any]]) -> dict[str, tuple[str, Any]]:
    """The forwarded requests the log's last events were caused by (their ``request``
    ids), each with the types of the events it caused."""
    found: dict[str, set[str]] = {}
    for ev in events[-REQUESTS_KEPT:]:
        key = ev.get("request")
        if key:
            found.setdefault(key, set()).add(ev["type"])
    return {key: ("logged", types) for key, types in found.items()}


class ForwardedCalls:
    """The forwarded requests of :class:`server.cluster.Cluster`, asking and serving."""

    async def call_room(
        self, room: RemoteRoom, call: rc.RoomCall, retry: bool = True, key: str = ""
    ) -> Any:
        """Run a room command on the room's owner. If the owner changes meanwhile the request
        is sent again to the new one, under the same ``key``: the owner logs the key with
        the events the request caused, so a request that was run already is not run again
        (its first outcome is the answer)."""
        rid = next(self._ids)
        key = key or f"{self.node}.{self._boot}.{rid}"
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        self.send(room.owner, self.call_message(room.id, call, rid, key))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CALL_TIMEOUT
        try:
            while True:  # waiting, look now and then whether the room changed hands
                left = deadline - loop.time()
                if left <= 0:
                    raise PresenceError(f"node {room.owner} did not answer for room {room.id}")
                try:
                    async with asyncio.timeout(min(left, 0.25)):
                        return await asyncio.shield(fut)
                except TimeoutError:
                    if await self.presence.leases.owner(room.id) != room.owner:
                        raise Moved() from None
        except Moved:
            if not retry:
                raise ProtocolError(ErrorCode.UNAVAILABLE, "the room is moving") from None
            log.info("request_retried", room=room.id, fn=call.kind, previous_node=room.owner)
            target = await self.find_room(room.id)
            if target is None:
                raise ProtocolError(ErrorCode.UNKNOWN_ROOM, f"no room {room.id}") from None
            if isinstance(target, RemoteRoom):
                return await self.call_room(target, call, retry=False, key=key)
            return await target.ask(self._once(target, call, key))
        finally:
            self._pending.pop(rid, None)

    def undelivered(self, node: str, call: nm.Call) -> None:
        """A request published to ``node`` reached nobody: its process is gone (or its
        subscription is being renewed), so the request never ran. Its caller is told at
        once, ``unavailable`` until the room's lease lapses and another node takes the
        room over (issue 13: within a second, not after waiting for a dead node)."""
        fut = self._pending.get(call.id) if call.id is not None else None
        if fut is not None and not fut.done():
            log.info("request_undelivered", to=node, room=call.room, fn=call.call.kind)
            fut.set_exception(
                ProtocolError(
                    ErrorCode.UNAVAILABLE,
                    f"the node of room {call.room} is not answering: it moves to another node",
                    retry_after=int(self.ttl * 1000),
                )
            )

    def _serve_call(self, msg: nm.Call) -> None:
        room = self.arena.rooms.get(msg.room)
        if room is None or room.closed:  # retired here, or never ours: restore if the lease is
            self.arena.spawn(self._serve_after_takeover(msg))
            return
        self._run_call(room, msg)

    async def _serve_after_takeover(self, msg: nm.Call) -> None:
        origin, rid, room_id = msg.origin, msg.id, msg.room
        room = None
        with contextlib.suppress(PresenceError):
            if await self.presence.leases.owner(room_id) in (None, self.node):
                room = await self.take_over(room_id)
        if room is None:
            if rid is not None:
                self.send(origin, nm.Reply(rid, error={"code": "moved", "message": ""}))
            return
        self._run_call(room, msg)

    def _run_call(self, room: Room, msg: nm.Call) -> None:
        origin, rid, name, session = msg.origin, msg.id, msg.name, msg.call.session
        method = self._once(room, msg.call, msg.key)

        async def routed() -> Any:
            # inside the actor: events before this point went to the old route, the ones
            # after it (and this call's catch-up or replies) go to the new one, in order
            self.routes[session] = origin
            if name:
                self.names[session] = name
            timer = self._attach_timers.pop((room.id, session), None)
            if timer is not None:
                timer.cancel()
            return await method()

        routed.__qualname__ = f"{type(msg.call).__name__}.run"
        if rid is None:
            room.post(routed)
            return
        task = asyncio.ensure_future(room.ask(routed))
        task.add_done_callback(lambda t: self._reply(origin, rid, t))

    def _once(self, room: Room, call: rc.RoomCall, key: str | None) -> Callable[[], Awaitable[Any]]:
        """``call`` run on ``room`` at most once for request ``key`` (in the actor): the
        events it causes are logged with the key, and a request whose key the room knows
        (from its log, or from this node's run of it) gets the first outcome."""
        if not key or not call.once:
            return partial(call.run, room)

        async def once() -> Any:
            done = self._requests.get(room.id, {}).get(key)
            if done is not None:
                log.info("request_repeated", room=room.id, fn=call.kind)
                return self._outcome(call, done)
            before = room.seq
            room.request_key = key
            try:
                result = await call.run(room)
            except Exception as exc:
                if room.seq > before:
                    self._remember(room.id, key, ("error", exc))
                raise
            finally:
                room.request_key = None
            if room.seq > before:
                self._remember(room.id, key, ("ok", result))
            return result

        once.__qualname__ = f"{type(call).__name__}.run"
        return once

    def _remember(self, room_id: str, key: str, outcome: tuple[str, Any]) -> None:
        done = self._requests.setdefault(room_id, {})
        done[key] = outcome
        if len(done) > REQUESTS_KEPT:
            del done[next(iter(done))]

    def _outcome(self, call: rc.RoomCall, done: tuple[str, Any]) -> Any:
        """What a repeated request is answered: what it was answered the first time."""
        kind, value = done
        if kind == "error":
            raise value
        if kind == "logged" and type(call) is rc.Move and "move_made" not in value:
            # the flag fell before the move arrived (as Room.move answers it)
            raise ProtocolError(ErrorCode.GAME_OVER, "your time ran out before the move arrived")
        if type(call) is rc.Move and call.re is not None:
            # asked for its move_made as the reply: that went out the first time (or was
            # lost with its node, and the catch-up brings it): an ack answers instead
            self.arena.deliver(call.session, Outgoing({"type": "ack", "re": call.re}))
        return value if kind == "ok" else None

    def _reply(self, origin: str, rid: int, task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            err: dict[str, Any] = {"code": "unavailable", "message": "cancelled"}
            self.send(origin, nm.Reply(rid, error=err))
            return
        exc = task.exception()
        if exc is None:
            self.send(origin, nm.Reply(rid, ok=task.result()))
            return
        code = getattr(exc, "code", None)
        if not is_error_code(code):
            log.error("forwarded_call_failed", error=repr(exc))
            code = str(ErrorCode.INTERNAL)
        err = {"code": str(code), "message": getattr(exc, "message", None) or str(exc)}
        if getattr(exc, "retry_after", None) is not None:
            err["retry_after"] = exc.retry_after  # type: ignore[attr-defined]
        self.send(origin, nm.Reply(rid, error=err))

    def _on_reply(self, msg: nm.Reply) -> None:
        fut = self._pending.pop(msg.id, None)
        if fut is None or fut.done():
            return
        if msg.error is not None:
            e = msg.error
            if e["code"] == "moved":
                fut.set_exception(Moved())
            else:
                fut.set_exception(
                    ProtocolError(e["code"], e.get("message", ""), retry_after=e.get("retry_after"))
                )
        else:
            fut.set_result(msg.ok)
