"""Quick match and its limits, end to end: real server, real clients on loopback."""

from __future__ import annotations

from typing import Any

import pytest

from clients.client import ArenaError
from protocol import messages as m


async def test_a_player_at_the_room_limit_cannot_queue(arena: Any) -> None:
    await arena.start(max_rooms_per_player=1)
    ann = await arena.client("ann", token="a")
    await ann.create_room("collapsi", seat=0)
    with pytest.raises(ArenaError) as exc:
        await ann.quick_match("collapsi")
    assert exc.value.code == "too_many_rooms"
    assert (
        await arena.arena.presence.queues.waiting(arena.arena.sessions[ann.session].queue or "")
        == []
    )


async def test_a_player_who_reached_the_limit_while_queued_is_told_and_the_other_waits(
    arena: Any,
) -> None:
    """The room's creator is picked at random from the pair: several trials, so both the
    player at the limit and the other one get to be it."""
    a = await arena.start(max_rooms_per_player=1, match_gap=1000)
    for trial in range(4):
        full = await arena.client(f"full{trial}", token="f")
        other = await arena.client(f"other{trial}", token="o")
        await full.quick_match("collecto")
        await full.create_room("collapsi", seat=0)  # at the limit while queued
        await other.quick_match("collecto")
        told = await full.next(type=("error", "matched"), timeout=5)
        assert told.type == "error" and told.code == "too_many_rooms" and told.re is None
        assert a.sessions[full.session].queue is None
        # the other one is still queued: a newcomer is paired with it
        third = await arena.client(f"third{trial}", token="t")
        await third.quick_match("collecto")
        mo, mt = await other.next(type="matched"), await third.next(type="matched")
        assert mo.room == mt.room
        assert [x for x in full.received if x.type == "matched"] == []
        assert a.registry.player_rooms(a.sessions[full.session]) == 1


async def test_quick_match_pairs_only_the_same_time_control(arena: Any) -> None:
    await arena.start(match_gap=1000)
    blitz = m.Fischer(base_ms=60_000, increment_ms=1_000)
    slow = m.Fischer(base_ms=60_000, increment_ms=5_000)
    ann, bob, cat = [await arena.client(n, token=n) for n in ("ann", "bob", "cat")]
    await ann.quick_match("collapsi", time_control=blitz)
    queued = await bob.quick_match("collapsi", time_control=slow)
    assert queued.waiting == 1  # a queue of its own: not paired with ann
    await cat.quick_match("collapsi", time_control=blitz)
    ma, mc = await ann.next(type="matched"), await cat.next(type="matched")
    assert ma.room == mc.room
    state = await ann.next(type="room_state", room=ma.room)
    assert state.time_control == blitz
    await bob.cancel_quick_match()
    assert [x for x in bob.received if x.type == "matched"] == []


@pytest.mark.parametrize("variant", ["solo", "custom"])
async def test_a_queue_whose_room_could_not_start_is_refused_at_once(
    arena: Any, variant: str
) -> None:
    """A pairing opens a two-seat room without options: a variant that cannot be
    played so (solo; custom, which needs its deck) is bad_setup for the request, as
    create_room says, not an error for both players once paired."""
    await arena.start()
    ann = await arena.client("ann", token="a")
    with pytest.raises(ArenaError) as refused:
        await ann.quick_match("collapsi", variant=variant, rated=False)
    assert refused.value.code == "bad_setup"
    queued = await ann.quick_match("collapsi", variant="big-board", rated=False)
    assert queued.variant == "big-board"
