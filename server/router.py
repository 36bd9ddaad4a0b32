"""Where a room or a session lives: on this node only (:class:`LocalRouter`), or on any
node sharing the presence store (:class:`server.cluster.Cluster`, same methods).

Why: handlers and rooms ask the router and never whether the server is clustered.
One node answers "here, or nowhere"; a cluster forwards to the owner node.
"""

from __future__ import annotations

from typing import Any

from protocol.outgoing import Outgoing


class LocalRouter:
    """One node: every room and session it knows is its own."""

    #: the room log's fencing owner (None: no lease is checked on append)
    owner: str | None = None

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    def deliver(self, session: str, out: Outgoing) -> None:
        """``out`` for a session this node does not hold: nobody to tell."""

    def note(self, session: str, out: Outgoing) -> None:
        """``out`` went to a connection here (a cluster tracks what each one has seen)."""

    def name_of(self, session: str) -> str | None:
        return None

    def stream_catch_up(self, session: str, stream: Any) -> bool:
        """A catch-up for a session this node does not hold: nobody to send it to."""
        return False

    def forget(self, session: str, room_id: str) -> None:
        pass

    def send(self, node: str, item: Any) -> None:
        raise AssertionError(f"one node: no node {node} to send to")

    def resumed(self, session: str, seen: dict[str, int]) -> None:
        pass

    def adopts_sessions(self) -> bool:
        """Whether a session this node does not hold may resume here (another node's)."""
        return False

    async def remote_session(self, sid: str) -> Any:
        return None

    def cached_room(self, room_id: str) -> Any:
        return None

    async def find_room(self, room_id: str) -> Any:
        return None

    async def find_invite(self, invite: str) -> str | None:
        return None

    def members_meta(self, room: Any) -> dict[str, Any] | None:
        """What presence keeps of the room's members (None: nothing, one node)."""
        return None

    async def check_refusal(self, room: Any, exc: Exception) -> Exception:
        return exc

    def retire(self, room: Any) -> None:
        """A failed append: one node keeps its copy (nobody else can have moved it)."""
