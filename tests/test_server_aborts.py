"""A game that ends before every player has made a move is aborted (no winner, unrated;
the Lichess convention), a player may abort it until then, and a logout or a clean close
frees the player's name at once (the grace period is for dropped connections)."""

from __future__ import annotations

from typing import Any

import pytest

from clients.client import ERRORS, NameTakenError
from engine.match import Match, TimeControl, TooLateToAbort
from protocol import messages as m


async def rated_game(arena: Any, **create: Any) -> tuple[Any, Any, str, Any]:
    """ann and bob (tokens) seated in a rated Collapsi room; the game started."""
    ann = await arena.client("ann", token="ann-secret")
    bob = await arena.client("bob", token="bob-secret")
    room = (await ann.create_room("collapsi", seat=0, rated=True, **create)).room
    await bob.join(room)
    await bob.take_seat(room, 1)
    await ann.ready(room)
    await bob.ready(room)
    started = await ann.next(type="game_started", room=room)
    return ann, bob, room, started


async def assert_unrated_abort(watcher: Any, room: str) -> None:
    over = await watcher.next(type="game_over", room=room)
    assert over.result.reason == "aborted" and over.result.winner is None
    assert over.ratings == []
    board = await watcher.request(m.GetLeaderboard(game="collapsi"))
    assert board.entries == []  # nobody rated


async def test_a_resign_before_the_first_move_is_aborted_and_unrated(arena: Any) -> None:
    await arena.start()
    ann, bob, room, _ = await rated_game(arena)
    await bob.resign(room)
    await assert_unrated_abort(ann, room)


async def test_a_resign_after_one_player_moved_is_still_aborted(arena: Any) -> None:
    await arena.start()
    ann, bob, room, started = await rated_game(arena)
    players = [ann, bob]
    await players[started.to_move].move(room, started.legal_moves[0])
    await players[started.to_move].resign(room)  # the other one never moved
    await assert_unrated_abort(ann, room)


async def test_once_both_moved_a_resign_is_rated_and_abort_is_forbidden(arena: Any) -> None:
    await arena.start()
    ann, bob, room, ev = await rated_game(arena)
    players = [ann, bob]
    for _ in range(2):
        await players[ev.to_move].move(room, ev.legal_moves[0])
        ev = await ann.next(type="move_made", room=room)
    with pytest.raises(ERRORS["forbidden"]):
        await ann.abort_game(room)
    await ann.resign(room)
    over = await bob.next(type="game_over", room=room)
    assert over.result.reason == "resign" and over.result.winner == 1
    assert [c.name for c in over.ratings] == ["ann", "bob"]


async def test_a_player_may_abort_before_everyone_moved(arena: Any) -> None:
    await arena.start()
    ann, bob, room, started = await rated_game(arena)
    players = [ann, bob]
    await players[started.to_move].move(room, started.legal_moves[0])
    await players[started.to_move].abort_game(room)  # the mover (moved already) aborts
    await assert_unrated_abort(bob, room)


async def test_a_flag_fall_on_the_first_move_is_aborted(arena: Any) -> None:
    await arena.start()
    ann, _bob, room, _ = await rated_game(arena, time_control=m.PerMove(ms=200))
    await assert_unrated_abort(ann, room)


def test_match_aborts_until_every_seat_still_in_has_moved() -> None:
    match = Match.new("collapsi", ["a", "b"], seed=3, time_control=TimeControl())
    match.start(0)
    assert match.abortable()
    match.submit_move(match.to_move(), match.game.legal_moves()[0], 10)  # type: ignore[arg-type]
    assert match.abortable()
    match.submit_move(match.to_move(), match.game.legal_moves()[0], 20)  # type: ignore[arg-type]
    assert not match.abortable()
    with pytest.raises(TooLateToAbort):
        match.abort_by(0, 30)
    events = match.resign(0, 30)
    assert events[-1]["result"]["reason"] == "resign"


async def test_logout_frees_the_name_at_once(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann")
    await ann.logout()
    again = await arena.client()
    assert (await again.login("ann")).name == "ann"


async def test_a_clean_close_frees_the_name_and_leaves_the_game(arena: Any) -> None:
    await arena.start()
    ann, bob, room, _ = await rated_game(arena)
    await ann.close()  # close code 1000: a goodbye
    await assert_unrated_abort(bob, room)
    again = await arena.client("ann", token="ann-secret")
    assert again.player.name == "ann"


async def test_a_dropped_connection_keeps_the_name_for_its_grace_period(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann")
    ann.abort()  # a network failure: no close frame
    await ann.closed.wait()
    other = await arena.client()
    with pytest.raises(NameTakenError):
        await other.login("ann")
    resumed = await ann.reconnect()
    assert resumed.player.name == "ann"
