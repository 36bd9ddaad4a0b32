"""The web page's static files, served over plain HTTP on the game port.

The page is plain modern JavaScript with no build step (``clients/web/static``); the
composition root (``server/cli.py``) tells the server where the files are, so the
server package does not depend on the clients package. Paths of the page itself
(``/``, ``/game/ROOM``, ``/record/ID``, ``/tournament/ID``) all get ``index.html``: the
page routes on the client. Only the files of that one folder are served.
"""

from __future__ import annotations

import re
from pathlib import Path

from websockets.datastructures import Headers
from websockets.http11 import Response

PAGE = re.compile(r"^/(?:(?:game|record|tournament)/[A-Za-z0-9_.:-]{1,64})?$")
ASSET = re.compile(r"^/static/([a-z0-9_-]{1,40}\.(?:js|css|html|svg|png))$")
TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
#: the page loads nothing from elsewhere and talks only to its own host
SECURITY = (
    (
        "Content-Security-Policy",
        "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-cache"),
)


class WebPage:
    """Answers GET requests for the page and its files from ``folder`` (read at start)."""

    def __init__(self, folder: str | Path) -> None:
        self.files: dict[str, tuple[bytes, str]] = {}
        for path in Path(folder).iterdir():
            if path.is_file() and path.suffix in TYPES:
                self.files[path.name] = (path.read_bytes(), TYPES[path.suffix])
        if "index.html" not in self.files:
            raise ValueError(f"no index.html in the web page's folder {folder}")

    def response(self, path: str) -> Response | None:
        """The file for ``path``, or None when ``path`` is not the page's."""
        if PAGE.match(path):
            return _response(*self.files["index.html"])
        asset = ASSET.match(path)
        if asset and asset.group(1) in self.files:
            return _response(*self.files[asset.group(1)])
        return None


def _response(body: bytes, content_type: str) -> Response:
    headers = Headers(
        [("Content-Type", content_type), ("Content-Length", str(len(body))), *SECURITY]
    )
    return Response(200, "OK", headers, body)
