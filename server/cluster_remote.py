"""What a node holds of rooms and sessions on other nodes: stand-ins that forward to
them (:class:`RemoteRoom`, :class:`RemoteConn`), and the ordered :class:`Outbox` of
messages for one node (:mod:`server.cluster`)."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import structlog

from protocol.outgoing import Outgoing
from server import node_messages as nm
from server.presence import PresenceError
from server.room_calls import RoomCall
from server.room_state import RoomSettings
from server.tasks import checkpoint

log = structlog.get_logger("arena.cluster")

#: messages queued for one node before the oldest are dropped (that node then resyncs)
OUTBOX_LIMIT = 50_000

#: what a node sends another: a message, or a delivery (a session, a room's message) that
#: the outbox merges with the next ones of the same message into one nm.Deliver
Outbound = nm.NodeMessage | tuple[str, Outgoing]


class NodeLink(Protocol):
    """What the stand-ins and outboxes need of their node (:class:`server.cluster.Cluster`)."""

    node: str
    presence: Any

    def send(self, node: str, item: Outbound) -> None: ...

    def undelivered(self, node: str, call: nm.Call) -> None: ...

    def call_message(
        self, room_id: str, call: RoomCall, rid: int | None = None, key: str = ""
    ) -> nm.Call: ...

    async def call_room(
        self, room: RemoteRoom, call: RoomCall, retry: bool = True, key: str = ""
    ) -> Any: ...


class RemoteRoom:
    """What this node knows of a room owned elsewhere: enough to forward requests to it
    (the room handle, :class:`server.room_calls.RoomHandle`: its commands travel)."""

    def __init__(
        self,
        cluster: NodeLink,
        room_id: str,
        owner: str,
        settings: RoomSettings | None = None,
        members: dict[str, str] | None = None,
    ) -> None:
        self.cluster = cluster
        self.id = room_id
        self.owner = owner
        self.settings = settings
        self.members = members or {}
        self.closed = False

    async def request(self, call: RoomCall, then: Callable[[], None] | None = None) -> Any:
        result = await self.cluster.call_room(self, call)
        if then is not None:
            then()
        return result

    def tell(self, call: RoomCall) -> None:
        self.cluster.send(self.owner, self.cluster.call_message(self.id, call))


class RemoteConn:
    """The connection of a session on another node: what is sent goes through that node."""

    def __init__(self, cluster: NodeLink, node: str, session: str) -> None:
        self.cluster = cluster
        self.node = node
        self.session = session

    def send(self, msg: Any) -> None:
        out = msg if isinstance(msg, Outgoing) else Outgoing.of(msg)
        self.cluster.send(self.node, (self.session, out))


class Outbox:
    """Messages for one node, published in order by one task, batched per round trip."""

    def __init__(self, cluster: NodeLink, node: str) -> None:
        self.cluster = cluster
        self.node = node
        self.items: deque[Outbound] = deque()
        self.wake = asyncio.Event()
        self.task = asyncio.create_task(self._run(), name=f"outbox-{node}")

    def put(self, item: Outbound) -> None:
        if len(self.items) >= OUTBOX_LIMIT:
            log.warning("outbox_overflow", to=self.node, dropped=len(self.items))
            self.items.clear()
            self.items.append(nm.Resync(self.cluster.node))
        self.items.append(item)
        self.wake.set()

    def _batch(self) -> tuple[list[str], list[nm.NodeMessage]]:
        texts: list[str] = []
        sent: list[nm.NodeMessage] = []
        while self.items and len(texts) < 256:
            item = self.items.popleft()
            if isinstance(item, tuple):  # a delivery: merge the sessions of one message
                out, sessions = item[1], [item[0]]
                while self.items and isinstance(self.items[0], tuple) and self.items[0][1] is out:
                    sessions.append(self.items.popleft()[0])
                item = nm.Deliver(sessions, out.wire)
            texts.append(json.dumps(nm.encode(item), separators=(",", ":")))
            sent.append(item)
        return texts, sent

    async def _run(self) -> None:
        while True:
            checkpoint()  # (a cancellation lost in redis-py: server.tasks)
            await self.wake.wait()
            self.wake.clear()
            while self.items:
                texts, sent = self._batch()
                while True:
                    try:
                        heard = await self.cluster.presence.bus.publish(self.node, texts)
                        break
                    except PresenceError:  # Redis is down: keep the order, try again
                        await asyncio.sleep(0.25)
                for item, receivers in zip(sent, heard or (), strict=False):
                    if not receivers and isinstance(item, nm.Call):  # (lost: nobody listens)
                        self.cluster.undelivered(self.node, item)
