"""Exit 0 if a node answers ``GET /healthz`` with 200, else 1: the image's
``HEALTHCHECK`` and compose's (standard library only, nothing to install).

    python deploy/healthcheck.py                      # this container's node ($ARENA_PORT)
    python deploy/healthcheck.py http://host:port/healthz
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


def healthy(url: str, timeout: float = 3.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            return reply.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def main(argv: list[str]) -> int:
    url = argv[0] if argv else f"http://127.0.0.1:{os.environ.get('ARENA_PORT', '8765')}/healthz"
    if healthy(url):
        return 0
    print(f"unhealthy: {url}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
