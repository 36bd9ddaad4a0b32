"""The floor under bench/bot.py's figure: what a relay that does nothing but the hops adds.

A "server" (this process) sends a 480-byte message (the size of a ``move_made``) at
random gaps (0.5-1.5x ``--gap-ms``) over loopback TCP to a relay process, which, for
each, writes a ``go`` to the engine over its pipe (``--engine``, as bench/bot.py's:
bench/instant_engine.c or .py), reads the answer, and writes the message back. The
relay is Python with plain system calls (blocking reads, no asyncio, no websocket
framing, no decoding): the hops of ``arena bot``'s move path and nothing else. Its time
per message is measured as bench/bot.py measures the runner's: from the kernel's
receive stamp of the message (SO_TIMESTAMPNS) to the relay's write of the answer, less
the engine's own stamped time. What ``arena bot`` adds above this floor is its own work:
the websocket frame, the decoding, the game's bookkeeping, the engine protocol's lines,
the move's message.

    .venv/bin/python bench/bot_floor.py --messages 2000 --json /tmp/bot_floor.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import socket
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

from bot import measured_engine  # (bench/bot.py, beside this script)

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SIZE = 480
#: a position, its legal moves and go: the lines arena bot writes for a move
GO = b"position setup 41J124313J322123 moves 1 5\nlegal 0 7 8\ngo time 180000 180000 inc 0\n"


def relay(port: int, count: int, engine: str) -> None:
    """The relay's side: print one JSON list of [ms, engine's own ms] per message."""
    pipe = subprocess.PIPE
    eng = subprocess.Popen(shlex.split(engine), stdin=pipe, stdout=pipe, bufsize=0)
    assert eng.stdin is not None and eng.stdout is not None
    to_engine, from_engine = eng.stdin.fileno(), eng.stdout.fileno()
    os.write(to_engine, b"arena 1\nnewgame game collapsi rules standard variant base "
             b"players 2 seat 0\nisready\n")  # fmt: skip
    pending = b""
    while b"readyok" not in pending:
        pending += os.read(from_engine, 4096)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    offset = min(  # CLOCK_REALTIME (the stamps) less CLOCK_MONOTONIC, the tightest of 50
        ((b - a, r - (a + b) / 2) for a, r, b in
         ((time.monotonic(), time.time(), time.monotonic()) for _ in range(50)))
    )[1]  # fmt: skip
    out = []
    for _ in range(count):
        got, kernel = 0, 0.0
        while got < SIZE:
            data, ancillary, _, _ = sock.recvmsg(SIZE - got, socket.CMSG_SPACE(16))
            if not data:
                return
            got += len(data)
            for level, kind, raw in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, ns = struct.unpack("qq", raw[:16])
                    kernel = sec + ns / 1e9 - offset
        os.write(to_engine, GO)
        answer = b""
        while b"bestmove" not in answer:
            answer += os.read(from_engine, 4096)
        now = time.monotonic()
        stamp = answer.split(b"info string stamp ")[1].split()
        own = (int(stamp[1]) - int(stamp[0])) / 1e9
        sock.sendall(data if len(data) == SIZE else bytes(SIZE))
        out.append([(now - kernel - own) * 1000, own * 1000])
    os.write(to_engine, b"quit\n")
    print(json.dumps(out))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--gap-ms", type=float, default=20.0)
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument(
        "--engine",
        choices=("c", "python"),
        default="c",
        help="the engine: bench/instant_engine.c (default; built with cc) or .py",
    )
    parser.add_argument("--relay", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--engine-cmd", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.relay is not None:
        relay(args.relay, args.messages, args.engine_cmd)
        return 0
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    cmd = [sys.executable, __file__, "--relay", str(port), "--messages", str(args.messages)]
    cmd += ["--engine-cmd", measured_engine(args.engine)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    conn, _ = listener.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    message = bytes(SIZE)
    for _ in range(args.messages):
        time.sleep(random.uniform(0.5, 1.5) * args.gap_ms / 1000)
        conn.sendall(message)
        got = 0
        while got < SIZE:
            chunk = conn.recv(SIZE)
            if not chunk:
                raise SystemExit("the relay stopped")
            got += len(chunk)
    out, _ = proc.communicate(timeout=60)
    figures = json.loads(out)
    ms = [f[0] for f in figures]
    r = {
        "messages": len(ms),
        "gap_ms": args.gap_ms,
        "p50_ms": statistics.median(ms),
        "p90_ms": pct(ms, 0.9),
        "p99_ms": pct(ms, 0.99),
        "max_ms": max(ms),
        "engine_p50_ms": statistics.median(f[1] for f in figures),
        "engine": args.engine,
    }
    print("| messages | relay p50 ms | p90 ms | p99 ms | max ms | engine's own p50 ms |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| {r['messages']} | {r['p50_ms']:.3f} | {r['p90_ms']:.3f} | {r['p99_ms']:.3f} | "
        f"{r['max_ms']:.3f} | {r['engine_p50_ms']:.3f} |"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
