"""The server's keepalive (server.keepalive): one sweep pings every connection; a peer
that answers stays, one that stops answering is closed (PROTOCOL.md, limits)."""

from __future__ import annotations

import asyncio
import base64
import os
from typing import Any

from arena_process import run_arena, serve_command, start_node, stop_node
from websockets.asyncio.client import connect

from protocol import messages as m
from protocol.codec import decode_server, encode


async def handshake(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw TCP peer that completes the WebSocket handshake and nothing more."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101")
    return reader, writer


async def read_ping(reader: asyncio.StreamReader) -> bytes:
    """The next frame from the server, which must be a ping; its payload."""
    first, length = await reader.readexactly(2)
    assert first == 0x89, f"expected a ping frame, got opcode byte {first:#x}"
    assert length < 126  # unmasked, short: a control frame
    return await reader.readexactly(length)


def pong(payload: bytes) -> bytes:
    """A client's pong frame (masked, as RFC 6455 asks of clients)."""
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x8A, 0x80 | len(payload)]) + mask + body


async def test_a_peer_that_answers_pings_stays_and_one_that_stops_is_closed(arena: Any) -> None:
    a = await arena.start(ping_interval=0.2, ping_timeout=0.2)
    reader, writer = await handshake(a.config.port)
    (conn,) = a.connections
    payloads = []
    for _ in range(3):  # three pings answered: the connection is kept
        payload = await asyncio.wait_for(read_ping(reader), 5)
        payloads.append(payload)
        writer.write(pong(payload))
        await writer.drain()
    assert len(set(payloads)) == 3  # a fresh payload per ping
    assert not conn.done.is_set() and conn in a.connections
    await asyncio.wait_for(read_ping(reader), 5)  # this one is not answered
    first, length = await asyncio.wait_for(reader.readexactly(2), 5)
    assert first == 0x88  # a close frame: 1011 "keepalive ping timeout", as websockets says
    body = await reader.readexactly(length)
    assert int.from_bytes(body[:2], "big") == 1011 and body[2:] == b"keepalive ping timeout"
    await asyncio.wait_for(conn.done.wait(), 5)
    writer.close()


async def test_every_connection_is_pinged_at_the_interval_welcome_names(arena: Any) -> None:
    """Many connections share the one sweep: each is pinged and kept while it answers,
    and ``welcome`` names the interval (``limits.ping_interval_ms``)."""
    a = await arena.start(ping_interval=0.3, ping_timeout=1.0)
    async with connect(arena.url, compression=None, ping_interval=None) as ws:
        await ws.send(encode(m.Hello(versions=[1], software="test")))
        welcome = decode_server(await ws.recv())
    assert welcome.limits.ping_interval_ms == 300
    peers = [await handshake(a.config.port) for _ in range(8)]
    for _ in range(2):  # two rounds: each peer pinged, answers
        for reader, writer in peers:
            writer.write(pong(await asyncio.wait_for(read_ping(reader), 5)))
            await writer.drain()
    assert len(a.connections) == 8 and not any(c.done.is_set() for c in a.connections)
    for _, writer in peers:
        writer.close()


async def test_arena_serve_takes_the_interval_from_its_flag() -> None:
    """``arena serve --ping-interval`` as a user runs it: welcome names it, pings follow it."""
    node = await start_node(serve_command("--store", "memory", "--ping-interval", "0.25"))
    try:
        async with connect(node.url, compression=None, ping_interval=None) as ws:
            await ws.send(encode(m.Hello(versions=[1], software="test")))
            welcome = decode_server(await ws.recv())
            assert welcome.limits.ping_interval_ms == 250
        port = int(node.url.rsplit(":", 1)[1])
        reader, writer = await handshake(port)
        writer.write(pong(await asyncio.wait_for(read_ping(reader), 10)))
        await writer.drain()
        writer.close()
    finally:
        assert await stop_node(node) == 0


def test_a_negative_ping_interval_is_a_usage_error() -> None:
    done = run_arena("serve", "--store", "memory", "--port", "0", "--ping-interval", "-1")
    assert done.returncode != 0 and "--ping-interval" in done.stderr


async def test_a_peer_heard_from_within_the_interval_is_not_pinged(arena: Any) -> None:
    """A client sending frames proves it is there: the sweep pings only the silent one."""
    # (no rate limit: the talker sends as fast as it is answered)
    a = await arena.start(
        ping_interval=0.3, ping_timeout=1.0, rate_burst=10**6, rate_per_second=1e6
    )
    talker = await arena.client("talker")
    silent = await arena.client("silent")
    conns = {s.player["name"]: s.conn for s in a.sessions.values() if s.player}

    async def talk_until_silent_is_pinged() -> None:
        before = conns["silent"].ws.latency  # set when a sweep's pong comes back
        while conns["silent"].ws.latency == before:
            await talker.ping()  # an application message each round trip

    await asyncio.wait_for(talk_until_silent_is_pinged(), 10)
    talker_latency = conns["talker"].ws.latency
    await asyncio.wait_for(talk_until_silent_is_pinged(), 10)  # a whole interval later
    assert conns["talker"].ws.latency == talker_latency  # heard from all along: no ping
    assert conns["talker"] in a.connections and conns["silent"] in a.connections
    assert silent.close_code is None


def client_frame(payload: bytes) -> bytes:
    """A client's binary frame (masked), for payloads under 126 bytes."""
    assert len(payload) < 126
    mask = os.urandom(4)
    return (
        bytes([0x82, 0x80 | len(payload)])
        + mask
        + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    )


async def test_a_peer_heard_from_then_silent_is_still_pinged_and_closed(arena: Any) -> None:
    """Skipping the ping of a peer heard from lately must not hide one that then died."""
    a = await arena.start(ping_interval=0.3, ping_timeout=0.3)
    reader, writer = await handshake(a.config.port)
    (conn,) = a.connections
    writer.write(client_frame(encode(m.Hello(versions=[1], software="test"))))  # heard from
    await writer.drain()
    first, length = await asyncio.wait_for(reader.readexactly(2), 5)
    assert first == 0x82  # the welcome (binary: msgpack, as the hello was)
    size = int.from_bytes(await reader.readexactly(2), "big") if length == 126 else length
    welcome = decode_server(await reader.readexactly(size))
    assert welcome.type == "welcome"
    await asyncio.wait_for(read_ping(reader), 5)  # then silent: pinged, and not answering
    await asyncio.wait_for(conn.done.wait(), 5)
    writer.close()
