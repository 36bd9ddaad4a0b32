"""What PROTOCOL.md says, the server does: variant combinations, and the quick-match
message order for both players. Real server and clients on loopback."""

from __future__ import annotations

from typing import Any

import pytest

from clients.client import ArenaError


@pytest.mark.parametrize(
    ("asked", "named"),
    [
        ("big-board+shifting", "big-board+shifting"),  # PROTOCOL.md's create_room example
        ("shifting+big-board", "big-board+shifting"),
        ("players-choice+shifting", "shifting+players-choice"),
        ("big-board+players-choice", "big-board+players-choice"),
    ],
)
async def test_variant_combinations_are_played_as_the_engine_plays_them(
    arena: Any, asked: str, named: str
) -> None:
    await arena.start()
    ann, bob = await arena.client("ann"), await arena.client("bob")
    state = await ann.create_room("collapsi", variant=asked, seat=0)
    assert state.variant == named
    await bob.join(state.room)
    await bob.take_seat(state.room, 1)
    await ann.ready(state.room)
    await bob.ready(state.room)
    started = await ann.next(type="game_started")
    assert started.legal_moves or started.to_move is not None


async def test_unknown_and_impossible_combinations_are_refused_with_their_codes(
    arena: Any,
) -> None:
    await arena.start()
    ann = await arena.client("ann")
    for variant, code in (
        ("warp+shifting", "unknown_game"),
        ("solo+shifting", "bad_setup"),
        ("big-board+solo", "bad_setup"),
    ):
        with pytest.raises(ArenaError) as refused:
            await ann.create_room("collapsi", variant=variant)
        assert refused.value.code == code, variant


async def test_both_quick_matched_players_get_every_event_in_the_documented_order(
    arena: Any,
) -> None:
    """Spelled differently, one combination is one queue; each player gets both
    player_joined (seq 1 and 2), matched, both seat_taken, then the room_state."""
    await arena.start()
    ann, bob = await arena.client("ann", token="a"), await arena.client("bob", token="b")
    await ann.quick_match("collapsi", variant="big-board+shifting", rated=False)
    await bob.quick_match("collapsi", variant="shifting+big-board", rated=False)
    for c in (ann, bob):
        await c.next(type="room_state")
    for c in (ann, bob):
        kinds = [
            (msg.type, getattr(msg, "seq", None))
            for msg in c.received
            if msg.type in ("player_joined", "matched", "seat_taken", "game_started", "room_state")
        ]
        assert kinds[:7] == [
            ("player_joined", 1),
            ("player_joined", 2),
            ("matched", None),
            ("seat_taken", 3),
            ("seat_taken", 4),
            ("game_started", 5),
            ("room_state", 5),
        ], kinds
        assert not [msg for msg in c.received if msg.type in ("catch_up", "error")]
