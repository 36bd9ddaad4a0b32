"""Shared fixtures. Keep them generic: several areas' tests use them.

``arena``: start real arena servers on free loopback ports (in this process)
and connect real clients to them; everything is stopped at teardown. Before that,
every room still open is rebuilt from its log (``server.room_replay.restore``, as a
takeover or a restart does) and must equal the live room: so every game the suite
plays checks that the log and the room's one ``apply`` agree.
"""

from __future__ import annotations

import asyncio
import hashlib
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import pytest
from redis_server import presence, redis_prefix, redis_server, redis_url  # noqa: F401 - fixtures

from protocol.tokens import weak_token

# A suite started in the background by a non-interactive shell (`.ci/run &`) has SIGINT
# ignored, and every program it starts would inherit that (an ignored signal stays
# ignored across exec): the tests that press Ctrl-C on `arena play` or `arena tournament
# run` would see it do nothing. A handler here is reset to the default in each child.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


class ArenaHarness:
    """``await harness.start(**config)`` runs a server; ``await harness.client(...)`` connects."""

    def __init__(self, stack: AsyncExitStack) -> None:
        self._stack = stack
        self.arena: Any = None
        self.arenas: list[Any] = []

    async def start(self, **config: Any) -> Any:
        from server.app import Config, running

        config.setdefault("port", 0)
        config.setdefault("host", "127.0.0.1")
        self.arena = await self._stack.enter_async_context(running(Config(**config)))
        self.arenas.append(self.arena)
        return self.arena

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.arena.config.port}"

    async def client(
        self,
        name: str | None = None,
        token: str | None = None,
        bot: bool = False,
        **kwargs: Any,
    ) -> Any:
        """A connected client (logged in as ``name`` when given), closed at teardown."""
        from clients.client import Client

        c = Client(self.url, **kwargs)
        await c.connect()
        self._stack.push_async_callback(c.close)
        if name is not None:
            await c.login(name, token=strong(token), bot=bot)
        return c


def strong(token: str | None) -> str | None:
    """A test's short token (``"a"``, ``"ann-secret"``) as one the server accepts
    (protocol/tokens.py: 16+ characters, 8+ different): the same short token gives the
    same strong one, different ones differ, so tests keep meaning what they say."""
    if token is None or weak_token(token) is None:
        return token
    return f"{token}-{hashlib.sha256(token.encode()).hexdigest()[:24]}"


#: rooms the suite rebuilt from their logs and compared with the live room
REPLAYED: list[str] = []


async def check_rooms_restore(arena: Any) -> None:
    """Each open room of ``arena`` equals the room restored from its log."""
    from protocol.errors import ProtocolError
    from server.presence import PresenceError
    from server.room import room_meta
    from server.room_replay import restore, snapshot

    async def idle() -> None:
        return None

    for room in list(arena.rooms.values()):
        if room.closed:
            continue
        try:
            await asyncio.wait_for(room.ask(idle), 5)  # its queued work done
            logged = await arena.presence.rooms.read_events(room.id)
        except (PresenceError, ProtocolError, TimeoutError):
            continue  # a store cut by the test, a room closed meanwhile
        if room.closed or not logged or logged[0]["seq"] != 1 or logged[-1]["seq"] != room.seq:
            continue
        meta = room_meta(room, arena.node)
        now = int(asyncio.get_running_loop().time() * 1000)
        restored = restore(room.settings, meta["members"], logged, now, room.labels)
        assert snapshot(restored) == snapshot(room.state), f"room {room.id} restores otherwise"
        REPLAYED.append(room.id)


@pytest.fixture
async def arena() -> AsyncIterator[ArenaHarness]:
    async with AsyncExitStack() as stack:
        harness = ArenaHarness(stack)
        yield harness
        for a in harness.arenas:
            if not a.stopping:
                await check_rooms_restore(a)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if REPLAYED:
        terminalreporter.write_line(
            f"rooms restored from their logs and equal to the live room: {len(REPLAYED)}"
        )
