"""The client library keeps the session it has: the one a reconnect resumes, with the
rooms it is still in, through a real server on loopback."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import strong

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
    await ann.login("ann", token=strong("t-ann"))  # a fresh session, on this connection
    assert ann.session == ann.welcome.session != first
    state = await ann.create_room("collapsi", seat=0)
    ann.abort()  # drops again, well within the grace period
    resumed = await ann.reconnect()
    assert resumed.session != first
    assert resumed.rooms == [state.room]
    await ann.next(type="player_reconnected", room=state.room)  # the seat was kept
    after = ann.received[ann.received.index(resumed) + 1 :]
    assert after[0].type == "catch_up" and after[0].room == state.room  # from its seq


async def test_a_resume_catches_up_the_live_game_after_more_than_64_rooms_left(
    arena: Any,
) -> None:
    await arena.start(rate_burst=10**6, rate_per_second=10**6)
    ann = await arena.client("ann", token="t-ann")
    bob = await arena.client("bob", token="t-bob")
    for _ in range(70):  # rooms the client has been in and left: none is the session's now
        left = await ann.create_room("collapsi")
        await ann.leave(left.room)
    room = (await ann.create_room("collapsi", seat=0)).room
    await bob.join(room)
    await bob.take_seat(room, 1)
    await ann.ready(room)
    await bob.ready(room)
    started = await bob.next(type="game_started", room=room)
    if started.to_move == 0:
        await ann.move(room, started.legal_moves[0])
        started = await bob.next(type="move_made", room=room)
    await ann.next(type="game_started", room=room)
    ann.abort()
    await bob.next(type="player_disconnected", room=room)
    await bob.move(room, started.legal_moves[0])  # while ann is away
    resumed = await ann.reconnect()
    assert resumed.rooms == [room]
    await ann.next(type="player_reconnected", room=room)  # follows the catch-up
    after = ann.received[ann.received.index(resumed) + 1 :]
    assert after[0].type == "catch_up" and after[0].room == room  # by seq, not a snapshot
    moved = [e for e in after if e.type == "move_made" and e.seat == 1]
    assert moved and moved[0] in ann.events(room)  # bob's move, as if it arrived live
