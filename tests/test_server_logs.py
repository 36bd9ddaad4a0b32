"""``arena serve``'s JSON log lines carry the ids that tie them together: the connection
and the session for what a connection does, the room for what happens in a room."""

from __future__ import annotations

from arena_process import serve_command, start_node, stop_node
from test_server_games import ready_all

from clients.client import Client


async def test_log_lines_carry_connection_session_and_room_ids() -> None:
    node = await start_node(serve_command("--grace", "30", "--store", "memory"))
    try:
        ann, bob = Client(node.url), Client(node.url)
        await ann.connect()
        await bob.connect()
        await ann.login("ann")
        await bob.login("bob")
        room = (await ann.create_room("collapsi", seat=0)).room
        await bob.join(room)
        await bob.take_seat(room, 1)
        await ready_all(room, [ann, bob])
        await ann.next(type="game_started", room=room)
        await bob.resign(room)
        await ann.next(type="game_over", room=room)
        ann.abort()
        await ann.reconnect()
        await ann.close()
        await bob.close()
    finally:
        await stop_node(node)
    sessions = {ann.session, bob.session}
    hellos = node.events("hello")
    assert len(hellos) == 3 and all(e.get("conn") for e in hellos)
    logins = node.events("login")
    assert {(e["name"], e.get("session")) for e in logins} == {
        ("ann", ann.session),
        ("bob", bob.session),
    }
    conn_of = {e["session"]: e.get("conn") for e in hellos if e.get("session") in sessions}
    for e in logins:
        assert e.get("conn") == conn_of[e["session"]]  # the connection that said hello
    (resumed,) = node.events("resumed")
    assert resumed.get("session") == ann.session and resumed.get("conn")
    assert resumed["conn"] not in conn_of.values()  # a new connection, the same session
    lost = node.events("connection_lost")
    assert {e.get("session") for e in lost} >= sessions and all(e.get("conn") for e in lost)
    for event in ("room_created", "game_started", "game_over"):
        assert [e.get("room") for e in node.events(event)] == [room], event
