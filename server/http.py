"""Plain HTTP on the game port, and the handshake checks before a WebSocket opens.

``/healthz`` is public. ``/metrics`` is an operator surface: with ``--metrics-port``
it is served only on that separate listener (``--metrics-host``, loopback by
default); without it, the game port answers it to loopback peers only (403 to
others). A WebSocket handshake from a browser page passes the ``Origin`` check
(server.origin) or gets 403. SECURITY.md says what each protects.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.host import Host
from server.login_throttle import peer_address
from server.metrics import CONTENT_TYPE_LATEST
from server.origin import origin_allowed

_REASONS = {200: "OK", 403: "Forbidden", 404: "Not Found", 429: "Too Many Requests"}


def http_response(status: int, body: bytes, content_type: str = "text/plain") -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
        ]
    )
    return Response(status, _REASONS.get(status, ""), headers, body)


def is_loopback(conn: ServerConnection) -> bool:
    peer = getattr(conn, "remote_address", None)
    try:
        return bool(peer) and ipaddress.ip_address(peer[0]).is_loopback
    except ValueError:
        return False


def metrics_response(arena: Host) -> Response:
    arena.metrics.rooms.set(len(arena.rooms))
    return http_response(200, arena.metrics.render(), CONTENT_TYPE_LATEST)


def answer(arena: Host, conn: ServerConnection, request: Request) -> Response | None:
    """The game port's answer to a request; None lets a WebSocket handshake go on."""
    path = request.path.split("?", 1)[0]
    if path == "/healthz":
        return http_response(200, b"ok\n", "text/plain; charset=utf-8")
    if path == "/metrics":
        if arena.config.metrics_port is not None:
            return http_response(404, b"not here: metrics have their own port\n")
        if not is_loopback(conn):
            return http_response(403, b"metrics are for loopback clients\n")
        return metrics_response(arena)
    if "upgrade" not in request.headers.get("Connection", "").lower():
        page = arena.web.response(path) if arena.web is not None else None
        if page is not None:  # the web client's files (server.web)
            return page
        return http_response(404, b"not found: try /healthz, /metrics or a WebSocket\n")
    refused = arena.addresses.handshake(peer_address(conn))
    if refused is not None:
        return http_response(429, refused.encode() + b"\n")
    origin = request.headers.get("Origin")
    if not origin_allowed(origin, request.headers.get("Host"), arena.config.allowed_origins):
        arena.log.info("origin_refused", origin=origin)
        return http_response(403, b"origin not allowed\n")
    return None


async def serve_metrics(arena: Host, host: str, port: int) -> Server:
    """The separate metrics listener: ``/metrics`` and ``/healthz``, never a WebSocket."""

    def answer(conn: ServerConnection, request: Request) -> Response:
        path = request.path.split("?", 1)[0]
        if path == "/metrics":
            return metrics_response(arena)
        if path == "/healthz":
            return http_response(200, b"ok\n")
        return http_response(404, b"not found: try /metrics\n")

    async def never(ws: Any) -> None:  # (every request is answered above)
        return None

    return await serve(never, host, port, process_request=answer, compression=None)
