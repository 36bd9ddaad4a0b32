"""Operator surfaces and browser pages: the Origin check on the handshake, where
/metrics is served, and who may read a private game's record. Real server on
loopback, real HTTP and WebSocket clients."""

from __future__ import annotations

from typing import Any

import pytest
from test_server_process import _http_get
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from clients.client import ArenaError
from server.origin import origin_allowed


async def _handshake(url: str, origin: str | None) -> int:
    """The HTTP status of a WebSocket handshake sent with this Origin (101: opened)."""
    try:
        async with connect(url, origin=origin) as ws:  # type: ignore[arg-type]
            await ws.send('{"type":"hello","versions":[1],"software":"t"}')
            assert '"welcome"' in await ws.recv()
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


async def test_handshakes_from_other_origins_are_refused(arena: Any) -> None:
    a = await arena.start(allowed_origins=("https://play.example",))
    url = arena.url
    assert await _handshake(url, None) == 101  # programs send no Origin
    assert await _handshake(url, "https://play.example") == 101  # on the list
    assert await _handshake(url, f"http://127.0.0.1:{a.config.port}") == 101  # same host
    for evil in ("https://evil.example", "null", f"http://127.0.0.1:{a.config.port + 1}"):
        assert await _handshake(url, evil) == 403, evil
    # the library's own client (no Origin) logs in as before
    assert (await arena.client("ann")).session


def test_the_allow_list_rules() -> None:
    assert origin_allowed(None, "h:1", ())
    assert origin_allowed("https://a.example", "h:1", ("*",))
    assert origin_allowed("HTTPS://Play.Example/", "h:1", ("https://play.example",))
    assert not origin_allowed("null", "h:1", ())
    assert origin_allowed("null", "h:1", ("null",))
    assert not origin_allowed("https://h:1.evil", "h:1", ())
    assert not origin_allowed("file://h:1", "h:1", ())


async def test_metrics_on_their_own_port_leave_the_game_port(arena: Any) -> None:
    a = await arena.start(metrics_port=0)
    assert a.config.metrics_port not in (None, 0, a.config.port)
    status, _, _ = await _http_get(a.config.port, "/metrics")
    assert status == 404
    status, _, body = await _http_get(a.config.metrics_port, "/metrics")
    assert status == 200 and "arena_connections" in body
    status, _, body = await _http_get(a.config.port, "/healthz")
    assert (status, body) == (200, "ok\n")


async def test_a_private_games_record_is_for_its_players_and_invite_holders(
    arena: Any,
) -> None:
    await arena.start()
    ann, bob = await arena.client("ann"), await arena.client("bob")
    state = await ann.create_room("collapsi", seat=0, private=True)
    invite = state.invite
    assert invite
    await bob.join(invite=invite)
    await bob.take_seat(state.room, 1)
    await ann.ready(state.room)
    await bob.ready(state.room)
    await ann.next(type="game_started")
    await ann.resign(state.room)
    over = await bob.next(type="game_over")
    record = over.record
    assert (await ann.get_record(record)).record == record  # a player
    stranger = await arena.client("eve")
    with pytest.raises(ArenaError) as refused:
        await stranger.get_record(record)
    assert refused.value.code == "unknown_record"  # as if there were no such record
    anonymous = await arena.client()
    with pytest.raises(ArenaError):
        await anonymous.get_record(record)
    assert (await stranger.get_record(record, invite=invite)).record == record
    with pytest.raises(ArenaError):
        await stranger.get_record(record, invite="wrong-invite")
    # a public game's record stays readable by anyone
    pub = await ann.create_room("collapsi", seat=0)
    await bob.join(pub.room)
    await bob.take_seat(pub.room, 1)
    await ann.ready(pub.room)
    await bob.ready(pub.room)
    await ann.next(type="game_started", room=pub.room)
    await bob.resign(pub.room)
    done = await ann.next(type="game_over", room=pub.room)
    assert (await anonymous.get_record(done.record)).record == done.record


async def test_a_guests_private_record_is_not_for_the_next_guest_of_that_name(
    arena: Any,
) -> None:
    """A guest's name is nobody's: the guest reads its private game in its session; a
    later guest of the same name, or whoever claims the name, needs the invite."""
    await arena.start()
    gus, bob = await arena.client("gus"), await arena.client("bob", token="bob-secret")
    state = await gus.create_room("collapsi", seat=0, private=True)
    await bob.join(invite=state.invite)
    await bob.take_seat(state.room, 1)
    await gus.ready(state.room)
    await bob.ready(state.room)
    await gus.next(type="game_started")
    await gus.resign(state.room)
    record = (await bob.next(type="game_over")).record
    assert (await gus.get_record(record)).record == record  # the guest, in its session
    assert (await bob.get_record(record)).record == record  # a name's owner
    await gus.logout()  # (its name is free at once)
    for token in (None, "gus-secret"):  # another guest gus; then gus claimed
        later = await arena.client("gus", token=token)
        with pytest.raises(ArenaError) as refused:
            await later.get_record(record)
        assert refused.value.code == "unknown_record"
        assert (await later.get_record(record, invite=state.invite)).record == record
        await later.logout()
    await bob.logout()
    bob_again = await arena.client("bob", token="bob-secret")
    assert (await bob_again.get_record(record)).record == record
