"""Hostile traffic, bounded: random and mutated frames from several connections while
two players play in another room. No crash, no traceback or error-level log line,
every frame answered (or its connection closed with a documented code), and the
other room's moves keep flowing. Real server and connections on loopback; seeded, so
a failure replays."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import msgpack
from structlog.testing import capture_logs
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from protocol.codec import to_wire
from protocol.errors import CloseCode
from protocol.examples import client_examples

CONNECTIONS = 4
FRAMES = 120  # per connection
DOCUMENTED_CLOSES = {int(c) for c in CloseCode} | {1002, 1007}


def _junk(rng: random.Random) -> Any:
    return rng.choice(
        [
            None,
            True,
            -(2**63),
            2**64 - 1,
            rng.random() * 1e300,
            "",
            "\u202e\u200b" * rng.randint(1, 40),
            "x" * rng.randint(0, 3000),
            [],
            [1] * rng.randint(0, 50),
            {},
            {"type": "hello"},
        ]
    )


def _mutated(rng: random.Random, examples: list[dict[str, Any]]) -> bytes | str:
    """A frame: a valid example changed in a random way, or plain noise."""
    wire = dict(rng.choice(examples))
    kind = rng.randrange(8)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
    if kind == 1 and wire:
        wire[rng.choice(list(wire))] = _junk(rng)
    elif kind == 2:
        wire[f"k{rng.randrange(1000)}"] = _junk(rng)
    elif kind == 3:
        wire["type"] = rng.choice(["", "login", "move", "watch", "nope", "x" * 70])
    elif kind == 4:
        nested: Any = 1
        for _ in range(rng.randint(10, 40)):
            nested = [nested]
        wire["room"] = nested
    elif kind == 5 and wire:
        del wire[rng.choice(list(wire))]
    packed = msgpack.packb(wire)
    if kind == 6:  # flipped and cut bytes
        data = bytearray(packed)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data[: rng.randint(1, len(data))])
    if kind == 7:
        return json.dumps(wire)[: rng.randint(1, 400)]
    return packed


async def _attack(url: str, seed: int, examples: list[dict[str, Any]]) -> dict[str, int]:
    """Send FRAMES frames, each answered or its connection closed (then reconnect)."""
    rng = random.Random(seed)
    counts = {"answered": 0, "closed": 0, "unanswered": 0, "bad_close": 0}
    sent = 0
    while sent < FRAMES:
        async with connect(url, compression=None, max_size=None) as ws:
            if rng.random() < 0.7:  # most get past hello, to reach the dispatcher
                await ws.send(msgpack.packb({"type": "hello", "versions": [1], "software": "f"}))
                await ws.recv()
            try:
                while sent < FRAMES:
                    await ws.send(_mutated(rng, examples))
                    sent += 1
                    async with asyncio.timeout(5):
                        await ws.recv()
                    counts["answered"] += 1
                    while True:  # replies and events beyond the first: read them all
                        try:
                            async with asyncio.timeout(0.01):
                                await ws.recv()
                        except TimeoutError:
                            break
            except ConnectionClosed as closed:
                counts["closed"] += 1
                code = closed.rcvd.code if closed.rcvd is not None else None
                if code not in DOCUMENTED_CLOSES:
                    counts["bad_close"] += 1
            except TimeoutError:
                counts["unanswered"] += 1
    return counts


async def _play(ann: Any, bob: Any, room: str, stop: asyncio.Event) -> int:
    """Ann and Bob play (first legal move each turn, rematches after each game)."""
    by_seat: dict[int, Any] = {}
    moves = 0
    last = await ann.next(type="game_started", room=room)
    while not stop.is_set():
        if last.type == "game_started":
            by_seat = {s.seat: (ann if s.player.name == "ann" else bob) for s in last.seats}
        if not last.legal_moves:  # game over: both agree to a rematch
            await ann.next(type="game_over", room=room)
            await ann.offer_rematch(room)
            await bob.accept_rematch(room)
            last = await ann.next(type="game_started", room=room)
            continue
        await by_seat[last.to_move].move(room, last.legal_moves[0])
        moves += 1
        last = await ann.next(type="move_made", room=room)
    return moves


async def test_hostile_frames_hurt_nobody(arena: Any) -> None:
    examples = [to_wire(x) for x in client_examples()]
    with capture_logs() as logs:
        await arena.start(rate_burst=400, rate_per_second=400)  # noise reaches the decoder
        # the players move as fast as the machine allows: on a quiet one, faster than
        # their own 400 frames a second (patient: a refused move waits for its token)
        ann, bob = await arena.client("ann", patient=True), await arena.client("bob", patient=True)
        state = await ann.create_room("collapsi", seat=0)
        await bob.join(state.room)
        await bob.take_seat(state.room, 1)
        await ann.ready(state.room)
        await bob.ready(state.room)
        stop = asyncio.Event()
        play = asyncio.create_task(_play(ann, bob, state.room, stop))
        results = await asyncio.gather(
            *(_attack(arena.url, seed, examples) for seed in range(CONNECTIONS))
        )
        moves_during = 0
        stop.set()
        moves_during = await play
        assert (await arena.client("carol")).session  # the server still serves
    total = {k: sum(r[k] for r in results) for k in results[0]}
    assert total["unanswered"] == 0 and total["bad_close"] == 0, total
    assert total["answered"] + total["closed"] >= CONNECTIONS * FRAMES, total
    assert moves_during >= 10  # the other room's game went on meanwhile
    bad = [e for e in logs if e["log_level"] in ("error", "critical") or "exc_info" in e]
    assert not bad, bad[:3]
