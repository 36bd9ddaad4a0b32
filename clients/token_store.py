"""A player's tokens kept on disk, one per name, made strong when first needed.

The token is the only proof of a claimed name (protocol/PROTOCOL.md, "Player
tokens"): a client makes one with :func:`protocol.tokens.new_token` the first time
it claims a name and presents the same one ever after. :func:`token_for` does both:
the file is JSON ``{"tokens": {name: token}}``, written atomically, readable by its
owner only (mode 0600).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from protocol.tokens import new_token


def token_for(path: str | os.PathLike[str], name: str) -> str:
    """The token stored for ``name`` in ``path`` (``~`` expanded); a new strong one,
    stored, if none."""
    file = Path(path).expanduser()
    try:
        tokens = dict(json.loads(file.read_text()).get("tokens", {}))
    except FileNotFoundError:
        tokens = {}
    if name in tokens:
        return str(tokens[name])
    tokens[name] = token = new_token()
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(file.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"tokens": tokens}, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, file)
    return token
