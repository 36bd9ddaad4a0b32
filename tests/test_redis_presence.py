"""What only the Redis presence has to show: sharing, prefixes, outages, persistence.

The behaviour every presence shares is pinned by ``test_presence_contract.py``
(which runs against Redis too); these tests use real ``redis-server``
processes, two presence instances standing for two nodes.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from redis_server import RedisServer

from server.presence import PresenceError, SeqConflict, open_presence
from server.presence.redis import RedisPresence
from tests.presence_appends import append_event, append_packed


async def _next(sub, timeout: float = 3.0):
    return await asyncio.wait_for(sub.__anext__(), timeout)


async def test_open_presence_picks_redis(redis_url: str, redis_prefix: str) -> None:
    p = open_presence(redis_url, prefix=redis_prefix)
    assert isinstance(p, RedisPresence)
    await p.start()
    try:
        assert await append_event(p, "r", {"a": 1}) == 1
    finally:
        await p.close()


async def test_two_nodes_share_everything_and_prefixes_isolate(
    redis_url: str, redis_prefix: str
) -> None:
    a = RedisPresence(redis_url, prefix=redis_prefix)
    b = RedisPresence(redis_url, prefix=redis_prefix)
    other = RedisPresence(redis_url, prefix=redis_prefix + "other:")
    for p in (a, b, other):
        await p.start()
    try:
        async with await b.lobby.subscribe() as lobby:
            await a.lobby.upsert("r1", {"room_id": "r1"})
            await append_event(a, "r1", {"type": "x"}, expected_seq=1)
            assert await _next(lobby) == {"op": "upsert", "room": {"room_id": "r1"}}
        assert await b.rooms.read_events("r1") == [{"type": "x", "seq": 1}]
        assert [r["room_id"] for r in await b.lobby.entries()] == ["r1"]
        assert await other.lobby.entries() == []
        assert await other.rooms.last_seq("r1") == 0
        # split brain: a second writer that believes it is next is refused
        with pytest.raises(SeqConflict):
            await append_event(b, "r1", {"type": "y"}, expected_seq=1)
        assert await append_event(b, "r1", {"type": "y"}, expected_seq=2) == 2
        # leases are shared: the other node cannot take a live one
        assert await a.leases.acquire("r1", "node-a", ttl=5)
        assert not await b.leases.acquire("r1", "node-b", ttl=5)
        assert await b.leases.owner("r1") == "node-a"
        assert await b.leases.owners(["r1", "r2"]) == {"r1": "node-a", "r2": None}
        await a.sessions.create("s1", "tok", {"name": "ann"}, ttl=30)
        assert await b.sessions.resume("tok") == ("s1", {"name": "ann"})
        assert await other.sessions.resume("tok") is None
    finally:
        for p in (a, b, other):
            await p.close()


async def test_node_messages_and_heartbeats(redis_url: str, redis_prefix: str) -> None:
    a = RedisPresence(redis_url, prefix=redis_prefix)
    await a.start()
    try:
        async with await a.bus.subscribe("n2") as inbox:
            await a.bus.publish("n2", ['{"k":1}', '{"k":2}'])
            assert [await _next(inbox), await _next(inbox)] == [{"k": 1}, {"k": 2}]
        await a.bus.heartbeat("n1", ttl=0.2)
        assert await a.bus.alive(["n1", "n2"]) == {"n1": True, "n2": False}
        await asyncio.sleep(0.35)  # expiry has no event to await
        assert await a.bus.alive(["n1"]) == {"n1": False}
    finally:
        await a.close()


async def test_outage_is_a_typed_error_fast_and_recovery_is_automatic(
    redis_server: RedisServer,
) -> None:
    prefix = f"t:{uuid.uuid4().hex[:8]}:"
    p = RedisPresence(redis_server.url, prefix=prefix, socket_timeout=1.0, connect_timeout=0.5)
    await p.start()
    try:
        sub = await p.lobby.subscribe()
        assert await append_event(p, "r", {"n": 1}) == 1
        redis_server.stop()
        # a broken subscription ends, so its reader knows to catch up from the log
        with pytest.raises(StopAsyncIteration):
            await _next(sub)
        for call in (
            lambda: append_event(p, "r", {"n": 2}),
            lambda: p.lobby.entries(),
            lambda: p.sessions.get("s"),
            lambda: p.lobby.subscribe(),
        ):
            t0 = time.monotonic()
            with pytest.raises(PresenceError) as err:
                await call()
            assert err.value.code == "unavailable"
            assert time.monotonic() - t0 < 3.5  # never a hang
        redis_server.start()  # same port, empty (no persistence in this server)
        assert await append_event(p, "r", {"n": 3}) == 1
        async with await p.lobby.subscribe() as again:
            await p.lobby.upsert("x", {"room_id": "x"})
            assert (await _next(again))["op"] == "upsert"
    finally:
        await p.close()


async def test_append_only_redis_keeps_logs_across_a_restart() -> None:
    server = RedisServer(appendonly=True)
    server.start()
    p = RedisPresence(server.url, prefix="t:")
    try:
        await p.start()
        for i in range(3):
            await append_event(p, "r", {"n": i}, expected_seq=i + 1)
        await p.rooms.put("r", {"game": "collapsi"})
        server.restart()
        await asyncio.sleep(0)  # redis-server loaded its AOF before answering PING
        assert [e["n"] for e in await p.rooms.read_events("r")] == [0, 1, 2]
        assert await p.rooms.get("r") == {"game": "collapsi"}
        assert await append_event(p, "r", {"n": 3}, expected_seq=4) == 4
    finally:
        await p.close()
        server.close()


async def test_single_commands_use_the_urls_db_and_carry_large_and_unicode_values(
    redis_url: str, redis_prefix: str
) -> None:
    import redis as redis_sync
    from redis_server import delete_prefix

    url = redis_url.rsplit("/", 1)[0] + "/3"
    p = RedisPresence(url, prefix=redis_prefix)
    await p.start()
    try:
        text = "é ü 漢字 🂡 " * 3
        assert await append_event(p, "r", {"type": "chat", "text": text}) == 1
        assert (await p.rooms.read_events("r"))[0]["text"] == text
        await p.rooms.put("r", {"game": "collapsi", "name": text})
        assert (await p.rooms.get("r"))["name"] == text
        big = "x" * 4000
        await asyncio.gather(
            *(p.lobby.upsert(f"r{i:03}", {"i": i, "pad": big}) for i in range(200))
        )
        listed = await p.lobby.entries()  # ~800 kB: a reply split over many reads
        assert [e["i"] for e in listed] == list(range(200))
        assert all(e["pad"] == big for e in listed)
    finally:
        await p.close()
    db3 = redis_sync.Redis.from_url(url)
    db0 = redis_sync.Redis.from_url(redis_url)
    try:
        assert db3.exists(f"{redis_prefix}log:r") and not db0.exists(f"{redis_prefix}log:r")
    finally:
        db3.close()
        db0.close()
        delete_prefix(url, redis_prefix)


async def test_a_redis_that_stops_answering_is_a_typed_error_not_a_hang() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1 << 16)  # takes the command, never answers
        await asyncio.sleep(30)

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    p = RedisPresence(f"redis://127.0.0.1:{port}/0", prefix="t:", socket_timeout=0.5)
    try:
        t0 = time.monotonic()
        with pytest.raises(PresenceError) as err:
            await p.rooms.get("r")  # not started: the single-command connection alone
        assert err.value.code == "unavailable"
        assert 0.4 < time.monotonic() - t0 < 2.5
    finally:
        await p.close()
        server.close()


async def test_events_logged_as_json_by_an_older_version_are_read(
    redis_url: str, redis_prefix: str
) -> None:
    import redis as redis_sync

    raw = redis_sync.Redis.from_url(redis_url)
    try:
        raw.xadd(f"{redis_prefix}log:r", {"e": '{"type":"chat","text":"é","seq":1}'}, id="1-1")
    finally:
        raw.close()
    p = RedisPresence(redis_url, prefix=redis_prefix)
    await p.start()
    try:
        assert await append_event(p, "r", {"type": "chat", "text": "b", "seq": 2}, 2) == 2
        events = await p.rooms.read_events("r")
        assert events == [
            {"type": "chat", "text": "é", "seq": 1},
            {"type": "chat", "text": "b", "seq": 2},
        ]
        assert await p.rooms.last_seq("r") == 2
    finally:
        await p.close()


async def test_seqs_spliced_into_events_keep_their_value_at_every_integer_width(
    redis_url: str, redis_prefix: str
) -> None:
    """The append script adds ``seq`` to the event's msgpack map itself: 1 to 5 bytes."""
    import redis as redis_sync

    seqs = [127, 128, 255, 256, 65_535, 65_536, 2**32 + 1]
    raw = redis_sync.Redis.from_url(redis_url)
    try:
        for n in seqs:  # a log whose last entry is n - 1
            raw.xadd(f"{redis_prefix}log:r{n}", {"e": '{"seq":0}'}, id=f"{n - 1}-1")
    finally:
        raw.close()
    p = RedisPresence(redis_url, prefix=redis_prefix)
    await p.start()
    try:
        for n in seqs:
            assert await append_event(p, f"r{n}", {"type": "chat"}) == n
            assert await p.rooms.read_events(f"r{n}", after_seq=n - 1) == [
                {"type": "chat", "seq": n}
            ]
            assert await p.rooms.last_seq(f"r{n}") == n
    finally:
        await p.close()


async def test_a_private_rooms_invite_is_opened_and_dropped_with_it(
    redis_url: str, redis_prefix: str
) -> None:
    p = RedisPresence(redis_url, prefix=redis_prefix)
    await p.start()
    try:
        assert await p.rooms.open("r1", "n1", 5, {"game": "collapsi", "invite": "CODE"})
        assert await p.rooms.find_invite("CODE") == "r1"
        await p.rooms.drop_closed("r1")
        assert await p.rooms.find_invite("CODE") is None
    finally:
        await p.close()


async def test_an_event_packed_by_the_room_is_stored_as_it_is(
    redis_url: str, redis_prefix: str
) -> None:
    import msgpack

    p = RedisPresence(redis_url, prefix=redis_prefix)
    await p.start()
    try:
        first = {"type": "move_made", "room": "r", "seq": 1, "view": {"cards": ["A", None]}}
        packed = msgpack.packb(first)
        assert await append_packed(p, "r", first, packed, expected_seq=1) == 1
        with pytest.raises(SeqConflict):
            await append_packed(p, "r", {**first, "seq": 3}, msgpack.packb({**first, "seq": 3}), 3)
        second = {"type": "chat", "seq": 7}  # not the expected seq: appended as append_event
        assert await append_packed(p, "r", second, msgpack.packb(second), expected_seq=2) == 2
        assert await p.rooms.read_events("r") == [first, {"type": "chat", "seq": 2}]
    finally:
        await p.close()
