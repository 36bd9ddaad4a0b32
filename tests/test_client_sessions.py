"""The client library keeps the session it has: the one a reconnect resumes, with the
rooms it is still in, through a real server on loopback."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clients.client import UnknownSessionError


async def _until_gone(arena: Any, session: str) -> None:
    """Wait (bounded) until the server let the session go (its grace period ran out)."""
    for _ in range(500):
        if session not in arena.sessions:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{session} still kept")


async def test_after_a_failed_resume_and_a_fresh_login_reconnect_resumes_the_new_session(
    arena: Any,
) -> None:
    server = await arena.start(grace=1.0)
    ann = await arena.client("ann", token="t-ann")
    first = ann.session
    await ann.create_room("collapsi", seat=0)
    ann.abort()
    await _until_gone(server, first)
    with pytest.raises(UnknownSessionError):
        await ann.reconnect()
    await ann.login("ann", token="t-ann")  # a fresh session, on this connection
    assert ann.session == ann.welcome.session != first
    state = await ann.create_room("collapsi", seat=0)
    ann.abort()  # drops again, well within the grace period
    resumed = await ann.reconnect()
    assert resumed.session != first
    assert resumed.rooms == [state.room]
    await ann.next(type="player_reconnected", room=state.room)  # the seat was kept
    after = ann.received[ann.received.index(resumed) + 1 :]
    assert after[0].type == "catch_up" and after[0].room == state.room  # from its seq
