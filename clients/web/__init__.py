"""The web page (plain JavaScript, no build step), served by ``arena serve`` at ``/``."""

from pathlib import Path

#: the page's static files
STATIC = Path(__file__).resolve().parent / "static"
