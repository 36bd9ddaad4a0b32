"""clients.wsdirect: messages handed over as they are parsed, in the order sent, with
fragmented ones (which take websockets' queue) in between; and arena's Client routing
through it to its listener. A real websockets server on loopback."""

from __future__ import annotations

import asyncio

from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

from clients.wsdirect import DirectConnection

#: what the server sends: whole messages, and fragmented ones (a list: one per frame)
SENT: list[bytes | str | list[bytes]] = [
    b"m0",
    [b"m1-", b"a", b"b"],
    b"m2",
    "m3 text",
    [b"m4-", b"c"],
    [b"m5-", b"d"],
    b"m6",
    b"m7",
]
EXPECTED = ["m0", "m1-ab", "m2", "m3 text", "m4-c", "m5-d", "m6", "m7"]


def _text(data: str | bytes) -> str:
    return data if isinstance(data, str) else data.decode()


async def _collect(burst: bool) -> tuple[list[str], int]:
    """What a DirectConnection's user sees, in order (from on_message or recv), and how
    many came through on_message. ``burst``: the client reads nothing until everything
    is sent, so every frame arrives in one read (fragments queued before whole ones)."""
    sent = asyncio.Event()

    async def handler(ws) -> None:  # type: ignore[no-untyped-def]
        await ws.recv()  # (the client is ready)
        for message in SENT:
            await ws.send(message)
        sent.set()
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        seen: list[str] = []
        direct = 0

        def on_message(data: str | bytes) -> None:
            nonlocal direct
            direct += 1
            seen.append(_text(data))

        async with connect(f"ws://127.0.0.1:{port}", create_connection=DirectConnection) as ws:
            assert isinstance(ws, DirectConnection)
            if burst:
                ws.transport.pause_reading()
            ws.on_message = on_message

            async def read_queue() -> None:
                while True:
                    seen.append(_text(await ws.recv()))

            reader = asyncio.create_task(read_queue())
            await ws.send("ready")
            await asyncio.wait_for(sent.wait(), 10)
            if burst:
                ws.transport.resume_reading()
            async with asyncio.timeout(10):
                while len(seen) < len(EXPECTED):
                    await asyncio.sleep(0.01)
            reader.cancel()
        return seen, direct


async def test_messages_keep_their_order_around_fragmented_ones() -> None:
    for burst in (False, True):
        seen, direct = await _collect(burst)
        assert seen == EXPECTED, (burst, seen)
        # whole messages with nothing queued before them went straight to on_message
        assert 1 <= direct <= 5, (burst, direct)


async def test_without_on_message_everything_takes_the_queue() -> None:
    async def handler(ws) -> None:  # type: ignore[no-untyped-def]
        for message in SENT:
            await ws.send(message)
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", create_connection=DirectConnection) as ws:
            got = [_text(await asyncio.wait_for(ws.recv(), 10)) for _ in EXPECTED]
    assert got == EXPECTED


async def test_send_now_writes_at_once_unless_send_is_needed() -> None:
    got: list[bytes | str] = []
    all_in = asyncio.Event()

    async def handler(ws) -> None:  # type: ignore[no-untyped-def]
        async for message in ws:
            got.append(message)
            if len(got) == 4:
                all_in.set()

    gate = asyncio.Event()

    async def fragments():  # type: ignore[no-untyped-def]
        yield b"f1-"
        await gate.wait()
        yield b"f2"

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", create_connection=DirectConnection) as ws:
            assert isinstance(ws, DirectConnection)
            assert ws.send_now(b"a") and ws.send_now("b")
            sending = asyncio.create_task(ws.send(fragments()))
            async with asyncio.timeout(10):
                while ws.send_in_progress is None:  # (its first fragment is out)
                    await asyncio.sleep(0)
            assert not ws.send_now(b"c")  # not inside a fragmented message
            gate.set()
            await sending
            assert ws.send_now(b"d")
            await asyncio.wait_for(all_in.wait(), 10)
        assert not ws.send_now(b"e")  # closed: send() says so
    assert got == [b"a", "b", b"f1-f2", b"d"]
