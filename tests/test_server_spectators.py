"""The live spectator count (``spectators``, added within protocol v1): every member of a
room hears it when it changes, players and spectators alike, private rooms too; a member
whose connection dropped hears it again after its catch-up (the notice is not logged)."""

from __future__ import annotations

from typing import Any

import pytest
from test_server_games import seat_players


async def counts(client: Any, room: str, *wanted: int) -> None:
    """``client`` is told each of ``wanted`` in turn (the counts it sees, in order)."""
    for n in wanted:
        told = await client.next(type="spectators", room=room, timeout=10)
        assert told.count == n


@pytest.mark.timeout(60)
async def test_players_and_spectators_hear_the_count_as_it_changes(arena: Any) -> None:
    await arena.start()
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"])
    carl = await arena.client("carl")
    state = await carl.watch(room)
    assert state.spectators == 1
    dan = await arena.client()  # anonymous spectators count too
    await dan.watch(room)
    await carl.leave(room)
    await dan.leave(room)
    for player in (ann, bob):
        await counts(player, room, 1, 2, 1, 0)
    await counts(carl, room, 1, 2)
    assert [x.count for x in dan.received if x.type == "spectators"] == [2, 1]  # not its own leave


@pytest.mark.timeout(60)
async def test_a_private_rooms_watchers_are_counted_for_its_members(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann")
    state = await ann.create_room("collapsi", seat=0, private=True)
    carl = await arena.client("carl")
    await carl.join(None, invite=state.invite, role="spectator")
    await counts(ann, state.room, 1)


@pytest.mark.timeout(60)
async def test_a_resumed_player_hears_the_count_it_missed_after_its_catch_up(
    arena: Any,
) -> None:
    await arena.start(grace=30)
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"])
    ann.abort()  # ann's socket dies
    await bob.next(type="player_disconnected", room=room)
    carl = await arena.client("carl")
    await carl.watch(room)
    await counts(bob, room, 1)
    await ann.reconnect()
    await counts(ann, room, 1)
    catch_up = [i for i, x in enumerate(ann.received) if x.type == "catch_up"]
    told = [i for i, x in enumerate(ann.received) if x.type == "spectators"]
    assert catch_up and told and catch_up[-1] < told[-1]
