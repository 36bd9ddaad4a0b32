"""Redis over TLS (``rediss://``): the test suite's ``redis-server`` has no TLS, so a
TLS terminator on loopback (Python's ``ssl``, a certificate made here by ``openssl``)
stands in front of it, as stunnel or a managed Redis's TLS endpoint would. Both of
the presence's clients (redis-py's pool and the lean connection) speak TLS through
it and check the certificate against ``?ssl_ca_certs=``; without it the untrusted
certificate is refused."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis_server import RedisServer

from server.presence import PresenceError
from server.presence.redis import RedisPresence


def certificate(tmp: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a test certificate")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@contextlib.asynccontextmanager
async def tls_terminator(cert: Path, key: Path, redis_port: int) -> AsyncIterator[int]:
    """A TLS server on loopback that pipes every connection to Redis's plain port."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", redis_port)
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=ctx)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


async def test_rediss_urls_speak_tls_and_check_the_certificate(tmp_path: Path) -> None:
    cert, key = certificate(tmp_path)
    store = RedisServer(password="tls-pass")
    store.start()
    try:
        async with tls_terminator(cert, key, store.port) as port:
            url = f"rediss://:tls-pass@127.0.0.1:{port}/0"
            presence = RedisPresence(f"{url}?ssl_ca_certs={cert}", prefix="tls:")
            try:
                await presence.start(wait=5)
                # redis-py's pool (a transaction), then the lean connection (HGET)
                await presence.sessions.create("s1", "token-of-s1-0123456789", {"a": 1}, 60)
                assert await presence.sessions.get("s1") == {"a": 1}
            finally:
                await presence.close()
            untrusted = RedisPresence(url, prefix="tls:")
            try:
                with pytest.raises(PresenceError):
                    await untrusted.start(wait=0.5)
            finally:
                await untrusted.close()
    finally:
        store.close()
