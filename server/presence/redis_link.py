"""The one way the Redis parts of presence talk to Redis: two clients behind one
facade, with one error regime (every failure a :class:`PresenceError`, every round
trip reported to :attr:`RedisLink.observe`).

Why two clients: single commands and scripts (most of a room's traffic) go through
the lean pipelined connection of :mod:`server.presence.resp`; transactions,
``WATCH``, multi-key pipelines and scans through redis-py (:attr:`RedisLink.redis`,
used only inside :func:`guard`-ed calls), which also reconnects by itself. Both
follow a Sentinel's primary (:mod:`server.presence.sentinel`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from server.presence import sentinel
from server.presence.base import PresenceError, Subscription
from server.presence.redis_scripts import Lua
from server.presence.redis_subscription import RedisSubscription
from server.presence.redis_values import ignore
from server.presence.resp import ReplyError, RespClient, RespConnectionError
from server.presence.sentinel import Locator
from server.settings import redacted

T = TypeVar("T")


def guard(op: str) -> Callable[[Callable[..., Awaitable[T]]], Callable[..., Awaitable[T]]]:
    """Turn every Redis failure of the decorated call into :class:`PresenceError`
    (typed ``unavailable``); report its time and failure to its link's ``observe``
    under ``op`` (the ``op`` label of ``arena_redis_seconds``: the names the store's
    methods had before they became ports, so the metrics keep their labels). For the
    calls that use redis-py: a method of an object with a ``link``."""

    def decorate(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
        @functools.wraps(fn)
        async def wrapper(self: Any, *args: Any, **kwargs: Any) -> T:
            started = time.perf_counter()
            try:
                result = await fn(self, *args, **kwargs)
            except PresenceError as exc:
                self.link.observe(op, started, type(exc).__name__)
                raise
            except (RedisError, OSError, TimeoutError) as exc:
                self.link.observe(op, started, type(exc).__name__)
                raise PresenceError(f"redis: {type(exc).__name__}: {exc}") from exc
            self.link.observe(op, started, None)
            return result

        return wrapper

    return decorate


class RedisLink:
    """Both clients of one Redis (or Sentinel-watched primary), keys under ``prefix``."""

    def __init__(
        self, url: str, prefix: str, socket_timeout: float = 2.0, connect_timeout: float = 1.0
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.timeout = socket_timeout
        common: dict[str, Any] = {
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": connect_timeout,
            "decode_responses": True,
            "health_check_interval": 0,
        }
        # one retry on a broken connection (after a Redis restart a pooled connection fails
        # once, then reconnects); none on a timeout, which may have run the command already
        retry = Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,))
        self._locator: Locator | None = None
        locate = None
        if url.startswith(sentinel.SCHEME):  # both clients follow Sentinel's primary
            self._locator = Locator(sentinel.parse(url), socket_timeout, connect_timeout)
            pool: Any = self._locator.pool(retry=retry, max_connections=64, **common)
            locate, url = self._locator.primary, self._locator.config.redis_url()
        else:
            # a blocking pool: a burst of requests waits for a free connection (up to the
            # timeout)
            pool = aioredis.BlockingConnectionPool.from_url(
                url, retry=retry, max_connections=64, timeout=socket_timeout, **common
            )
        #: redis-py, for transactions, WATCH, pipelines and scans (in guard-ed calls only)
        self.redis: aioredis.Redis = aioredis.Redis(connection_pool=pool)
        self._resp = RespClient(
            url, timeout=socket_timeout, connect_timeout=connect_timeout, locate=locate
        )
        self._subs: set[RedisSubscription] = set()
        #: told of every round trip (operation, its perf_counter start, error or None)
        self.observe: Callable[[str, float, str | None], None] = ignore

    def k(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    async def x(self, *args: Any, raw: bool = False) -> Any:
        """One command on the lean connection (pipelined with every other task's)."""
        started = time.perf_counter()
        try:
            reply = await self._resp.execute(*args, raw=raw)
        except (RespConnectionError, ReplyError) as exc:
            if not str(exc).startswith("NOSCRIPT"):  # (answered by EVAL at once)
                self.observe(args[0], started, type(exc).__name__)
            raise PresenceError(f"redis: {type(exc).__name__}: {exc}") from exc
        self.observe(args[0], started, None)
        return reply

    async def lua(self, script: Lua, keys: list[str], *args: Any) -> Any:
        """A script by its hash (sent whole the first time Redis lacks it)."""
        try:
            return await self.x("EVALSHA", script.sha, len(keys), *keys, *args)
        except PresenceError as exc:
            if not str(exc).startswith("redis: ReplyError: NOSCRIPT"):
                raise
        return await self.x("EVAL", script.text, len(keys), *keys, *args)  # (caches it)

    async def subscribe(self, channel: str) -> Subscription:
        sub = RedisSubscription(self._resp, channel, self._subs)
        try:
            await sub.open(self.timeout)
        except (OSError, TimeoutError) as exc:
            raise PresenceError(f"redis: cannot subscribe: {exc}") from exc
        return sub

    async def start(self, wait: float = 10.0) -> None:
        """Connect; Redis may still be starting (a compose file's ``depends_on`` does not
        wait for it), so keep trying for ``wait`` seconds before giving up."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while True:
            try:
                await self.redis.ping()
                await self._resp.execute("PING")
                return
            except (RedisError, ReplyError, OSError, TimeoutError) as exc:
                if loop.time() >= deadline:
                    where = redacted(self.url)  # the error is logged: no password in it
                    raise PresenceError(f"redis: cannot connect to {where}: {exc}") from exc
                await asyncio.sleep(0.2)

    async def close(self) -> None:
        for sub in list(self._subs):
            await sub.close()
        self._subs.clear()
        await self._resp.close()
        with contextlib.suppress(Exception):
            await self.redis.aclose()
        if self._locator is not None:
            with contextlib.suppress(Exception):
                await self._locator.close()
