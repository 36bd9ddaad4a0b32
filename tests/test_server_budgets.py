"""Budgets in bytes and per address, end to end on a real loopback server: a client
that does not read is cut off by the bytes waiting for it (not by their count), a
catch-up is charged by its size, and one address cannot multiply connections or its
anonymous rate. (Loopback is exempt from the per-address limits by default: these
tests take the exemption away.)"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from test_server_resilience import start_game
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from clients.client import RateLimitedError
from protocol import messages as m
from protocol.codec import encode

HELLO = '{"type":"hello","versions":[1],"software":"t"}'


async def test_a_client_that_does_not_read_is_cut_off_by_bytes(arena: Any) -> None:
    """Far fewer messages than the queue's 512 wait for it, but more bytes than its
    1 MiB... here 64 KiB: it is closed (4003) and the room goes on."""
    a = await arena.start(
        out_bytes=64 * 1024, sndbuf=4096, rate_burst=10_000, rate_per_second=10_000
    )
    room, (ann, bob), started = await start_game(arena)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", a.config.port))
    sock.setblocking(False)
    before = set(a.connections)
    lazy = await connect(arena.url, sock=sock, max_queue=1, compression=None)
    try:
        (lazy_conn,) = set(a.connections) - before
        await lazy.send(encode(m.Hello(versions=[1], software="lazy"), binary=False))
        await lazy.send(encode(m.Watch(room=room), binary=False))
        for i in range(200):  # 200 chat lines of ~560 bytes: ~110 KiB, 200 messages
            await [ann, bob][i % 2].chat(room, "x" * 500)
            if lazy_conn.done.is_set():
                break
        await asyncio.wait_for(lazy_conn.done.wait(), 5)
        assert a.metrics.slow_disconnects._value.get() == 1
        mover = [ann, bob][started.to_move]
        await mover.move(room, started.legal_moves[0])
        assert (await bob.next(type="move_made", room=room)).ply == 1
    finally:
        lazy.transport.abort()


async def test_a_catch_up_is_charged_to_its_asker_by_size(arena: Any) -> None:
    await arena.start(catch_up_bytes_per_token=1024)
    room, (ann, bob), _ = await start_game(arena)
    for i in range(30):
        await [ann, bob][i % 2].chat(room, "y" * 400)  # a log of ~15 KiB
    reader = await arena.client()
    with pytest.raises(RateLimitedError) as limited:
        for _ in range(10):  # 10 messages of a 40-message burst, but ~15 tokens each
            await reader.watch(room, since_seq=0)
    assert limited.value.retry_after > 0


async def _status(url: str) -> int:
    try:
        ws = await connect(url, compression=None)
    except InvalidStatus as exc:
        return exc.response.status_code
    await ws.close()
    return 101


async def test_one_address_has_a_connection_and_handshake_budget(arena: Any) -> None:
    await arena.start(address_limits_exempt=(), max_conns_per_address=3, handshake_burst=100)
    held = [await connect(arena.url, compression=None) for _ in range(3)]
    assert await _status(arena.url) == 429  # a fourth at once: refused
    await held.pop().close()
    for _ in range(50):  # the server sees the close soon after
        if await _status(arena.url) == 101:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("a freed connection slot was not given back")
    for ws in held:
        await ws.close()


async def test_handshakes_per_address_are_rate_limited(arena: Any) -> None:
    await arena.start(address_limits_exempt=(), handshake_burst=5, handshake_per_second=0.1)
    statuses = [await _status(arena.url) for _ in range(7)]
    assert statuses[:5] == [101] * 5 and statuses[5:] == [429, 429]


async def test_anonymous_connections_of_an_address_share_one_request_budget(arena: Any) -> None:
    await arena.start(address_limits_exempt=(), anon_rate_burst=10, anon_rate_per_second=0.1)
    cat = await arena.client("cat")  # hello and login: 2 of the address's 10
    first, second = await arena.client(), await arena.client()  # hello: 2 more
    for _ in range(3):
        await first.ping()
        await second.ping()
    with pytest.raises(RateLimitedError):  # each connection has spent only 4 of its 40
        await second.ping()
    await cat.ping()  # a logged-in connection does not draw on the address's budget
