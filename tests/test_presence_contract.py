"""One contract for every presence implementation: memory, SQLite and Redis.

To add an implementation, add one entry to :data:`IMPLEMENTATIONS`: a factory
``(request, prefix) -> async context manager yielding a started Presence``. The
factory may use other fixtures through ``request.getfixturevalue`` (a Redis
server, say). Each test gets its own key prefix, so runs can share a store.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgpack
import pytest

from server.presence import LeaseLost, Presence, SeqConflict
from server.presence.memory import MemoryPresence
from tests.presence_appends import append_event, append_packed, append_packed_saving_room


@contextlib.asynccontextmanager
async def _memory(request: pytest.FixtureRequest, prefix: str) -> AsyncIterator[Presence]:
    presence = MemoryPresence(prefix=prefix)
    await presence.start()
    try:
        yield presence
    finally:
        await presence.close()


@contextlib.asynccontextmanager
async def _redis(request: pytest.FixtureRequest, prefix: str) -> AsyncIterator[Presence]:
    from redis_server import delete_prefix

    from server.presence.redis import RedisPresence

    url = request.getfixturevalue("redis_url")
    presence = RedisPresence(url, prefix=prefix)
    await presence.start()
    try:
        yield presence
    finally:
        await presence.close()
        delete_prefix(url, prefix)


@contextlib.asynccontextmanager
async def _sqlite(request: pytest.FixtureRequest, prefix: str) -> AsyncIterator[Presence]:
    from server.presence.sqlite import SqlitePresence

    tmp = request.getfixturevalue("tmp_path")
    presence = SqlitePresence(tmp / "data", prefix=prefix)
    await presence.start()
    try:
        yield presence
    finally:
        await presence.close()


IMPLEMENTATIONS: dict[str, Callable[[pytest.FixtureRequest, str], Any]] = {
    "memory": _memory,
    "redis": _redis,
    "sqlite": _sqlite,
}


@pytest.fixture
def key_prefix() -> str:
    return f"test:{uuid.uuid4().hex[:12]}:"


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
async def presence(request: pytest.FixtureRequest, key_prefix: str) -> AsyncIterator[Presence]:
    async with IMPLEMENTATIONS[request.param](request, key_prefix) as p:
        yield p


async def _next(sub: Any, timeout: float = 2.0) -> dict[str, Any]:
    return await asyncio.wait_for(sub.__anext__(), timeout)


# -- sessions ------------------------------------------------------------------


async def test_session_create_get_update_end(presence: Presence) -> None:
    await presence.sessions.create("s1", "tok-1", {"name": "ann", "bot": False}, ttl=30)
    assert await presence.sessions.get("s1") == {"name": "ann", "bot": False}
    assert await presence.sessions.update("s1", {"name": "ann", "bot": False, "rooms": ["r1"]})
    assert (await presence.sessions.get("s1"))["rooms"] == ["r1"]
    assert await presence.sessions.get("nope") is None
    assert not await presence.sessions.update("nope", {})
    await presence.sessions.end("s1")
    assert await presence.sessions.get("s1") is None
    assert await presence.sessions.resume("tok-1") is None


async def test_update_sessions_updates_the_live_ones(presence: Presence) -> None:
    await presence.sessions.create("s1", "tok-1", {"rooms": []}, ttl=30)
    await presence.sessions.create("s2", "tok-2", {"rooms": ["r0"]}, ttl=30)
    await presence.sessions.end("s2")
    await presence.sessions.update_many({})
    await presence.sessions.update_many({"s1": {"rooms": ["r1"]}, "s2": {"rooms": ["r2"]}})
    assert await presence.sessions.get("s1") == {"rooms": ["r1"]}
    assert await presence.sessions.get("s2") is None  # ended: not brought back
    assert await presence.sessions.resume("tok-1") == ("s1", {"rooms": ["r1"]})


async def test_session_values_are_copies(presence: Presence) -> None:
    data = {"rooms": ["a"]}
    await presence.sessions.create("s1", "t", data, ttl=30)
    data["rooms"].append("b")
    got = await presence.sessions.get("s1")
    assert got == {"rooms": ["a"]}
    got["rooms"].append("c")
    assert await presence.sessions.get("s1") == {"rooms": ["a"]}


async def test_session_resume_by_token_only(presence: Presence) -> None:
    await presence.sessions.create("s1", "secret-token", {"name": "ann"}, ttl=30)
    assert await presence.sessions.resume("secret-token") == ("s1", {"name": "ann"})
    assert await presence.sessions.resume("wrong-token") is None
    assert await presence.sessions.resume("s1") is None  # the id is not the token


async def test_session_expires_and_touch_extends(presence: Presence) -> None:
    await presence.sessions.create("kept", "t2", {}, ttl=0.5)
    await presence.sessions.create("short", "t1", {}, ttl=0.15)
    assert await presence.sessions.touch("kept", ttl=30)
    await asyncio.sleep(0.6)  # TTL expiry has no event to await; "kept" outlives its 0.5 s
    assert await presence.sessions.get("short") is None
    assert await presence.sessions.resume("t1") is None
    assert not await presence.sessions.touch("short", ttl=30)
    assert await presence.sessions.get("kept") == {}
    assert await presence.sessions.resume("t2") == ("kept", {})


# -- names -----------------------------------------------------------------------


async def test_name_claims(presence: Presence) -> None:
    assert not await presence.names.claimed("Alice")
    assert await presence.names.claim("Alice", "pw1")
    assert await presence.names.claimed("alice")  # case-insensitive
    assert await presence.names.claim("ALICE", "pw1")  # the holder again
    assert not await presence.names.claim("alice", "pw2")
    assert await presence.names.claim("bob", "pw2")


# -- lobby -------------------------------------------------------------------------


async def test_lobby_upsert_remove_list_and_events(presence: Presence) -> None:
    async with await presence.lobby.subscribe() as sub:
        await presence.lobby.upsert("r2", {"room_id": "r2", "game": "collapsi"})
        await presence.lobby.upsert("r1", {"room_id": "r1", "game": "collecto"})
        await presence.lobby.upsert("r2", {"room_id": "r2", "game": "collapsi", "live": True})
        assert [r["room_id"] for r in await presence.lobby.entries()] == ["r1", "r2"]
        assert (await presence.lobby.entries())[1]["live"] is True
        await presence.lobby.remove("r2")
        await presence.lobby.remove("r2")  # already gone: no event
        await presence.lobby.upsert("r3", {"room_id": "r3"})
        events = [await _next(sub) for _ in range(5)]
    assert events[0] == {"op": "upsert", "room": {"room_id": "r2", "game": "collapsi"}}
    assert events[2]["room"]["live"] is True
    assert events[3] == {"op": "remove", "room_id": "r2"}
    assert events[4]["room"]["room_id"] == "r3"
    assert [r["room_id"] for r in await presence.lobby.entries()] == ["r1", "r3"]


async def test_lobby_subscription_ends_on_close(presence: Presence) -> None:
    sub = await presence.lobby.subscribe()
    waiter = asyncio.ensure_future(_next(sub))
    await asyncio.sleep(0)
    await sub.close()
    with pytest.raises(StopAsyncIteration):
        await waiter


# -- rooms and leases --------------------------------------------------------------


async def test_room_registry(presence: Presence) -> None:
    await presence.rooms.put("r1", {"game": "collapsi", "invite": "XYZ"})
    assert await presence.rooms.get("r1") == {"game": "collapsi", "invite": "XYZ"}
    assert await presence.rooms.get("r9") is None
    await append_event(presence, "r1", {"type": "x"})
    await presence.rooms.drop_closed("r1")
    assert await presence.rooms.get("r1") is None
    assert await presence.rooms.last_seq("r1") == 0


async def test_open_room_and_drop_closed_room(presence: Presence) -> None:
    meta = {"game": "collapsi", "invite": "XYZ", "node": "node-a"}
    assert await presence.rooms.open("r1", "node-a", 5, meta)
    assert await presence.rooms.get("r1") == meta
    assert await presence.leases.owner("r1") == "node-a"
    assert not await presence.rooms.open("r1", "node-b", 5, {"game": "other"})
    assert await presence.rooms.get("r1") == meta  # nothing stored by the loser
    assert await presence.leases.owner("r1") == "node-a"
    await presence.lobby.upsert("r1", {"room": "r1"})
    await presence.lobby.upsert("r2", {"room": "r2"})
    await append_event(presence, "r1", {"type": "room_closed"})
    async with await presence.lobby.subscribe() as sub:
        await presence.rooms.drop_closed("r1")
        assert await _next(sub) == {"op": "remove", "room_id": "r1"}
    assert await presence.rooms.get("r1") is None
    assert await presence.leases.owner("r1") is None
    assert await presence.rooms.last_seq("r1") == 0
    assert await presence.lobby.entries() == [{"room": "r2"}]
    assert await presence.rooms.open("r1", "node-b", 5, {"game": "again"})


async def test_append_packed_saving_room(presence: Presence) -> None:
    import msgpack

    event = {"type": "player_joined", "room": "r1", "seq": 1, "player": {"name": "é"}}
    meta = {"game": "collapsi", "invite": None, "members": {"s1": {"role": "player"}}}
    assert await append_packed_saving_room(presence, "r1", event, msgpack.packb(event), 1, meta)
    assert await presence.rooms.get("r1") == meta
    assert await presence.rooms.read_events("r1") == [event]
    with pytest.raises(SeqConflict):
        second = {**event, "seq": 3}
        await append_packed_saving_room(presence, "r1", second, msgpack.packb(second), 3, meta)
    assert await presence.rooms.last_seq("r1") == 1


async def test_appends_updating_the_lobby(presence: Presence) -> None:
    """``lobby``: the room's entry is upserted (and published after the event) only when
    the event is appended; a refused append changes neither the log nor the lobby."""
    assert await presence.leases.acquire("r1", "node-a", ttl=5)
    first = {"type": "seat_taken", "room": "r1", "seq": 1, "seat": 0}
    second = {"type": "game_started", "room": "r1", "seq": 2}
    meta = {"game": "collapsi", "invite": None, "members": {"s1": {"role": "player"}}}
    summary = {"room": "r1", "game": "collapsi", "status": "waiting", "seats": ["é", None]}
    async with await presence.lobby.subscribe() as lobby:
        packed = msgpack.packb(first)
        assert await append_packed(presence, "r1", first, packed, 1, "node-a", summary) == 1
        assert await presence.rooms.read_events("r1") == [first]
        assert await _next(lobby) == {"op": "upsert", "room": summary}
        assert await presence.lobby.entries() == [summary]
        playing = {**summary, "status": "playing"}
        packed = msgpack.packb(second)
        with pytest.raises(SeqConflict):
            await append_packed(presence, "r1", second, packed, 3, "node-a", playing)
        with pytest.raises(LeaseLost):
            await append_packed_saving_room(
                presence, "r1", second, packed, 2, meta, "node-b", playing
            )
        assert await presence.lobby.entries() == [summary]
        assert await append_packed_saving_room(
            presence, "r1", second, packed, 2, meta, "node-a", playing
        )
        assert await _next(lobby) == {"op": "upsert", "room": playing}
    assert await presence.lobby.entries() == [playing]
    assert await presence.rooms.get("r1") == meta
    assert await presence.rooms.read_events("r1") == [first, second]


async def test_append_packed_many(presence: Presence) -> None:
    """Several events in one call: logged and published in order with consecutive seqs,
    the settings and the lobby entry with them; refused as a whole (seq, lease)."""
    assert await presence.leases.acquire("r1", "node-a", ttl=5)
    first = {"type": "player_joined", "room": "r1", "seq": 1, "player": {"name": "é"}}
    assert await append_packed(presence, "r1", first, msgpack.packb(first), 1, "node-a") == 1
    freed = {"type": "seat_freed", "room": "r1", "seq": 2, "seat": 0}
    left = {"type": "player_left", "room": "r1", "seq": 3, "name": "é", "request": "k1"}
    closed = {"type": "room_closed", "room": "r1", "seq": 9}  # a wrong seq: packed again
    events = [(freed, msgpack.packb(freed)), (left, b""), (closed, msgpack.packb(closed))]
    meta = {"game": "collapsi", "invite": None, "members": {}}
    summary = {"room": "r1", "status": "waiting"}
    with pytest.raises(SeqConflict):
        await presence.rooms.append("r1", events, 3, "node-a")
    with pytest.raises(LeaseLost):
        await presence.rooms.append("r1", events, 2, "node-b")
    assert await presence.rooms.last_seq("r1") == 1
    assert await presence.lobby.entries() == []
    async with await presence.lobby.subscribe() as lobby:
        assert await presence.rooms.append("r1", events, 2, "node-a", meta, summary) == 4
        logged = [freed, left, {**closed, "seq": 4}]
        assert await _next(lobby) == {"op": "upsert", "room": summary}
    assert await presence.rooms.read_events("r1") == [first, *logged]
    assert await presence.rooms.get("r1") == meta
    assert await presence.lobby.entries() == [summary]


async def test_room_leases(presence: Presence) -> None:
    assert await presence.leases.owner("r1") is None
    assert await presence.leases.acquire("r1", "node-a", ttl=5)
    assert await presence.leases.acquire("r1", "node-a", ttl=5)  # re-entrant
    assert not await presence.leases.acquire("r1", "node-b", ttl=5)
    assert await presence.leases.owner("r1") == "node-a"
    assert await presence.leases.renew(["r1"], "node-a", ttl=5) == []
    assert await presence.leases.renew(["r1"], "node-b", ttl=5) == ["r1"]
    assert not await presence.leases.release("r1", "node-b")
    assert await presence.leases.release("r1", "node-a")
    assert await presence.leases.owner("r1") is None
    assert await presence.leases.acquire("r1", "node-b", ttl=0.15)
    await asyncio.sleep(0.3)  # the owner stopped renewing: the lease lapses
    assert await presence.leases.owner("r1") is None
    assert await presence.leases.renew(["r1"], "node-b", ttl=5) == ["r1"]
    assert await presence.leases.acquire("r1", "node-a", ttl=5)


async def test_renew_rooms_reports_the_leases_not_held(presence: Presence) -> None:
    assert await presence.leases.renew([], "node-a", ttl=5) == []
    for room in ("r1", "r2", "r3"):
        assert await presence.leases.acquire(room, "node-a", ttl=0.3)
    assert await presence.leases.acquire("r4", "node-b", ttl=5)
    assert await presence.leases.release("r2", "node-a")
    lost = await presence.leases.renew(["r1", "r2", "r3", "r4", "r5"], "node-a", ttl=5)
    assert lost == ["r2", "r4", "r5"]
    await asyncio.sleep(0.5)  # past the first TTL: the renewal extended r1 and r3
    assert [await presence.leases.owner(r) for r in ("r1", "r2", "r3", "r4")] == [
        "node-a",
        None,
        "node-a",
        "node-b",
    ]


# -- event log ------------------------------------------------------------------------


async def test_event_log_seq_is_gap_free_per_room(presence: Presence) -> None:
    assert await presence.rooms.last_seq("r1") == 0
    seqs = [await append_event(presence, "r1", {"type": "move", "n": i}) for i in range(5)]
    assert seqs == [1, 2, 3, 4, 5]
    assert await append_event(presence, "r2", {"type": "chat"}) == 1
    assert await presence.rooms.last_seq("r1") == 5
    events = await presence.rooms.read_events("r1", after_seq=2)
    assert [(e["seq"], e["n"]) for e in events] == [(3, 2), (4, 3), (5, 4)]
    assert [e["seq"] for e in await presence.rooms.read_events("r1", 0, limit=2)] == [1, 2]
    assert await presence.rooms.read_events("r1", after_seq=5) == []
    assert await presence.rooms.read_events("nope") == []


async def test_event_log_packed_appends_are_appends(presence: Presence) -> None:
    """``append_packed`` (the caller packed the event already) logs exactly what
    ``append_event`` would; bytes with another seq are not trusted."""
    first = {"type": "x", "room": "r1", "seq": 1, "n": [1, None]}
    assert await append_packed(presence, "r1", first, msgpack.packb(first), 1) == 1
    second = {"type": "y", "seq": 7}  # a wrong seq: the store packs it itself
    assert await append_packed(presence, "r1", second, msgpack.packb(second)) == 2
    with pytest.raises(SeqConflict):
        await append_packed(presence, "r1", first, msgpack.packb(first), expected_seq=1)
    assert await presence.rooms.read_events("r1") == [first, {"type": "y", "seq": 2}]


async def test_event_log_concurrent_appends_get_distinct_seqs(presence: Presence) -> None:
    seqs = await asyncio.gather(*(append_event(presence, "r", {"i": i}) for i in range(30)))
    assert sorted(seqs) == list(range(1, 31))
    logged = await presence.rooms.read_events("r")
    assert [e["seq"] for e in logged] == list(range(1, 31))
    assert sorted(e["i"] for e in logged) == list(range(30))


async def test_event_log_expected_seq_guards_split_brain(presence: Presence) -> None:
    assert await append_event(presence, "r1", {"a": 1}, expected_seq=1) == 1
    with pytest.raises(SeqConflict):
        await append_event(presence, "r1", {"a": 2}, expected_seq=1)
    assert await presence.rooms.last_seq("r1") == 1


async def test_event_log_appends_are_fenced_by_the_lease(presence: Presence) -> None:
    """With ``owner`` only the node holding the room's lease appends: a node whose lease
    lapsed (or was never held) cannot log, whatever seq it expects."""
    assert await presence.leases.acquire("r1", "node-a", ttl=5)
    assert await append_event(presence, "r1", {"a": 1}, expected_seq=1, owner="node-a") == 1
    with pytest.raises(LeaseLost):
        await append_event(presence, "r1", {"a": 2}, expected_seq=2, owner="node-b")
    with pytest.raises(LeaseLost):
        packed = msgpack.packb({"a": 2, "seq": 2})
        await append_packed(presence, "r1", {"a": 2, "seq": 2}, packed, 2, owner="node-b")
    assert await presence.leases.release("r1", "node-a")
    with pytest.raises(LeaseLost):
        await append_event(presence, "r1", {"a": 2}, expected_seq=2, owner="node-a")
    assert await presence.leases.acquire("r1", "node-b", ttl=0.15)
    assert await append_event(presence, "r1", {"b": 2}, expected_seq=2, owner="node-b") == 2
    await asyncio.sleep(0.3)  # node-b stopped renewing: its lease lapses
    with pytest.raises(LeaseLost):
        await append_event(presence, "r1", {"b": 3}, expected_seq=3, owner="node-b")
    assert await append_event(presence, "r1", {"c": 3}) == 3  # no owner given: not fenced
    assert [e["seq"] for e in await presence.rooms.read_events("r1")] == [1, 2, 3]


async def test_events_of_any_size_carry_their_seq(presence: Presence) -> None:
    """Small and large maps (an encoding may size its header by entry count), with and
    without the seq in place, null and nested values: logged as given."""
    sizes = [0, 1, 14, 15, 16, 300]
    events = [{f"k{i:03}": [i, None, {"x": "é"}] for i in range(n)} for n in sizes]
    for seq, ev in enumerate(events, 1):
        assert await append_event(presence, "r1", ev) == seq
    n = len(events)
    # a room's own events hold their (expected) seq already; a stale one is replaced
    assert await append_event(presence, "r1", {"a": 1, "seq": n + 1}, n + 1) == n + 1
    assert await append_event(presence, "r1", {"a": 2, "seq": 99}, n + 2) == n + 2
    assert await append_event(presence, "r1", {"seq": 5, "a": 3}) == n + 3
    logged = await presence.rooms.read_events("r1")
    expected = [{**ev, "seq": i} for i, ev in enumerate(events, 1)]
    expected += [{"a": 1, "seq": n + 1}, {"a": 2, "seq": n + 2}, {"a": 3, "seq": n + 3}]
    assert logged == expected
    assert [list(e) for e in logged[:n]] == [[*ev, "seq"] for ev in events]


# -- quick match ------------------------------------------------------------------------


async def test_queue_pairs_closest_ratings(presence: Presence) -> None:
    q = "collapsi/standard/5+2"
    await presence.queues.add(q, "a", 1500, {"session": "sa"})
    await presence.queues.add(q, "b", 1900, {"session": "sb"})
    await presence.queues.add(q, "c", 1550, {"session": "sc"})
    await presence.queues.add(q, "d", 1880, {"session": "sd"})
    assert [e["player"] for e in await presence.queues.waiting(q)] == ["a", "b", "c", "d"]
    a, b = await presence.queues.pop_pair(q)
    assert {a["player"], b["player"]} == {"b", "d"}
    assert {a["data"]["session"], b["data"]["session"]} == {"sb", "sd"}
    assert await presence.queues.pop_pair(q, max_gap=10) is None
    a, b = await presence.queues.pop_pair(q, max_gap=60)
    assert {a["player"], b["player"]} == {"a", "c"}
    assert await presence.queues.pop_pair(q) is None


async def test_queue_cancel_and_requeue(presence: Presence) -> None:
    q = "collecto/default/none"
    await presence.queues.add(q, "a", 1500, {})
    await presence.queues.add(q, "a", 1600, {})  # re-queue replaces
    assert [(e["player"], e["rating"]) for e in await presence.queues.waiting(q)] == [("a", 1600)]
    assert await presence.queues.pop_pair(q) is None
    assert await presence.queues.cancel(q, "a")
    assert not await presence.queues.cancel(q, "a")
    assert await presence.queues.waiting(q) == []
    await presence.queues.add("other", "b", 1500, {})
    assert await presence.queues.waiting(q) == []


# -- ratings --------------------------------------------------------------------------------


async def test_ratings_and_leaderboard(presence: Presence) -> None:
    assert await presence.ratings.get("collapsi", "ann") is None
    await presence.ratings.put(
        "collapsi",
        {
            "ann": {"rating": 1600.0, "rd": 80.0, "vol": 0.06, "games": 3},
            "bob": {"rating": 1450.5, "rd": 90.0, "vol": 0.06, "games": 3},
            "cat": {"rating": 1600.0, "rd": 70.0, "vol": 0.06, "games": 1},
        },
    )
    await presence.ratings.put("collecto", {"bob": {"rating": 2000.0, "rd": 50.0}})
    assert (await presence.ratings.get("collapsi", "bob"))["rating"] == 1450.5
    board = await presence.ratings.leaderboard("collapsi")
    assert [r["player"] for r in board] == ["ann", "cat", "bob"]
    assert board[0]["games"] == 3
    assert [r["player"] for r in await presence.ratings.leaderboard("collapsi", limit=1)] == ["ann"]
    assert [r["player"] for r in await presence.ratings.leaderboard("collecto")] == ["bob"]
    assert await presence.ratings.leaderboard("none") == []


# -- records --------------------------------------------------------------------------------


async def test_records(presence: Presence) -> None:
    r1 = {"game": "collapsi", "players": ["ann", "bob"], "moves": ["a"]}
    r2 = {"game": "collecto", "players": ["bob", "cat"], "moves": []}
    r3 = {"game": "collapsi", "players": ["cat", "ann"], "moves": ["b", "c"]}
    for gid, rec in (("g1", r1), ("g2", r2), ("g3", r3)):
        await presence.records.put(gid, rec)
    assert await presence.records.get("g2") == r2
    assert await presence.records.get("g9") is None
    assert [x["game_id"] for x in await presence.records.latest()] == ["g3", "g2", "g1"]
    assert [x["game_id"] for x in await presence.records.latest(limit=2)] == ["g3", "g2"]
    assert [x["game_id"] for x in await presence.records.latest(player="ann")] == ["g3", "g1"]
    assert [x["game_id"] for x in await presence.records.latest(game="collecto")] == ["g2"]
    assert (await presence.records.latest(game="collecto"))[0]["record"] == r2


async def test_records_paged(presence: Presence) -> None:
    """``offset`` skips that many of the matching records, newest first (``list_records``
    pages through them), with and without a filter."""
    for i in range(7):
        game = "collecto" if i % 3 == 0 else "collapsi"
        await presence.records.put(f"g{i}", {"game": game, "players": ["ann", f"p{i % 2}"]})

    async def ids(**kw: Any) -> list[str]:
        return [x["game_id"] for x in await presence.records.latest(**kw)]

    assert await ids(limit=3, offset=0) == ["g6", "g5", "g4"]
    assert await ids(limit=3, offset=3) == ["g3", "g2", "g1"]
    assert await ids(limit=3, offset=6) == ["g0"]
    assert await ids(limit=3, offset=7) == []
    assert await ids(limit=2, offset=1, game="collapsi") == ["g4", "g2"]
    assert await ids(limit=5, offset=1, player="p0") == ["g4", "g2", "g0"]
    assert await ids(limit=1, offset=2, game="collecto", player="ann") == ["g0"]


async def test_the_one_append_a_room_calls(presence: Presence) -> None:
    """``append``: one event, one with the room's members saved first, several at once;
    each fenced by the lease and the seq, the lobby entry with the last."""
    assert await presence.leases.acquire("r1", "node-a", ttl=5)
    joined = {"type": "player_joined", "room": "r1", "seq": 1, "player": {"name": "é"}}
    meta = {"game": "collapsi", "invite": None, "members": {"s1": {"role": "player"}}}
    assert (
        await presence.rooms.append("r1", [(joined, msgpack.packb(joined))], 1, "node-a", meta) == 1
    )
    assert await presence.rooms.get("r1") == meta
    ready = {"type": "ready_changed", "room": "r1", "seq": 2, "seat": 0, "ready": True}
    summary = {"room": "r1", "status": "waiting"}
    one = [(ready, msgpack.packb(ready))]
    assert await presence.rooms.append("r1", one, 2, "node-a", lobby=summary) == 2
    assert await presence.lobby.entries() == [summary]
    freed = {"type": "seat_freed", "room": "r1", "seq": 3, "seat": 0}
    left = {"type": "player_left", "room": "r1", "seq": 4, "name": "é"}
    two = [(freed, msgpack.packb(freed)), (left, msgpack.packb(left))]
    with pytest.raises(LeaseLost):
        await presence.rooms.append("r1", two, 3, "node-b")
    with pytest.raises(SeqConflict):
        await presence.rooms.append("r1", two, 4, "node-a")
    assert await presence.rooms.append("r1", two, 3, "node-a", {**meta, "members": {}}) == 4
    assert await presence.rooms.read_events("r1") == [joined, ready, freed, left]
    assert await presence.rooms.get("r1") == {**meta, "members": {}}
