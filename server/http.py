"""Plain HTTP on the game port: ``/healthz`` and ``/metrics`` (websockets' process_request)."""

from __future__ import annotations

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.host import Host
from server.metrics import CONTENT_TYPE_LATEST


def answer(arena: Host, conn: ServerConnection, request: Request) -> Response | None:
    """The HTTP answer to ``request``; None lets a WebSocket handshake go on."""
    path = request.path.split("?", 1)[0]
    if path == "/healthz":
        return _http(200, b"ok\n", "text/plain; charset=utf-8")
    if path == "/metrics":
        arena.metrics.rooms.set(len(arena.rooms))
        return _http(200, arena.metrics.render(), CONTENT_TYPE_LATEST)
    if "upgrade" not in request.headers.get("Connection", "").lower():
        page = arena.web.response(path) if arena.web is not None else None
        if page is not None:
            return page
        return _http(404, b"not found: try /healthz, /metrics or a WebSocket\n", "text/plain")
    return None


def _http(status: int, body: bytes, content_type: str) -> Response:
    reason = {200: "OK", 404: "Not Found"}.get(status, "")
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
        ]
    )
    return Response(status, reason, headers, body)
