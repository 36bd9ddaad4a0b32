"""Sessions, names, limits and the connection state machine, end to end.

Real server on loopback; a raw ``websockets`` connection (or a raw TCP socket)
where the client library would refuse to misbehave.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
from conftest import strong
from test_keepalive import handshake
from test_server_games import ready_all, seat_players
from websockets.asyncio.client import connect

from clients.client import (
    ArenaError,
    Client,
    ConnectionLost,
    NameTakenError,
    UnknownSessionError,
)
from protocol import messages as m
from protocol.codec import decode_server, encode


async def test_names_are_claimed_with_a_token_and_bots_are_marked(arena: Any) -> None:
    await arena.start()
    ann = await arena.client()
    player = await ann.login("Ann", token=strong("ann-secret"), bot=True)
    assert player == m.Player(name="Ann", guest=False, bot=True)
    other = await arena.client()
    with pytest.raises(NameTakenError):
        await other.login("ann", token=strong("wrong"))  # names are case-insensitive
    with pytest.raises(NameTakenError):
        await other.login("ANN")  # a guest cannot use a claimed name
    guest = await other.login("visitor")
    assert guest.guest and not guest.bot
    third = await arena.client()
    with pytest.raises(NameTakenError):
        await third.login("visitor")  # online already
    with pytest.raises(ArenaError) as twice:
        await other.login("again")
    assert twice.value.code == "already_authenticated"
    await ann.logout()
    back = await arena.client()
    assert (await back.login("ann", token=strong("ann-secret"))).name == "ann"


async def test_a_sessions_rooms_are_saved_as_they_change(arena: Any) -> None:
    """What a resume on another node reads: the session's rooms in presence, saved when
    it joins or leaves one (the saves of one loop step in one call)."""
    await arena.start()
    ann, bob = await arena.client("ann"), await arena.client("bob")
    presence = arena.arena.presence

    async def rooms(c: Any) -> list[str]:
        return (await presence.sessions.get(c.session))["rooms"]

    state = await ann.create_room("collapsi", seat=0)
    assert await rooms(ann) == [state.room]
    await bob.join(state.room)
    assert await rooms(bob) == [state.room]
    await asyncio.gather(ann.leave(state.room), bob.leave(state.room))
    for _ in range(100):  # a leave's save is not waited for
        if await rooms(ann) == [] and await rooms(bob) == []:
            break
        await asyncio.sleep(0.01)
    assert await rooms(ann) == [] and await rooms(bob) == []


async def test_guests_cannot_play_rated_games(arena: Any) -> None:
    await arena.start()
    guest = await arena.client("guest")
    with pytest.raises(ArenaError) as exc:
        await guest.create_room("collapsi", rated=True)
    assert exc.value.code == "forbidden"


async def test_resume_needs_a_live_token_and_replaces_the_old_connection(arena: Any) -> None:
    await arena.start(grace=30)
    ann = await arena.client("ann", token="t")
    state = await ann.create_room("collapsi", seat=0)
    stranger = await arena.client()
    with pytest.raises(UnknownSessionError):
        await stranger.request(m.Resume(token="not-a-token"))
    # A second connection resumes ann's session while the first is still open.
    twin = Client(arena.url)
    await twin.connect()
    twin.resume_token = ann.resume_token
    resumed = await twin.request(
        m.Resume(token=ann.resume_token, rooms=[m.RoomCursor(room=state.room, seq=state.seq)])
    )
    assert resumed.player.name == "ann" and resumed.rooms == [state.room]
    bye = await ann.next(type="goodbye")
    assert bye.reason == "session_replaced"
    await asyncio.wait_for(ann.closed.wait(), 5)
    assert ann.close_code == 4002
    catch = await twin.next(type="catch_up", room=state.room)
    assert catch.events == []
    await twin.chat(state.room, "still me")
    await twin.close()


async def test_a_spectator_that_reconnects_catches_up_from_its_last_seq(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann")
    state = await ann.create_room("collapsi", seat=0)
    watcher = await arena.client()
    await watcher.watch(state.room)
    await ann.chat(state.room, "one")
    await watcher.next(type="chat_message")
    last = watcher.rooms[state.room].seq
    watcher.abort()
    await ann.chat(state.room, "two")
    await ann.chat(state.room, "three")
    fresh = await arena.client()  # a new connection, watching again from a seq
    catch = await fresh.watch(state.room, since_seq=last)
    assert isinstance(catch, m.CatchUp)
    assert [e.text for e in catch.events] == ["two", "three"]
    assert catch.events[0].seq == last + 1


async def test_rooms_per_player_and_chat_length_are_limited(arena: Any) -> None:
    await arena.start(max_rooms_per_player=2)
    ann = await arena.client("ann")
    first = await ann.create_room("collapsi")
    await ann.create_room("collecto")
    with pytest.raises(ArenaError) as exc:
        await ann.create_room("collapsi")
    assert exc.value.code == "too_many_rooms"
    with pytest.raises(ArenaError) as long_chat:
        await ann.request(m.Chat.model_construct(room=first.room, text="x" * 501))
    assert long_chat.value.code == "bad_request"
    other = await arena.client()
    with pytest.raises(ArenaError) as long_name:
        await other.request(m.Login.model_construct(name="n" * 33, token=None, bot=False))
    assert long_name.value.code == "bad_request"
    await ann.chat(first.room, "x" * 500)


async def test_unknown_room_and_game_and_bad_setup(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann")
    with pytest.raises(ArenaError) as e1:
        await ann.join("r-nope")
    assert e1.value.code == "unknown_room"
    with pytest.raises(ArenaError) as e2:
        await ann.create_room("chess")
    assert e2.value.code == "unknown_game"
    with pytest.raises(ArenaError) as e3:
        await ann.create_room("collapsi", seats=7)
    assert e3.value.code == "bad_setup"


async def raw(arena: Any, **kwargs: Any) -> Any:
    return await connect(arena.url, compression=None, **kwargs)


async def test_first_message_must_be_hello_and_versions_must_meet(arena: Any) -> None:
    await arena.start()
    ws = await raw(arena)
    await ws.send(encode(m.Ping(id=1)))
    err = decode_server(await ws.recv())
    assert err.code == "hello_required" and err.re == 1
    await ws.wait_closed()
    assert ws.close_code == 4000
    ws = await raw(arena)
    await ws.send(encode(m.Hello(versions=[99], software="future"), binary=False))
    err = decode_server(await ws.recv())
    assert err.code == "unsupported_version" and err.details == {"versions": [1]}
    await ws.wait_closed()
    assert ws.close_code == 4001


@pytest.mark.parametrize(
    ("frame", "code"),
    [("{not json", "bad_frame"), (b"\xc1", "bad_frame"), ('{"type":"teleport"}', "unknown_type")],
)
async def test_before_hello_any_refused_frame_closes_the_connection(
    arena: Any, frame: str | bytes, code: str
) -> None:
    """Before hello anything but a valid hello ends the connection (PROTOCOL.md, state
    machine), answered with its own error first."""
    await arena.start()
    ws = await raw(arena)
    await ws.send(frame)
    assert decode_server(await ws.recv()).code == code
    await ws.wait_closed()
    assert ws.close_code == 4000


async def test_bad_frames_and_unknown_types_keep_the_connection(arena: Any) -> None:
    await arena.start()
    ws = await raw(arena)
    await ws.send(encode(m.Hello(versions=[1], software="raw"), binary=False))
    assert decode_server(await ws.recv()).type == "welcome"
    await ws.send("{not json")
    assert decode_server(await ws.recv()).code == "bad_frame"
    await ws.send('{"type":"teleport","id":7}')
    err = decode_server(await ws.recv())
    assert (err.code, err.re) == ("unknown_type", 7)
    await ws.send('{"type":"ping","id":8}')
    assert decode_server(await ws.recv()) == m.Pong(re=8)
    await ws.close()


async def test_oversized_frames_close_the_connection(arena: Any) -> None:
    await arena.start(max_frame_bytes=4096)
    ws = await raw(arena)
    await ws.send(encode(m.Hello(versions=[1], software="raw")))
    await ws.recv()
    await ws.send(b"\x81" + os.urandom(10_000))
    await ws.wait_closed()
    assert ws.close_code == 1009


async def test_no_hello_in_time_is_closed(arena: Any) -> None:
    await arena.start(hello_timeout=0.2)
    ws = await raw(arena)
    bye = decode_server(await asyncio.wait_for(ws.recv(), 5))
    assert bye.type == "goodbye" and bye.reason == "idle"
    await ws.wait_closed()
    assert ws.close_code == 4005


async def test_a_dead_peer_is_found_by_pings(arena: Any) -> None:
    a = await arena.start(ping_interval=0.2, ping_timeout=0.2)
    # A raw TCP peer that completes the WebSocket handshake, then never answers anything.
    _, writer = await handshake(a.config.port)
    (conn,) = a.connections
    await asyncio.wait_for(conn.done.wait(), 5)  # pings unanswered: the server let go
    writer.close()


async def test_logout_ends_the_session(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann")
    await ann.create_room("collapsi", seat=0)
    token = ann.resume_token
    await ann.logout()
    assert ann.close_code == 1000
    other = await arena.client()
    with pytest.raises(UnknownSessionError):
        await other.request(m.Resume(token=token))
    with pytest.raises(ConnectionLost):
        await ann.ping()


async def test_a_waiting_room_names_its_rules_version(arena: Any) -> None:
    """Every room_state names the rules version, even before a game is dealt (ruling 1)."""
    await arena.start()
    ann = await arena.client("ann")
    classic = await ann.create_room("collapsi", rules="classic", seat=0)
    assert classic.status == "waiting" and classic.rules_version == "1.1.0"
    standard = await ann.create_room("collapsi", seat=0)
    assert standard.rules == "standard" and standard.rules_version == "1.3.1"
    collecto = await ann.create_room("collecto", seat=0)
    assert collecto.rules_version == "2020"


async def test_only_a_session_that_logged_in_can_be_resumed(arena: Any) -> None:
    """A welcome's token becomes valid once its connection logged in (PROTOCOL.md):
    resuming this connection's own session, or one that never logged in, is
    ``unknown_session`` and changes nothing: both connections log in afterwards."""
    await arena.start()
    ann, lurker = await arena.client(), await arena.client()
    for token in (ann.resume_token, lurker.resume_token):
        with pytest.raises(ArenaError) as refused:
            await ann.request(m.Resume(token=token))
        assert refused.value.code == "unknown_session"
    assert not lurker.closed.is_set()
    assert (await ann.login("ann")).name == "ann"
    assert (await lurker.login("lurker")).name == "lurker"
    room = (await ann.create_room("collapsi", seat=0)).room
    await lurker.join(room)


async def test_a_create_room_refused_for_its_seat_leaves_no_room(arena: Any) -> None:
    """Errors are never partial (PROTOCOL.md): a seat the room does not have is refused
    before the room opens, so refusals never add up to too_many_rooms."""
    server = await arena.start(max_rooms_per_player=1)
    ann = await arena.client("ann")
    for _ in range(2):
        with pytest.raises(ArenaError) as refused:
            await ann.create_room("collapsi", seat=5)
        assert refused.value.code == "bad_request"
    assert server.rooms == {} and await ann.list_rooms() == []
    assert (await ann.create_room("collapsi", seat=1)).you == 1


async def test_watching_a_room_first_does_not_get_round_the_rooms_limit(arena: Any) -> None:
    await arena.start(max_rooms_per_player=1)
    ann, bob = await arena.client("ann"), await arena.client("bob")
    await ann.create_room("collapsi", seat=0)
    room = (await bob.create_room("collapsi", seat=0)).room
    await ann.watch(room)
    with pytest.raises(ArenaError) as refused:
        await ann.join(room)
    assert refused.value.code == "too_many_rooms"
    assert (await bob.watch(room)).seats[1].player is None


async def test_a_player_logging_in_again_in_the_grace_period_takes_its_session_over(
    arena: Any,
) -> None:
    """A client that crashed (its resume token lost) starts again and logs in with the
    name's token: it gets its dropped session back, seat and game, as a resume would."""
    await arena.start(grace=30.0)
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"])
    await ready_all(room, [ann, bob])
    started = await bob.next(type="game_started", room=room)
    other = await arena.client()
    with pytest.raises(NameTakenError):  # its connection is open: stays as it was
        await other.login("ann", token=strong("ann-secret"))
    ann.abort()
    await bob.next(type="player_disconnected", room=room)
    with pytest.raises(NameTakenError):  # a guest proves nothing
        await other.login("ann")
    again = await arena.client()
    player = await again.login("ann", token=strong("ann-secret"))
    assert player.name == "ann" and not player.guest
    logged = next(x for x in again.received if x.type == "logged_in")
    assert (logged.session, logged.resume_token, logged.rooms) == (
        ann.session,
        ann.resume_token,
        [room],
    )
    assert (again.session, again.resume_token) == (ann.session, ann.resume_token)
    back = await again.next(type="player_reconnected", room=room)
    after = again.received[again.received.index(logged) + 1 :]
    assert [x.type for x in after] == ["room_state", "player_reconnected"]
    state = after[0]
    assert (state.room, state.status, state.you) == (room, "playing", 0)
    assert back.seq == state.seq + 1
    assert (await bob.next(type="player_reconnected", room=room)).seq == back.seq
    # the game goes on with ann in her seat, and the session resumes as ever
    mover = again if started.to_move == 0 else bob
    await mover.move(room, started.legal_moves[0])
    again.abort()
    resumed = await again.reconnect()
    assert resumed.session == ann.session and resumed.rooms == [room]
    assert not [x for x in bob.received if x.type == "game_over"]


async def test_a_takeover_or_resume_refused_by_the_store_changes_nothing(arena: Any) -> None:
    """The store fails once as the session is kept for whoever takes it over (an outage
    injected into the real in-memory store's call): the login, then a resume, is
    answered unavailable and changes nothing, so its retry gets the session back."""
    from server.presence import PresenceError

    server = await arena.start(grace=30.0)
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"])
    await ready_all(room, [ann, bob])
    touch = server.presence.sessions.touch

    async def fails_once(session: str, ttl: float) -> None:
        server.presence.sessions.touch = touch
        raise PresenceError("the store is down")

    async def dropped(client: Any) -> int:
        seen = max((e.seq for e in bob.events(room)), default=0)
        client.abort()
        gone = await bob.next(type="player_disconnected", room=room, where=lambda e: e.seq > seen)
        return gone.seq

    async def refused_once(request: Any) -> Any:
        server.presence.sessions.touch = fails_once
        with pytest.raises(ArenaError) as refused:
            await request()
        assert refused.value.code == "unavailable"
        return await request()

    await dropped(ann)
    again = await arena.client()
    await refused_once(lambda: again.login("ann", token=strong("ann-secret")))
    assert again.session == ann.session
    assert (await again.next(type="room_state", room=room)).you == 0
    await bob.next(type="player_reconnected", room=room)
    seq = await dropped(again)
    third = await arena.client()
    resumed = await refused_once(lambda: third.request(m.Resume(token=again.resume_token)))
    assert resumed.session == ann.session and resumed.rooms == [room]
    back = await bob.next(type="player_reconnected", room=room, where=lambda e: e.seq > seq)
    assert back.seat == 0


async def test_a_room_gone_while_the_session_was_away_is_not_listed_on_its_return(
    arena: Any,
) -> None:
    """A dropped session whose list of rooms names one the node no longer has (gone
    with its log while nobody was connected; a restore can leave such a name): the
    takeover's ``logged_in`` and a resume's ``resumed`` list only the rooms there are,
    each followed by its snapshot or catch-up, and the gone one is forgotten. A client
    that waits for the snapshot of every room listed is not kept waiting for none
    (PROTOCOL.md: a closed room is not in the list)."""
    node = await arena.start(grace=30.0)
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"])
    ann.abort()
    await bob.next(type="player_disconnected", room=room)
    node.sessions[ann.session].rooms.add("r-gone")
    again = await arena.client()
    await again.login("ann", token=strong("ann-secret"))
    logged = next(x for x in again.received if x.type == "logged_in")
    assert logged.rooms == [room]
    await again.next(type="room_state", room=room)
    assert node.sessions[ann.session].rooms == {room}
    again.abort()
    await bob.next(type="player_disconnected", room=room)
    node.sessions[ann.session].rooms.add("r-gone-too")
    resumed = await again.reconnect()
    assert resumed.rooms == [room]
    await again.next(type="catch_up", room=room)
    assert node.sessions[ann.session].rooms == {room}
