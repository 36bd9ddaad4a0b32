"""Room rules the protocol states, end to end: real server, real clients on loopback."""

from __future__ import annotations

from typing import Any

import pytest
from test_server_games import everyone_moves, ready_all, seat_players

from clients.client import ArenaError
from protocol import messages as m


async def test_ready_after_game_over_is_refused_and_points_at_the_rematch(arena: Any) -> None:
    await arena.start()
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"])
    await ready_all(room, [ann, bob])
    await ann.next(type="game_started", room=room)
    await bob.resign(room)
    await ann.next(type="game_over", room=room)
    for c in (ann, bob):
        with pytest.raises(ArenaError) as exc:
            await c.ready(room)
        assert exc.value.code == "bad_request" and "offer_rematch" in exc.value.message
    state = await ann.request(m.JoinRoom(room=room))
    assert state.status == "finished" and state.game_number == 1
    await ann.chat(room, "sync")  # anything the readies caused was sent before this
    await ann.next(type="chat_message", room=room)
    assert [e.type for e in ann.events(room)].count("game_started") == 1
    await ann.offer_rematch(room)
    await bob.accept_rematch(room)
    second = await ann.next(type="game_started", room=room)
    assert second.game_number == 2
    assert [s.player.name for s in second.seats] == ["bob", "ann"]


async def test_a_rematch_is_played_by_whoever_sits_now(arena: Any) -> None:
    """With ready refused after a game, a seat that changed hands is played through the
    rematch: the new game, its record and its ratings name the new player."""
    await arena.start()
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"], rated=True)
    await ready_all(room, [ann, bob])
    await everyone_moves(room, [ann, bob], await ann.next(type="game_started", room=room))
    await bob.resign(room)
    await ann.next(type="game_over", room=room)
    await bob.leave(room)
    cat = await arena.client("cat", token="cat-secret")
    await cat.join(room)
    await cat.take_seat(room, 1)
    await ann.offer_rematch(room)
    await cat.accept_rematch(room)
    second = await ann.next(type="game_started", room=room)
    assert [s.player.name for s in second.seats] == ["cat", "ann"]
    await everyone_moves(room, [cat, ann], second)
    await cat.resign(room)
    over = await ann.next(type="game_over", room=room, where=lambda e: e.game_number == 2)
    assert [c.name for c in over.ratings] == ["cat", "ann"]
    record = await ann.get_record(over.record)
    assert record.data.players == ["cat", "ann"]
