"""What the server's parts see of the node they run in (:class:`server.app.Arena`).

Why a protocol: rooms, connections, the cluster and the request handlers are given
the arena, and the arena is built from them; typing them against this small
interface instead of ``server.app`` keeps every import pointing one way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from protocol.outgoing import Outgoing
from server.config import Config
from server.metrics import Metrics
from server.presence import Presence
from server.records import RecordStore

#: a message handler: the connection it came on, the decoded protocol message
Handler = Callable[[Any, Any], Awaitable[None]]


class Host(Protocol):
    config: Config
    node: str
    presence: Presence
    records: RecordStore
    metrics: Metrics
    stopping: bool
    #: this node's rooms by id (server.room.Room)
    rooms: dict[str, Any]
    #: invite code -> room id, for this node's private rooms
    invites: dict[str, str]
    #: the sessions this node holds (server.sessions.Session) by id
    sessions: dict[str, Any]
    #: name key (casefolded) -> session id of the players online here
    online_names: dict[str, str]
    #: connections subscribed to lobby events
    lobby_conns: set[Any]
    connections: set[Any]
    write_batches: Any
    log: Any
    #: the parts (server.cluster.Cluster or None; server.sessions, registry, lobby...)
    cluster: Any
    session_service: Any
    registry: Any
    matchmaker: Any
    #: challenges to and from this node's sessions (server.challenges)
    challenges: Any
    #: failed-login throttle (server.login_throttle)
    logins: Any
    #: the web page's static files (server.web.WebPage), or None
    web: Any
    #: per-address budgets (server.address_budget)
    addresses: Any

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...
    def deliver(self, session: str, out: Outgoing) -> None: ...
    def stream_catch_up(self, session: str, stream: Any) -> bool: ...
    def session_name(self, session: str) -> str | None: ...

    def forget_room(self, session: str, room_id: str) -> None: ...
    async def room_closed(self, room: Any) -> None: ...
    async def dispatch(self, conn: Any, msg: Any) -> None: ...
