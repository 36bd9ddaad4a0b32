"""``arena serve`` as a real subprocess, and HTTP on the game port.

A restart with the same ``--data-dir`` still serves finished games' records;
SIGTERM tells connected clients and exits cleanly.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from arena_process import Node, serve_command, start_node
from conftest import strong

from clients.client import Client


@contextlib.asynccontextmanager
async def arena_serve(*args: str) -> AsyncIterator[Node]:
    """``arena serve ARGS``, killed on the way out; every line it logs must be JSON."""
    server = await start_node(serve_command(*args))
    try:
        yield server
    finally:
        server.kill9()
        await server.proc.wait()
        await server.drainer  # type: ignore[misc]
        assert not server.other, f"arena serve logged lines that are not JSON: {server.other}"


async def finished_game(url: str) -> tuple[str, list[str], Client]:
    ann, bob = Client(url), Client(url)
    await ann.connect()
    await bob.connect()
    await ann.login("ann", token=strong("a"))
    await bob.login("bob", token=strong("b"))
    state = await ann.create_room("collapsi", seat=0, rated=True)
    await bob.join(state.room)
    await bob.take_seat(state.room, 1)
    await ann.ready(state.room)
    await bob.ready(state.room)
    started = await ann.next(type="game_started", room=state.room)
    await [ann, bob][started.to_move].move(state.room, started.legal_moves[0])
    ev = await ann.next(type="move_made", room=state.room)
    await [ann, bob][ev.to_move].move(state.room, ev.legal_moves[0])  # both moved: no abort
    await bob.resign(state.room)
    over = await ann.next(type="game_over", room=state.room)
    moves = [e.move for e in ann.events(state.room) if e.type == "move_made"]
    await bob.close()
    return over.record, moves, ann


@pytest.mark.timeout(60)
async def test_restart_with_the_same_data_dir_keeps_records(tmp_path: Path) -> None:
    """The memory store with --data-dir: records are still written there as files."""
    data = str(tmp_path / "data")
    async with arena_serve("--store", "memory", "--data-dir", data) as first:
        # JSON logs (not a terminal) say where to play and watch too: the web page
        (listening,) = [e for e in first.lines if e["event"] == "listening"]
        page = await asyncio.to_thread(_get, listening["web"])
        assert b"<html" in page.lower()
        record_id, moves, ann = await finished_game(first.url)
        first.proc.send_signal(signal.SIGTERM)
        bye = await ann.next(type="goodbye")
        assert bye.reason == "shutdown"
        assert await asyncio.wait_for(first.proc.wait(), 15) == 0
        await ann.close()
        events = [e["event"] for e in first.lines]
        assert "arena_stopped" in events
        assert all("timestamp" in e and "level" in e for e in first.lines)
        assert any(e.get("room") and e["event"] == "game_over" for e in first.lines)
    assert (Path(data) / "records" / f"{record_id}.json").exists()
    async with arena_serve("--store", "memory", "--data-dir", data) as second:
        async with Client(second.url) as reader:
            rec = await reader.get_record(record_id)
            assert rec.data.moves == moves
            assert rec.data.result is not None and rec.data.result.reason == "resign"
            assert [c.name for c in rec.ratings] == ["ann", "bob"]
        second.proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(second.proc.wait(), 15) == 0


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as reply:
        assert reply.status == 200
        return reply.read()


async def _http_get(port: int, path: str) -> tuple[int, str, str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = raw.decode().partition("\r\n\r\n")
    status = int(head.split()[1])
    return status, head, body


async def test_healthz_and_metrics_on_the_game_port(arena: Any) -> None:
    a = await arena.start()
    status, _, body = await _http_get(a.config.port, "/healthz")
    assert (status, body) == (200, "ok\n")
    ann = await arena.client("ann")
    bob = await arena.client("bob")
    state = await ann.create_room("collapsi", seat=0)
    await bob.join(state.room)
    await bob.take_seat(state.room)
    await ann.ready(state.room)
    await bob.ready(state.room)
    started = await ann.next(type="game_started")
    waiter = [ann, bob][1 - started.to_move]
    with contextlib.suppress(Exception):
        await waiter.move(state.room, started.legal_moves[0])  # not_your_turn, counted
    await [ann, bob][started.to_move].move(state.room, started.legal_moves[0])
    status, head, body = await _http_get(a.config.port, "/metrics")
    assert status == 200 and "text/plain" in head
    metrics = {
        line.split(" ")[0]: float(line.split(" ")[1])
        for line in body.splitlines()
        if line and not line.startswith("#")
    }
    assert metrics["arena_connections"] == 2
    assert metrics["arena_rooms"] == 1
    assert metrics["arena_games_live"] == 1
    assert metrics['arena_moves_total{game="collapsi"}'] == 1
    assert metrics['arena_games_started_total{game="collapsi"}'] == 1
    assert metrics['arena_errors_total{code="not_your_turn"}'] == 1
    assert "arena_event_loop_lag_seconds" in metrics
    # moves and messages are counted in batches, added up when scraped: a second
    # scrape after one more move counts it once, and the first move is not counted again
    messages_in = metrics["arena_messages_in_total"]
    assert messages_in >= 8 and metrics["arena_messages_out_total"] > messages_in
    started_to = 1 - started.to_move
    made = await [ann, bob][started_to].next(type="move_made")
    await [ann, bob][started_to].move(state.room, made.legal_moves[0])
    _, _, body = await _http_get(a.config.port, "/metrics")
    again = {
        line.split(" ")[0]: float(line.split(" ")[1])
        for line in body.splitlines()
        if line and not line.startswith("#")
    }
    assert again['arena_moves_total{game="collapsi"}'] == 2
    assert again["arena_messages_in_total"] == messages_in + 1
    assert 'arena_games_finished_total{game="collapsi",reason="resign"}' not in again
    await ann.resign(state.room)
    await bob.next(type="game_over")
    _, _, body = await _http_get(a.config.port, "/metrics")
    assert 'arena_games_finished_total{game="collapsi",reason="resign"} 1.0' in body
    status, _, _ = await _http_get(a.config.port, "/nope")
    assert status == 404
