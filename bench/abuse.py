"""Benchmark: what one abusive client costs everyone else, within the default limits.

An ``arena serve`` process (default limits, from ``--repo``: default this checkout)
hosts a game between two players who move at a steady pace (``--pace`` moves/s);
their move round trips (``move`` sent -> its ``move_made``) are measured quiet
(before), under each attack (during) and after it. Attacks, one at a time:

- ``slow-reader``: connections that never read watch a long room from seq 0 again
  and again (catch-ups pile up for them);
- ``catch-up``: connections that do read re-watch a long room from seq 0 in a loop;
- ``solo``: connections start 4x4 solo puzzles and leave them (each deal is redrawn
  until solvable: a search), and ask for refused ones;
- ``flood``: connections send garbage and valid requests as fast as they can, and
  new connections are opened in a loop.

All clients run on loopback, as one attacking address: the server is started with
``--address-limits-exempt none`` so that the per-address limits apply to them.

Printed per attack: server RSS, the other room's move p50/p99 and moves/s before,
during and after, and how soon the attackers were cut off or throttled (first
close or ``rate_limited``/``unavailable``). Targets (issue 13): RSS < 2x idle + 100
MB, p99 < 100 ms, rate >= 0.8 of the idle rate, attacker stopped within 5 s.

    .venv/bin/python bench/abuse.py [--attackers 8] [--seconds 8] [--pace 10]
        [--attack slow-reader ...] [--repo PATH] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import random
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

ROOT = Path(__file__).resolve().parent.parent
ATTACKS = ("slow-reader", "catch-up", "solo", "flood")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def refusals(url: str) -> float:
    """Requests the server refused as too many (rate_limited, unavailable) plus slow
    readers it cut off, so far: from its /metrics (the bench runs on loopback)."""
    host, port = url.removeprefix("ws://").rstrip("/").rsplit(":", 1)
    try:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"GET /metrics HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        body = (await asyncio.wait_for(reader.read(), 10)).decode()
        writer.close()
    except (OSError, TimeoutError):
        return 0.0  # (refused as one connection too many: asked again later)
    total = 0.0
    for line in body.splitlines():
        if line.startswith(
            (
                'arena_errors_total{code="rate_limited"}',
                'arena_errors_total{code="unavailable"}',
                "arena_slow_consumer_disconnects_total",
            )
        ):
            total += float(line.split()[-1])
    return total


class Raw:
    """One msgpack connection; ``inbox`` gets everything it reads (when reading)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.reader: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, url: str, name: str | None, read: bool = True, **kw: Any) -> Raw:
        c = cls(await connect(url, compression=None, max_size=None, **kw))
        await c.ws.send(msgpack.packb({"type": "hello", "versions": [1], "software": "abuse"}))
        await c.ws.recv()
        if name is not None:
            await c.ws.send(msgpack.packb({"type": "login", "name": name, "id": 0}))
            await c.ws.recv()
        if read:
            c.reader = asyncio.create_task(c._read())
        return c

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for frame in self.ws:
                self.inbox.put_nowait(msgpack.unpackb(frame))

    async def send(self, msg: dict[str, Any]) -> int:
        rid = next(self.ids)
        await self.ws.send(msgpack.packb({**msg, "id": rid}))
        return rid

    async def until(self, pred: Any, timeout: float = 30) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                msg = await self.inbox.get()
                if pred(msg):
                    return msg

    async def ask(self, msg: dict[str, Any]) -> dict[str, Any]:
        rid = await self.send(msg)
        return await self.until(lambda m: m.get("re") == rid and not m.get("more"))


async def start_server(repo: Path) -> tuple[asyncio.subprocess.Process, str]:
    # every client of the bench is on loopback, as one attacking address would be: the
    # per-address limits apply to it (by default loopback is exempt: local bots, proxies)
    argv = [sys.executable, "-m", "clients.cli", "serve", "--port", "0", "--log-format", "json"]
    argv += ["--address-limits-exempt", "none"]
    # a fresh data dir: nothing restored from an earlier run (the default store is SQLite)
    argv += ["--data-dir", tempfile.mkdtemp(prefix="arena-abuse-")]
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=repo, stderr=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL
    )
    assert proc.stderr is not None
    while True:
        line = await asyncio.wait_for(proc.stderr.readline(), 30)
        if not line:
            raise RuntimeError(f"arena serve in {repo} exited")
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if entry.get("event") == "listening":
                break

    async def drain() -> None:
        while await proc.stderr.readline():  # type: ignore[union-attr]
            pass

    asyncio.get_running_loop().create_task(drain())
    return proc, entry["url"]


class Game:
    """Two players moving at ``pace`` moves/s in one room; move round trips recorded."""

    def __init__(self, ann: Raw, bob: Raw, room: str, pace: float) -> None:
        self.players = {"ann": ann, "bob": bob}
        self.room = room
        self.pace = pace
        self.samples: list[tuple[float, float]] = []  # (when, ms)
        self.stop = asyncio.Event()
        self.stalled = False

    async def run(self) -> None:
        try:
            await self._run()
        except TimeoutError:  # a move unanswered for 30 s: the game is lost to the attack
            self.stalled = True

    async def _run(self) -> None:
        ann = self.players["ann"]
        last = await ann.until(lambda m: m.get("type") == "game_started")
        seats: dict[int, Raw] = {}
        while not self.stop.is_set():
            seq = last["seq"]  # (each player's inbox may hold older events: skipped)
            if last["type"] == "game_started":
                seats = {s["seat"]: self.players[s["player"]["name"]] for s in last["seats"]}
            if not last.get("legal_moves"):
                await ann.until(lambda m, q=seq: m.get("type") == "game_over" and m["seq"] > q)
                for name, kind in (("ann", "offer_rematch"), ("bob", "accept_rematch")):
                    await self.players[name].send({"type": kind, "room": self.room})
                last = await ann.until(
                    lambda m, q=seq: m.get("type") == "game_started" and m["seq"] > q
                )
                continue
            mover = seats[last["to_move"]]
            t0 = time.perf_counter()
            await mover.send({"type": "move", "room": self.room, "move": last["legal_moves"][0]})
            last = await mover.until(
                lambda m, q=seq: (
                    m.get("type") == "error" or (m.get("type") == "move_made" and m["seq"] > q)
                )
            )
            if last["type"] == "error":
                raise RuntimeError(f"the measured game was refused: {last}")
            self.samples.append((time.monotonic(), (time.perf_counter() - t0) * 1000))
            await asyncio.sleep(max(0.0, 1 / self.pace - (time.perf_counter() - t0)))

    def window(self, t0: float, t1: float) -> dict[str, float]:
        ms = sorted(v for t, v in self.samples if t0 <= t < t1)
        if not ms:
            return {"p50": float("nan"), "p99": float("nan"), "rate": 0.0}
        return {
            "p50": statistics.median(ms),
            "p99": ms[min(len(ms) - 1, int(len(ms) * 0.99))],
            "rate": len(ms) / (t1 - t0),
        }


async def long_room(url: str) -> str:
    """A room with a log of ~400 chat events of ~500 bytes (~200 KB to catch up)."""
    owner = await Raw.open(url, "owner")
    room = (await owner.ask({"type": "create_room", "game": "collapsi", "seat": 0}))["room"]
    talkers = [owner] + [await Raw.open(url, f"talker{i}") for i in range(3)]
    for t in talkers[1:]:
        await t.ask({"type": "join_room", "room": room, "role": "player"})

    async def talk(t: Raw) -> None:
        for _ in range(100):
            msg = await t.ask({"type": "chat", "room": room, "text": "x" * 480})
            if msg.get("code") == "rate_limited":
                await asyncio.sleep(msg["retry_after"] / 1000)

    await asyncio.gather(*(talk(t) for t in talkers))
    return room


class Attack:
    """Attackers of one kind; ``stopped_at``: first close or throttling they met."""

    def __init__(self, url: str, kind: str, n: int, room: str) -> None:
        self.url, self.kind, self.n, self.room = url, kind, n, room
        self.started = 0.0
        self.stopped_at: float | None = None
        self.conns: list[Raw] = []
        self.stop = asyncio.Event()

    def hit(self) -> None:
        if self.stopped_at is None:
            self.stopped_at = time.monotonic() - self.started

    async def run(self) -> None:
        self.started = time.monotonic()
        await asyncio.gather(*(self._one(i) for i in range(self.n)), return_exceptions=True)

    async def _one(self, i: int) -> None:
        while not self.stop.is_set():
            try:
                await getattr(self, "_" + self.kind.replace("-", "_"))(i)
            except (ConnectionClosed, InvalidStatus, OSError):
                self.hit()
                await asyncio.sleep(0.2)

    async def _slow_reader(self, i: int) -> None:
        c = await Raw.open(self.url, None, read=False, max_queue=1)
        sock = c.ws.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        while not self.stop.is_set():
            await c.send({"type": "watch", "room": self.room, "since_seq": 0})
            await asyncio.sleep(0.05)
            if c.ws.transport.is_closing():
                raise ConnectionClosed(None, None)

    async def _throttled(self, c: Raw, msg: dict[str, Any]) -> None:
        reply = await c.ask(msg)
        if reply.get("code") in ("rate_limited", "unavailable"):
            self.hit()
            await asyncio.sleep(reply.get("retry_after", 100) / 1000)

    async def _catch_up(self, i: int) -> None:
        c = await Raw.open(self.url, None)
        while not self.stop.is_set():
            await self._throttled(c, {"type": "watch", "room": self.room, "since_seq": 0})

    async def _solo(self, i: int) -> None:
        c = await Raw.open(self.url, f"solo{i}-{random.randrange(10**6)}")
        msg = {"type": "create_room", "game": "collapsi", "variant": "solo", "options": {"size": 4}}
        while not self.stop.is_set():
            # refused after the trial deal (seat 5 of 1): nothing is kept
            await self._throttled(c, {**msg, "seat": 5})
            # a puzzle started (a new deal each time: the costly part), then left
            reply = await c.ask({**msg, "seat": 0})
            if "room" not in reply:
                self.hit()
                await asyncio.sleep(reply.get("retry_after", 100) / 1000)
                continue
            await self._throttled(c, {"type": "ready", "room": reply["room"], "ready": True})
            await self._throttled(c, {"type": "leave_room", "room": reply["room"]})

    async def _flood(self, i: int) -> None:
        c = await Raw.open(self.url, None, read=False, max_queue=1)
        junk = [b"\xc1" * 20, msgpack.packb({"type": "ping"}), msgpack.packb({"type": "nope"})]
        while not self.stop.is_set():
            for frame in junk * 50:
                if self.stop.is_set():
                    break
                await c.ws.send(frame)
            await asyncio.sleep(0)
            if c.ws.transport.is_closing():
                raise ConnectionClosed(None, None)


async def run(repo: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    proc, url = await start_server(repo)
    results = []
    try:
        room_long = await long_room(url)
        ann, bob = await Raw.open(url, "ann"), await Raw.open(url, "bob")
        room = (await ann.ask({"type": "create_room", "game": "collapsi", "seat": 0}))["room"]
        await bob.ask({"type": "join_room", "room": room, "role": "player"})
        await bob.ask({"type": "take_seat", "room": room, "seat": 1})
        for c in (ann, bob):
            await c.ask({"type": "ready", "room": room})
        game = Game(ann, bob, room, args.pace)
        play = asyncio.create_task(game.run())
        idle_rss = rss_mb(proc.pid)
        for kind in args.attack or ATTACKS:
            t0 = time.monotonic()
            await asyncio.sleep(args.seconds)
            rss_before = rss_mb(proc.pid)
            t1 = time.monotonic()
            refused = await refusals(url)
            # the attackers in their own process: their loop does not slow the measured one
            attackers = await asyncio.create_subprocess_exec(
                *[sys.executable, __file__, "--as-attacker", kind, "--url", url],
                *["--room", room_long, "--attackers", str(args.attackers)],
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            stopped_at: float | None = None
            peak = rss_before
            while time.monotonic() - t1 < args.seconds:
                await asyncio.sleep(0.25)
                peak = max(peak, rss_mb(proc.pid))
                if stopped_at is None and await refusals(url) > refused:  # seen by the server
                    stopped_at = time.monotonic() - t1
            t2 = time.monotonic()
            assert attackers.stdin is not None
            attackers.stdin.close()  # stop
            try:
                async with asyncio.timeout(15):
                    out, _ = await attackers.communicate()
                seen = json.loads(out.decode().strip().splitlines()[-1])["stopped_at"]
            except (TimeoutError, ValueError, IndexError):
                attackers.kill()
                seen = None
            if seen is not None:  # what the attackers saw (a close, rate_limited)
                stopped_at = seen if stopped_at is None else min(stopped_at, seen)
            t3 = time.monotonic()
            await asyncio.sleep(args.seconds)
            t4 = time.monotonic()
            results.append(
                {
                    "attack": kind,
                    "idle_rss_mb": idle_rss,
                    "rss_before_mb": rss_before,
                    "rss_peak_mb": peak,
                    "rss_after_mb": rss_mb(proc.pid),
                    "before": game.window(t0, t1),
                    "during": game.window(t1, t2),
                    "after": game.window(t3, t4),
                    "stopped_after_s": stopped_at,
                    "game_stalled": game.stalled,
                }
            )
        game.stop.set()
        play.cancel()
    finally:
        proc.terminate()
        await proc.wait()
    return results


def verdict(r: dict[str, Any]) -> str:
    ok_rss = r["rss_peak_mb"] < 2 * r["idle_rss_mb"] + 100
    ok_p99 = r["during"]["p99"] < 100
    ok_rate = r["during"]["rate"] >= 0.8 * r["before"]["rate"]
    ok_stop = r["stopped_after_s"] is not None and r["stopped_after_s"] <= 5
    return " ".join(
        f"{name}:{'ok' if ok else 'MISS'}"
        for name, ok in (("rss", ok_rss), ("p99", ok_p99), ("rate", ok_rate), ("cut", ok_stop))
    )


async def attack_alone(args: argparse.Namespace) -> None:
    """The attackers' process: attack until stdin closes, then print when they were
    first cut off or throttled (JSON)."""
    attack = Attack(args.url, args.as_attacker, args.attackers, args.room)
    task = asyncio.create_task(attack.run())
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    attack.stop.set()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(10):
            await task
    print(json.dumps({"stopped_at": attack.stopped_at}), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--as-attacker", choices=ATTACKS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--room", help=argparse.SUPPRESS)
    parser.add_argument("--attackers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=8.0, help="each phase's length")
    parser.add_argument("--pace", type=float, default=10.0, help="measured moves per second")
    parser.add_argument("--attack", action="append", choices=ATTACKS)
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.as_attacker:
        asyncio.run(attack_alone(args))
        return 0
    results = asyncio.run(run(args.repo, args))
    print(f"{args.attackers} attackers, {args.seconds:g} s phases, game paced at {args.pace:g}/s")
    print(
        "| attack | RSS MB idle/before/peak/after | move p50/p99 ms before | during "
        "| after | moves/s before/during/after | cut off after s | targets |"
    )
    print("| --- | --- | --- | --- | --- | --- | ---: | --- |")
    for r in results:
        b, d, a = r["before"], r["during"], r["after"]
        stop = r["stopped_after_s"]
        print(
            f"| {r['attack']} | {r['idle_rss_mb']:.0f}/{r['rss_before_mb']:.0f}/"
            f"{r['rss_peak_mb']:.0f}/{r['rss_after_mb']:.0f} "
            f"| {b['p50']:.1f}/{b['p99']:.1f} | {d['p50']:.1f}/{d['p99']:.1f} "
            f"| {a['p50']:.1f}/{a['p99']:.1f} | {b['rate']:.1f}/{d['rate']:.1f}/{a['rate']:.1f} "
            f"| {'-' if stop is None else f'{stop:.2f}'} | {verdict(r)} |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
