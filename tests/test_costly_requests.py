"""Requests that deal a solo puzzle are charged by their cost (server/costly_requests.py,
issue 13): one address's connections share a deal budget, so creating puzzles over
and over is soon answered ``rate_limited`` with ``retry_after`` (before any room is
made), whatever the number of connections and guest names; every connection pays
tokens of its own rate for each; other rooms are not charged; and a player starting
puzzles at a human pace never meets the limit. Real servers on loopback (the
per-address exemption of loopback taken away where it matters)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from arena_process import run_arena, serve_command, start_node, stop_node
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from clients.client import ArenaError, Client
from protocol.errors import ProtocolError
from server.config import Config
from server.costly_requests import CostlyRequests
from server.ratelimit import TokenBucket

SOLO = {"variant": "solo", "options": {"size": 4}, "seat": 0}


async def test_new_puzzles_from_one_address_are_throttled_across_connections(
    arena: Any,
) -> None:
    server = await arena.start(address_limits_exempt=(), deal_burst=3, deal_per_second=0.01)
    ann, bob = await arena.client("ann"), await arena.client("bob")
    for _ in range(2):
        await ann.create_room("collapsi", **SOLO)
    await bob.create_room("collapsi", **SOLO)  # the address's third
    rooms = set(server.rooms)
    for who in (bob, await arena.client("carl")):  # another connection, another name
        with pytest.raises(ArenaError) as refused:
            await who.create_room("collapsi", **SOLO)
        assert refused.value.code == "rate_limited"
        assert refused.value.retry_after > 1000  # a puzzle per 100 s
    assert set(server.rooms) == rooms  # refused before any room was made
    classic = await bob.create_room("collapsi", seat=0)  # not a costly deal: not charged
    assert classic.room in server.rooms


async def test_a_rematch_of_a_puzzle_is_charged_as_a_new_one(arena: Any) -> None:
    await arena.start(address_limits_exempt=(), deal_burst=1, deal_per_second=0.01)
    ann = await arena.client("ann")
    state = await ann.create_room("collapsi", variant="solo", options={"size": 3}, seat=0)
    await ann.ready(state.room)
    await ann.next(type="game_started", room=state.room)
    await ann.resign(state.room)
    await ann.next(type="game_over", room=state.room)
    with pytest.raises(ArenaError) as refused:
        await ann.offer_rematch(state.room)
    assert refused.value.code == "rate_limited" and refused.value.retry_after > 0


async def test_each_puzzle_costs_its_connection_tokens_even_from_an_exempt_address(
    arena: Any,
) -> None:
    """Loopback is exempt from the address budget, not from the connection's rate: with
    30 tokens and a deal costing 10, a third puzzle leaves nothing for the next message."""
    await arena.start(rate_burst=30, rate_per_second=0.1, deal_cost=10)
    ann = await arena.client("ann")  # (the login took a token: 29 left)
    await ann.create_room("collapsi", **SOLO)
    await ann.create_room("collapsi", **SOLO)  # 9 left
    with pytest.raises(ArenaError) as refused:
        await ann.create_room("collapsi", **SOLO)  # a token for the frame, in debt after
        await ann.list_rooms()
    assert refused.value.code == "rate_limited"


def test_a_player_at_a_human_pace_is_never_throttled_an_attacker_at_once() -> None:
    """The default budgets, on a clock the test moves: a puzzle every 2.5 s for an hour
    never meets a limit; eight connections of one address asking at once are refused
    from the seventh on."""
    now = [0.0]
    clock = lambda: now[0]  # noqa: E731
    config = Config()
    costly = CostlyRequests(config, exempt=lambda address: False, clock=clock)

    def conn(address: str) -> Any:
        bucket = TokenBucket(config.rate_burst, config.rate_per_second, clock)
        return SimpleNamespace(address=address, bucket=bucket)

    player = conn("192.0.2.1")
    for _ in range(1440):
        now[0] += 2.5
        assert player.bucket.take() is None  # the frame
        costly.charge_deal(player, "collapsi", "solo", {"size": 4})
    attackers = [conn("192.0.2.2") for _ in range(8)]
    refused = 0
    for c in attackers:
        try:
            costly.charge_deal(c, "collapsi", "solo", {"size": 4})
        except ProtocolError as exc:
            assert exc.code == "rate_limited" and exc.retry_after
            refused += 1
    assert refused == 8 - config.deal_burst


async def test_arena_serve_takes_the_address_limits_from_its_flag() -> None:
    """``arena serve --address-limits puzzles=1/0.01,conns=2`` as a user runs it: the
    second puzzle and the third connection of the address are refused; a bad value is
    a usage error naming the flag."""
    limits = ["--address-limits-exempt", "none", "--address-limits", "puzzles=1/0.01,conns=2"]
    node = await start_node(serve_command("--store", "memory", *limits))
    try:
        ann = Client(node.url)
        await ann.connect()
        try:
            await ann.login("ann")
            await ann.create_room("collapsi", **SOLO)
            with pytest.raises(ArenaError) as refused:
                await ann.create_room("collapsi", **SOLO)
            assert refused.value.code == "rate_limited"
            async with connect(node.url, compression=None):  # the address's second
                with pytest.raises(InvalidStatus) as third:
                    await connect(node.url, compression=None)
                assert third.value.response.status_code == 429
        finally:
            await ann.close()
    finally:
        await stop_node(node)
    bad = run_arena("serve", "--address-limits", "puzzles=6", timeout=60)
    assert bad.returncode != 0
    assert "--address-limits: puzzles wants BURST/PER_S, not '6'" in bad.stderr
