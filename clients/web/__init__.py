"""The web page (plain JavaScript, no build step), served by ``arena serve`` at ``/``."""

from pathlib import Path

#: the page's static files
STATIC = Path(__file__).resolve().parent / "static"

#: flags for driving the page in a headless Chromium on a machine whose only network is
#: loopback (the browser tests and bench/web.py): no background connections, no sandbox
#: (CI runs as root), no GPU
HEADLESS_CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
