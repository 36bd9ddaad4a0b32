"""What PROTOCOL.md now says where it was silent (issue 13), held against the reference
server through real clients on loopback: a refused ``hello`` closes 4000/4001 with
its error as the last frame (no ``goodbye``); no ``clock_update`` at a game's start
or after a move (``game_started`` and ``move_made`` carry the clock); spectators'
chat reaches the players, marked; a ``custom`` room is created with the documented
``options``. (The Collecto tie-break, ruling 14, is the engine's:
``tests/test_collecto_rules.py``; which node owns a room is nothing a client sees:
``tests/test_multinode.py`` plays across nodes through any node.)"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_server_games import ready_all, seat_players
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from clients.client import ArenaError
from protocol import messages as m
from protocol.codec import decode_server, encode


@pytest.mark.parametrize(
    ("hello", "code", "close"),
    [
        (m.Ping(id=1), "hello_required", 4000),
        (m.Hello(versions=[99], software="future"), "unsupported_version", 4001),
    ],
)
async def test_a_refused_hello_closes_with_its_error_last_and_no_goodbye(
    arena: Any, hello: Any, code: str, close: int
) -> None:
    await arena.start()
    ws = await connect(arena.url, compression=None)
    await ws.send(encode(hello, binary=False))
    frames = []
    with pytest.raises(ConnectionClosed):
        while True:
            frames.append(decode_server(await asyncio.wait_for(ws.recv(), 10)))
    assert [(f.type, f.code) for f in frames] == [("error", code)]
    assert ws.close_code == close


async def test_no_clock_update_at_the_start_nor_after_a_move(arena: Any) -> None:
    await arena.start()
    tc = m.Fischer(base_ms=600_000, increment_ms=1_000)
    room, clients = await seat_players(arena, "collapsi", ["ann", "bob"], time_control=tc)
    await ready_all(room, clients)
    started = await clients[0].next(type="game_started", room=room)
    assert started.clock is not None and started.clock.running == started.to_move
    mover = clients[started.to_move]
    await mover.move(room, started.legal_moves[0])
    made = await clients[0].next(type="move_made", room=room)
    assert made.clock is not None and made.clock.running == made.to_move
    for c in clients:  # (a round trip: whatever the server sent before is in)
        await c.ping()
        assert not [e for e in c.received if e.type == "clock_update"]


async def test_spectators_chat_reaches_the_players_marked_as_such(arena: Any) -> None:
    await arena.start()
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"])
    await ready_all(room, [ann, bob])
    await ann.next(type="game_started", room=room)
    carl = await arena.client("carl")
    await carl.watch(room)
    await carl.chat(room, "nice move")
    for player in (ann, bob):
        heard = await player.next(type="chat_message", room=room)
        assert (heard.name, heard.text, heard.spectator) == ("carl", "nice move", True)
    await ann.chat(room, "thanks")
    heard = await carl.next(type="chat_message", room=room, where=lambda e: e.name == "ann")
    assert (heard.text, heard.spectator) == ("thanks", False)


async def test_a_custom_room_is_made_with_the_documented_options(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann")
    # PROTOCOL.md's own example, then a deck of its own (a 5x5 board: 25 cards)
    preset = await ann.create_room(
        "collapsi", variant="custom+shifting", options={"preset": "5x5"}, seat=0
    )
    assert preset.variant == "custom+shifting"
    deck = {"J": 2, "1": 6, "2": 6, "3": 6, "4": 5}
    state = await ann.create_room(
        "collapsi", variant="custom", options={"deck": deck, "size": 5}, seat=0
    )
    bob = await arena.client("bob")
    await bob.join(state.room)
    await bob.take_seat(state.room, 1)
    await ready_all(state.room, [ann, bob])
    started = await ann.next(type="game_started", room=state.room)
    assert len(started.setup) == 25 and started.setup.count("J") == 2
    for options in ({}, {"deck": {**deck, "4": 4}, "size": 5}, {"preset": "9x9"}):
        with pytest.raises(ArenaError) as refused:
            await ann.create_room("collapsi", variant="custom", options=options, seat=0)
        assert refused.value.code == "bad_setup", options
