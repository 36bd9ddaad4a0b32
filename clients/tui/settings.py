"""The name and token the full-screen client remembers per server, in the user's config
directory (``$XDG_CONFIG_HOME/collapsi-arena/tui.json``), readable by the user only."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "collapsi-arena" / "tui.json"


def load(path: Path, url: str) -> dict[str, Any]:
    """``{"name": ..., "token": ...}`` remembered for ``url`` (empty if none)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entry = data.get("servers", {}).get(url) if isinstance(data, dict) else None
    return entry if isinstance(entry, dict) else {}


def save(path: Path, url: str, name: str, token: str | None) -> None:
    """Remember ``name`` (and ``token``) for ``url``; the file is created with mode 0600
    (it holds a secret), and kept so when rewritten."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    servers = data.setdefault("servers", {})
    servers[url] = {"name": name, **({"token": token} if token else {})}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    os.chmod(path, 0o600)
