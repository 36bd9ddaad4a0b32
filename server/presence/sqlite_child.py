"""The SQLite store's writer process: runs each group of statements it is sent in one
transaction and one commit, and answers when the group is on disk.

Why a process and not a thread: a writer thread needs the GIL back after every
statement, and a busy event loop holds it for up to the switch interval (5 ms) each
time, so a commit of 25 statements took about 9 ms of waiting for 1 ms of work, and
every move waited for its commit (output commit). A process has its own interpreter.

Run by :mod:`server.presence.sqlite_writer` as ``python -I sqlite_child.py DB PRAGMA...``
(standard library only, so it starts in a few tens of milliseconds). Frames on stdin:
a 4-byte big-endian length, then a pickled list of ``(sql, params)``; a length of 0
ends the process. Each group is answered on stdout: ``b"\\x00"`` (committed), or
``b"\\x01"``, a 4-byte length and the error's text (rolled back: the server stops
acknowledging anything). End of stdin (the server died) ends it too. A failure of its
own (a frame it cannot read) is one JSON line on stderr, as the server's logs are, and
exit status 1.
"""

from __future__ import annotations

import contextlib
import json
import pickle
import signal
import sqlite3
import sys
from typing import Any, BinaryIO


def commit(conn: sqlite3.Connection, statements: list[tuple[str, tuple[Any, ...]]]) -> str | None:
    """Run ``statements`` in one transaction; None, or why it failed (rolled back)."""
    try:
        conn.execute("BEGIN")
        for sql, params in statements:
            conn.execute(sql, params)
        conn.execute("COMMIT")
    except (sqlite3.Error, OSError) as exc:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # (the error says what went wrong)
                conn.execute("ROLLBACK")
        return f"{type(exc).__name__}: {exc}"
    return None


def serve(conn: sqlite3.Connection, rd: BinaryIO, wr: BinaryIO) -> None:
    while True:
        head = rd.read(4)
        if len(head) < 4:
            return  # the server is gone
        size = int.from_bytes(head, "big")
        if size == 0:
            return
        error = commit(conn, pickle.loads(rd.read(size)))
        if error is None:
            wr.write(b"\x00")
        else:
            text = error.encode()
            wr.write(b"\x01" + len(text).to_bytes(4, "big") + text)
        wr.flush()


def main(argv: list[str]) -> int:
    # a Ctrl-C or a SIGTERM to the server's process group is the server's to handle: it
    # sends what is left and then ends this process (or it dies, and stdin ends)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    path, *pragmas = argv
    conn = sqlite3.connect(path, isolation_level=None, timeout=5)
    for pragma in pragmas:
        conn.execute(f"PRAGMA {pragma}")
    try:
        serve(conn, sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:
        pass  # the server is gone
    except Exception as exc:  # (the process's edge: say why in the server's log format)
        error = f"{type(exc).__name__}: {exc}"
        print(json.dumps({"event": "sqlite_writer_failed", "level": "error", "error": error}),
              file=sys.stderr, flush=True)  # fmt: skip
        return 1
    finally:
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
