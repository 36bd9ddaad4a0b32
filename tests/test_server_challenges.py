"""Challenges, the bot pool and the per-bot cap (issue 16), end to end through real clients.

One node in memory, and two nodes sharing a real Redis (a challenge to a player on
the other node is delivered at once and played).
"""

from __future__ import annotations

from typing import Any

import pytest

from clients.client import ArenaError, Client
from protocol import messages as m

GAME_EVENTS = ("game_started", "move_made", "player_eliminated", "game_over")


async def play_out(players: dict[int, Client], room: str) -> m.GameResult:
    """Both sides play their first legal move until the game ends; the result."""
    seated = list(players.items())
    while True:
        for seat, c in seated:
            ev = await c.next(type=GAME_EVENTS, room=room, timeout=20)
            if ev.type == "game_over":
                return ev.result
            if ev.to_move == seat and ev.legal_moves:
                await c.move(room, ev.legal_moves[0])


async def accept_and_play(ann: Client, bob: Client, **challenge: Any) -> m.GameResult:
    sent = await ann.challenge("bob", "collapsi", **challenge)
    got = await bob.next(type="challenged", timeout=20)
    assert got.challenge == sent.challenge and got.player.name == "ann"
    assert (got.game, got.rules, got.variant) == ("collapsi", "standard", "base")
    await bob.accept_challenge(got.challenge)
    ma = await ann.next(type="matched", timeout=20)
    mb = await bob.next(type="matched", timeout=20)
    assert ma.room == mb.room and {ma.seat, mb.seat} == {0, 1}
    assert ma.challenge == mb.challenge == sent.challenge  # (which challenge: both sides)
    return await play_out({ma.seat: ann, mb.seat: bob}, ma.room)


async def test_a_challenge_accepted_is_played(arena: Any) -> None:
    await arena.start()
    ann, bob = await arena.client("ann"), await arena.client("bob", bot=True)
    result = await accept_and_play(ann, bob, variant="base")
    assert result.reason == "no_moves"


async def test_decline_cancel_and_refusals(arena: Any) -> None:
    await arena.start()
    ann, bob = await arena.client("ann"), await arena.client("bob")
    sent = await ann.challenge("bob", "collapsi")
    got = await bob.next(type="challenged")
    await bob.decline_challenge(got.challenge)
    ended = await ann.next(type="challenge_ended")
    assert (ended.challenge, ended.reason) == (sent.challenge, "declined")
    with pytest.raises(ArenaError, match="unknown_challenge"):
        await bob.accept_challenge(got.challenge)

    sent = await ann.challenge("bob", "collecto")
    got = await bob.next(type="challenged")
    assert got.game == "collecto"
    with pytest.raises(ArenaError, match="unknown_challenge"):  # not ann's to accept
        await ann.accept_challenge(sent.challenge)
    await ann.cancel_challenge(sent.challenge)
    ended = await bob.next(type="challenge_ended")
    assert (ended.challenge, ended.reason) == (sent.challenge, "canceled")

    for name, game, code in [
        ("nobody", "collapsi", "unknown_player"),
        ("ann", "collapsi", "bad_request"),
        ("bob", "chess", "unknown_game"),
    ]:
        with pytest.raises(ArenaError, match=code):
            await ann.challenge(name, game)
    with pytest.raises(ArenaError, match="forbidden"):  # a guest's rated challenge
        await ann.challenge("bob", "collapsi", rated=True)

    sent = await ann.challenge("bob", "collapsi")
    await bob.next(type="challenged")
    await ann.logout()
    ended = await bob.next(type="challenge_ended")
    assert (ended.challenge, ended.reason) == (sent.challenge, "gone")


async def decline_with_reason(ann: Client, bob: Client, reason: str | None) -> m.ChallengeEnded:
    """ann challenges bob, who declines with ``reason``: what ann is told."""
    sent = await ann.challenge("bob", "collecto")
    got = await bob.next(type="challenged", timeout=20)
    await bob.decline_challenge(got.challenge, reason)
    ended = await ann.next(type="challenge_ended", timeout=20)
    assert (ended.challenge, ended.reason) == (sent.challenge, "declined")
    return ended


async def test_a_decline_says_why_to_the_challenger(arena: Any) -> None:
    await arena.start()
    ann, bob = await arena.client("ann"), await arena.client("bob", bot=True)
    for reason in ("game", "later", "no_challenges", None):
        assert (await decline_with_reason(ann, bob, reason)).decline_reason == reason
    sent = await ann.challenge("bob", "collapsi")
    got = await bob.next(type="challenged")
    bad = {"type": "decline_challenge", "id": 99, "challenge": got.challenge, "reason": "x"}
    await bob.send_wire(bad)  # (not one of the reasons)
    refused = await bob.next(type="error", where=lambda e: e.re == 99, timeout=20)
    assert refused.code == "bad_request" and "reason" in refused.message, refused
    await bob.decline_challenge(got.challenge, "rated")  # (still open: nothing was lost)
    ended = await ann.next(type="challenge_ended")
    assert (ended.challenge, ended.decline_reason) == (sent.challenge, "rated")


async def test_a_guest_cannot_accept_a_rated_challenge(arena: Any) -> None:
    """Refused at the accept (before, the room opened and closed at once, and neither
    side was told why); the challenge stays open, to be declined."""
    await arena.start()
    ann = await arena.client("ann", token="ann-token-0123456789abcdef")
    guest = await arena.client("guest-bot", bot=True)
    sent = await ann.challenge("guest-bot", "collapsi", rated=True)
    got = await guest.next(type="challenged", timeout=20)
    with pytest.raises(ArenaError, match="forbidden"):
        await guest.accept_challenge(got.challenge)
    await guest.decline_challenge(got.challenge, "rated")
    ended = await ann.next(type="challenge_ended", timeout=20)
    assert (ended.challenge, ended.decline_reason) == (sent.challenge, "rated")


async def test_humans_who_say_no_bots_never_meet_the_bot_pool(arena: Any) -> None:
    await arena.start()
    bot = await arena.client("pool-bot", bot=True)
    ann, bob = await arena.client("ann"), await arena.client("bob")
    await bot.quick_match("collapsi", rated=False)
    await ann.quick_match("collapsi", rated=False, bots=False)
    await bob.quick_match("collapsi", rated=False, bots=False)
    ma = await ann.next(type="matched", timeout=20)
    mb = await bob.next(type="matched", timeout=20)
    assert ma.room == mb.room  # the humans met each other; the bot still waits
    assert ma.challenge is None  # (a quick match: no challenge)
    cat = await arena.client("cat")
    await cat.quick_match("collapsi", rated=False)  # bots allowed (the default)
    mc = await cat.next(type="matched", timeout=20)
    mbot = await bot.next(type="matched", timeout=20)
    assert mc.room == mbot.room != ma.room


async def test_the_operator_caps_a_bots_games_at_once(arena: Any) -> None:
    await arena.start(bot_max_games=1)
    bot = await arena.client("capped", bot=True)
    ann, bob = await arena.client("ann"), await arena.client("bob")
    await ann.challenge("capped", "collapsi")
    got = await bot.next(type="challenged")
    await bot.accept_challenge(got.challenge)
    await bot.next(type="matched")
    with pytest.raises(ArenaError, match="too_many_rooms"):
        await bot.quick_match("collapsi", rated=False)
    await bob.challenge("capped", "collapsi")
    got = await bot.next(type="challenged")
    with pytest.raises(ArenaError, match="too_many_rooms"):
        await bot.accept_challenge(got.challenge)
    await ann.challenge("bob", "collapsi")  # a human is not capped so
    got = await bob.next(type="challenged")
    await bob.accept_challenge(got.challenge)
    await bob.next(type="matched")


async def test_the_operators_cap_lets_a_bot_play_more_games_than_a_player(arena: Any) -> None:
    # one runner may play many games at once: the per-bot cap replaces the players' limit
    await arena.start(max_rooms_per_player=1, bot_max_games=2)
    bot = await arena.client("busy", bot=True)
    ann, bob, cat = [await arena.client(n) for n in ("ann", "bob", "cat")]
    rooms = set()
    for human in (ann, bob):
        await human.challenge("busy", "collapsi")
        got = await bot.next(type="challenged")
        await bot.accept_challenge(got.challenge)
        rooms.add((await bot.next(type="matched")).room)
    assert len(rooms) == 2  # two games at once, over the players' limit of one
    await cat.challenge("busy", "collapsi")
    got = await bot.next(type="challenged")
    with pytest.raises(ArenaError, match="too_many_rooms"):
        await bot.accept_challenge(got.challenge)


async def test_a_challenge_reaches_a_player_on_another_node(
    arena: Any, redis_url: str, redis_prefix: str
) -> None:
    n1 = await arena.start(presence_url=redis_url, prefix=redis_prefix, node="ch1")
    ann = await arena.client("ann")
    n2 = await arena.start(presence_url=redis_url, prefix=redis_prefix, node="ch2")
    bob = await arena.client("bob", bot=True)
    assert n1.node != n2.node and ann.url != bob.url
    result = await accept_and_play(ann, bob)
    assert result.reason == "no_moves"
    assert (await decline_with_reason(ann, bob, "time_control")).decline_reason == "time_control"
    assert (await decline_with_reason(ann, bob, None)).decline_reason is None
    await bob.logout()  # the name is no longer reachable from the other node
    with pytest.raises(ArenaError, match="unknown_player"):
        await ann.challenge("bob", "collapsi")


async def test_a_rated_challenge_puts_the_bot_on_the_leaderboard_marked(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann", token="ann-token-0123456789abcdef")
    bob = await arena.client("bob", token="bob-token-0123456789abcdef", bot=True)
    result = await accept_and_play(ann, bob, rated=True)
    assert result.reason == "no_moves"
    board = {e.name: e.bot for e in await ann.leaderboard("collapsi")}
    assert board == {"ann": False, "bob": True}
