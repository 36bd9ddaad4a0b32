"""Shared fixtures. Keep them generic: several areas' tests use them.

``arena``: start real arena servers on free loopback ports (in this process)
and connect real clients to them; everything is stopped at teardown.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import pytest
from redis_server import presence, redis_prefix, redis_server, redis_url  # noqa: F401 - fixtures

from protocol.tokens import weak_token


class ArenaHarness:
    """``await harness.start(**config)`` runs a server; ``await harness.client(...)`` connects."""

    def __init__(self, stack: AsyncExitStack) -> None:
        self._stack = stack
        self.arena: Any = None

    async def start(self, **config: Any) -> Any:
        from server.app import Config, running

        config.setdefault("port", 0)
        config.setdefault("host", "127.0.0.1")
        self.arena = await self._stack.enter_async_context(running(Config(**config)))
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


@pytest.fixture
async def arena() -> AsyncIterator[ArenaHarness]:
    async with AsyncExitStack() as stack:
        yield ArenaHarness(stack)
