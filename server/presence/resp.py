"""A lean pipelined Redis connection for the presence's hot path (rooms' writes).

redis-py spends ~25 us of CPU on each command even when pipelined (a pipeline
object per batch, packing and a coroutine per reply in Python, and a ``SCRIPT
EXISTS`` round trip before every pipeline that runs a script), and a room sends
several commands per move. Here one asyncio protocol holds one connection:
commands are encoded as they come and written once per loop iteration, replies
are parsed as they arrive and resolve the commands' futures in order (Redis
answers in order). RESP2, bulk strings decoded as UTF-8. The protocol itself is
not ours: hiredis (the Redis project's C parser, which redis-py uses too when
installed) packs the commands and parses the replies, and redis-py reads the URL;
what is ours is only the batching and the order of the futures.

A command whose connection breaks before its reply is sent once more on a fresh
connection (as redis-py's retry did: after a Redis restart the old connection
fails once); no reply within ``timeout`` closes the connection and is not
retried (the command may have run). Either failure surfaces as
:class:`RespConnectionError`, an error reply as :class:`ReplyError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import hiredis
import structlog
from hiredis import pack_command
from redis.connection import parse_url
from redis.exceptions import RedisError

log = structlog.get_logger("arena.redis")


class RespConnectionError(ConnectionError):
    """Redis could not be reached, the connection broke, or it stopped answering."""


class RespTimeout(RespConnectionError):
    """No reply in time: the command may have run, so it is not sent again."""


class RespProtocolError(RespConnectionError):
    """The peer's bytes are not RESP: the connection is given up."""


class ReplyError(Exception):
    """Redis answered the command with an error (``-ERR ...``, ``-NOSCRIPT ...``)."""


def encode(args: tuple[Any, ...]) -> bytes:
    """One command in RESP (an array of bulk strings), packed by hiredis."""
    return pack_command(args)


class Connection(asyncio.Protocol):
    """One connection: replies go to the commands' futures in order; with ``on_push`` set
    (subscribe mode), replies no command waits for (published messages) go to it."""

    def __init__(self, timeout: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.timeout = timeout
        self.transport: asyncio.Transport | None = None
        self.waiters: deque[tuple[asyncio.Future[Any], bool]] = deque()
        self.out: list[bytes] = []
        #: hiredis's RESP parser: bulk strings decoded as UTF-8 unless a command asks raw
        self.reader = hiredis.Reader(
            replyError=ReplyError, protocolError=RespProtocolError, encoding="utf-8"
        )
        self.lost: Exception | None = None
        self.replies = 0
        self._seen = 0
        self._stalls = 0
        self._timer: asyncio.TimerHandle | None = None
        self.on_push: Callable[[Any], None] | None = None
        self.on_lost: Callable[[], None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def send(self, data: bytes, raw: bool = False) -> asyncio.Future[Any]:
        """Queue one encoded command; it is written with the others at the next turn."""
        fut = self.loop.create_future()
        if self.lost is not None:
            fut.set_exception(RespConnectionError(str(self.lost)))
            return fut
        if not self.out:
            self.loop.call_soon(self._flush)
        self.out.append(data)
        self.waiters.append((fut, raw))
        if self._timer is None:
            self._seen, self._stalls = self.replies, 0
            self._timer = self.loop.call_later(self.timeout / 2, self._watch)
        return fut

    def _flush(self) -> None:
        if self.out and self.transport is not None and self.lost is None:
            self.transport.write(b"".join(self.out))
        self.out.clear()

    def _watch(self) -> None:
        """Every half timeout while replies are due; none for three in a row closes it
        (so a stall is noticed after 1 to 1.5 timeouts)."""
        self._timer = None
        if not self.waiters or self.lost is not None:
            return
        self._stalls = self._stalls + 1 if self.replies == self._seen else 0
        if self._stalls >= 3:
            self._fail(TimeoutError(f"no reply from redis in {self.timeout} s"))
            if self.transport is not None:
                self.transport.abort()
            return
        self._seen = self.replies
        self._timer = self.loop.call_later(self.timeout / 2, self._watch)

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        reader.feed(data)
        waiters = self.waiters
        try:
            while waiters:
                value = reader.gets(not waiters[0][1])
                if value is False:  # the rest of this reply is still on its way
                    return
                self.replies += 1
                fut = waiters.popleft()[0]
                if not fut.done():
                    fut.set_result(value)
            push = self.on_push
            if push is not None:
                while (value := reader.gets(False)) is not False:
                    push(value)
        except RespProtocolError as exc:  # not Redis speaking: give up on it
            self._fail(exc)
            if self.transport is not None:
                self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(exc or ConnectionResetError("redis closed the connection"))

    def _fail(self, exc: Exception) -> None:
        if self.lost is None:
            self.lost = exc
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        cls = RespTimeout if isinstance(exc, TimeoutError) else RespConnectionError
        err = cls(f"{type(exc).__name__}: {exc}")
        while self.waiters:
            fut = self.waiters.popleft()[0]
            if not fut.done():
                fut.set_exception(err)
        self.out.clear()
        if self.on_lost is not None:
            on_lost, self.on_lost = self.on_lost, None
            on_lost()

    def close(self) -> None:
        self._fail(ConnectionAbortedError("closed"))
        if self.transport is not None:
            self.transport.close()


def _tls_context(opts: dict[str, Any]) -> ssl.SSLContext:
    """TLS as redis-py reads a ``rediss://`` URL: the system's CAs, or ``?ssl_ca_certs=``;
    ``?ssl_cert_reqs=none`` checks nothing (for tests of one's own, never production)."""
    ctx = ssl.create_default_context(cafile=opts.get("ssl_ca_certs"))
    if str(opts.get("ssl_cert_reqs", "required")).lower() == "none":
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


class RespClient:
    """One lazily (re)opened connection to the Redis of ``url`` (redis://, rediss://, unix://)."""

    def __init__(
        self,
        url: str,
        timeout: float = 2.0,
        connect_timeout: float = 1.0,
        locate: Callable[[], Awaitable[tuple[str, int]]] | None = None,
    ) -> None:
        """``locate``: where to connect, asked at each (re)connection (Sentinel's current
        primary, :mod:`server.presence.sentinel`); else the URL's host and port."""
        if not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"not a Redis URL: {url!r}")
        opts = parse_url(url)  # redis-py's reading of the URL: host, port, db, user, TLS
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._unix: str | None = opts.get("path")
        self._host: str = opts.get("host") or "localhost"
        self._port: int = opts.get("port") or 6379
        self._ssl = _tls_context(opts) if url.startswith("rediss://") else None
        self._user: str | None = opts.get("username")
        self._password: str | None = opts.get("password")
        self._db = int(opts.get("db") or 0)
        self._locate = locate
        self._proto: Connection | None = None
        self._opening: asyncio.Future[Connection] | None = None

    async def execute(self, *args: Any, raw: bool = False) -> Any:
        """Run one command; its reply (an error reply raises :class:`ReplyError`);
        bulk strings as ``bytes`` with ``raw``."""
        data = encode(args)
        for attempt in (0, 1):
            proto = self._proto
            if proto is None or proto.lost is not None:
                proto = await self._connection()
            try:
                value = await proto.send(data, raw)
            except RespTimeout:
                raise
            except RespConnectionError:
                if attempt:
                    raise
                continue
            if type(value) is ReplyError:
                if str(value).startswith("READONLY"):  # a demoted primary: find the new one
                    log.warning("redis_primary_demoted", error=str(value))
                    proto.close()
                raise value
            return value
        raise AssertionError("unreachable")

    async def _connection(self) -> Connection:
        if self._opening is None or self._opening.done():
            self._opening = asyncio.ensure_future(self._open())
        return await asyncio.shield(self._opening)

    async def _open(self) -> Connection:
        self._proto = await self.connect()
        return self._proto

    async def connect(self) -> Connection:
        """A new connection of the caller's own (a subscription's), ready for commands."""
        try:
            return await self._connect()
        except (OSError, TimeoutError, RedisError) as exc:  # RedisError: no primary known
            raise RespConnectionError(f"cannot connect to redis: {exc}") from exc

    async def _connect(self) -> Connection:
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(self.connect_timeout):
            if self._unix is not None:
                _, proto = await loop.create_unix_connection(
                    lambda: Connection(self.timeout), self._unix
                )
            else:
                host, port = self._host, self._port
                if self._locate is not None:
                    host, port = await self._locate()
                _, proto = await loop.create_connection(
                    lambda: Connection(self.timeout), host, port, ssl=self._ssl
                )
            setup = []
            if self._password is not None:
                auth = ("AUTH", self._user, self._password) if self._user else None
                setup.append(proto.send(encode(auth or ("AUTH", self._password))))
            if self._db:
                setup.append(proto.send(encode(("SELECT", self._db))))
            for reply in await asyncio.gather(*setup):
                if type(reply) is ReplyError:
                    proto.transport.close()  # type: ignore[union-attr]
                    raise RespConnectionError(f"redis refused the connection: {reply}")
        return proto

    async def close(self) -> None:
        if self._opening is not None and not self._opening.done():
            self._opening.cancel()
            with contextlib.suppress(BaseException):
                await self._opening
        proto, self._proto = self._proto, None
        if proto is not None:
            proto.close()
