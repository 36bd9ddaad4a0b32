"""The arena against its peers: boardgame.io and Colyseus hosting the same game, in one run.

Each peer is a Node.js server in this directory hosting Collapsi 4x4 (standard rules,
``collapsi.js``) with every move validated on the server: ``bgio_server.js``
(boardgame.io, moves that run on the server only) and ``colyseus_server.js`` (Colyseus,
a room per pair, each change patched to both clients at once). Their npm packages
(pinned in ``package.json`` and ``package-lock.json``) are installed into
``bench/peers/node_modules`` by ``npm ci`` on first use. Everything listens on
127.0.0.1 only.

Two paths, as in ``bench/server.py``:

- **new room**: every game in a new room (arena: create_room, join_room, take_seat,
  ready x2, leave_room x2; boardgame.io: the lobby API's create and join x2, two socket.io
  clients, no rematch in place; Colyseus: create, joinById, ready x2, leave x2);
- **in room**: the pair plays all its games in one room (arena: offer_rematch and
  accept_rematch; Colyseus: ready x2 deals the next game in place; boardgame.io has no
  in-place rematch, so it has no in-room run).

The load is the same everywhere: ``--games`` pairs in ``--workers`` client processes
(the arena's are ``bench/server.py``'s Python clients; the peers' are ``load.js``, their
own client libraries), the player to move sends the first legal move as soon as it is
its turn. Each server's CPU time (``/proc``) per move completed in the measured window is
the figure; runs alternate round by round, and the arena/peer ratios are taken within
each round (the median over rounds is printed, and the ratio of the pooled figures).
Then **idle**: ``--connections`` clients seated in games that nobody plays, per
server: RSS per connection and CPU per connection per second.

    .venv/bin/python bench/peers/run.py [--games 50] [--duration 30] [--rounds 3]
        [--warmup 3] [--workers 2] [--connections 2000] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from bench import server as bs  # noqa: E402 (the repository root is on the path now)
from bench.pairs import open_game  # noqa: E402

#: the runs of a round: (label, server, path)
RUNS = [
    ("arena", "arena", "newroom"),
    ("boardgame.io", "bgio", "newroom"),
    ("Colyseus", "colyseus", "newroom"),
    ("arena", "arena", "inroom"),
    ("Colyseus", "colyseus", "inroom"),
]
SERVER_JS = {"bgio": "bgio_server.js", "colyseus": "colyseus_server.js"}


# -- npm ---------------------------------------------------------------------------------


def tool_versions() -> dict[str, str]:
    """node and npm versions; exits with a clear message when either is missing."""
    out = {}
    for tool in ("node", "npm"):
        path = shutil.which(tool)
        if path is None:
            raise SystemExit(f"bench/peers needs {tool} on PATH (Node.js 20 or later)")
        out[tool] = subprocess.run(
            [path, "--version"], capture_output=True, text=True, check=True
        ).stdout.strip()
    return out


def ensure_packages() -> None:
    """``npm ci`` into bench/peers/node_modules unless the pinned packages are there."""
    marker = HERE / "node_modules" / ".package-lock.json"  # what npm installed
    if marker.exists():
        wanted = json.loads((HERE / "package-lock.json").read_text())["packages"]
        have = json.loads(marker.read_text())["packages"]
        # (optional packages of other platforms are in the lock, not installed)
        if all(have.get(k) == v for k, v in wanted.items() if k and not v.get("optional")):
            return
    print("bench/peers: installing the peers' npm packages (npm ci, once)...", flush=True)
    subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--loglevel", "error"], cwd=HERE, check=True
    )


def package_versions() -> dict[str, str]:
    lock = json.loads((HERE / "package-lock.json").read_text())["packages"]
    names = ["boardgame.io", "@colyseus/core", "@colyseus/ws-transport", "@colyseus/sdk"]
    return {n: lock[f"node_modules/{n}"]["version"] for n in names}


# -- node servers and clients ----------------------------------------------------------------


class NodeServer:
    """``node SERVER_JS PORT`` on a free loopback port (production mode, logs discarded)."""

    def __init__(self, kind: str) -> None:
        self.port = bs.free_port()
        env = {**os.environ, "NODE_ENV": "production"}
        self.proc = subprocess.Popen(
            ["node", SERVER_JS[kind], str(self.port)],
            cwd=HERE,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with bs.socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"{kind} server did not start") from None
                time.sleep(0.05)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def load_js(config: dict[str, Any]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["node", "load.js", json.dumps(config)],
        cwd=HERE,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def peer_phase(args: argparse.Namespace, kind: str, path: str) -> dict[str, Any]:
    """One measured window of ``load.js`` clients against a fresh peer server."""
    srv = NodeServer(kind)
    try:
        start = time.monotonic() + 1.0 + args.warmup  # node's start-up, then the warm-up
        end = start + args.duration / args.rounds
        window = {"start": start, "end": end, "warmup": args.warmup}
        procs = [
            load_js({"peer": kind, "path": path, "port": srv.port, "pairs": n, **window})
            for n in bs.split(args.games, args.workers)
            if n
        ]
        time.sleep(max(0.0, start - time.monotonic()))
        cpu0 = bs.cpu_seconds(srv.pid)
        clients0 = sum(bs.cpu_seconds(p.pid) for p in procs)
        time.sleep(max(0.0, end - time.monotonic()))
        cpu1 = bs.cpu_seconds(srv.pid)
        clients1 = sum(bs.cpu_seconds(p.pid) for p in procs)
        rss = bs.rss_bytes(srv.pid)
        results = []
        for p in procs:
            out, _ = p.communicate(timeout=60)
            results.append(json.loads(out.strip().splitlines()[-1]))
        errors: Counter[str] = Counter()
        for r in results:
            errors.update(r["errors"])
        return {
            "span": end - start,
            "count": sum(r["count"] for r in results),
            "latencies": [x / 1000 for r in results for x in r["latencies"]],
            "games": sum(r["games"] for r in results),
            "server_cpu_s": cpu1 - cpu0,
            "server_gc_s": 0.0,
            "gc_collections": [],
            "client_cpu_s": clients1 - clients0,
            "server_rss": rss,
            "errors": errors,
        }
    finally:
        srv.stop()


def arena_args(args: argparse.Namespace) -> argparse.Namespace:
    """The namespace ``bench/server.py``'s phases read."""
    return argparse.Namespace(
        games=args.games, duration=args.duration, rounds=args.rounds, warmup=args.warmup,
        workers=args.workers, rules="standard", move_reply="event", keep_rate_limit=False,
        server_log=None, py_spy=None,
    )  # fmt: skip


# -- idle -------------------------------------------------------------------------------------


def arena_idle_worker(pipe: Any, url: str, pairs: int, index: int) -> None:
    """``pairs`` pairs logged in and seated in a started game nobody plays, held until told.

    The clients send no pings of their own (as the peers' clients, and browsers, do not):
    the server's keepalive is what an idle connection costs."""
    bs.raise_nofile()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        gate = asyncio.Semaphore(bs.OPENING)
        stats = bs.Stats()

        async def pair(i: int) -> list[Any]:
            conns = []
            for side in "ab":
                async with gate:  # no client pings: the server's own keepalive is measured
                    ws = await bs.connect(
                        url, open_timeout=60, compression=None, ping_interval=None
                    )
                async with gate:
                    await bs.login(ws, f"idle{index}-{i}{side}")
                conns.append(bs.Player(ws, stats))
            await open_game(conns[0], conns[1])
            return conns

        results = await asyncio.gather(*(pair(i) for i in range(pairs)), return_exceptions=True)
        held = [p for r in results if not isinstance(r, BaseException) for p in r]
        errors = Counter(
            f"{type(r).__name__}: {r}"[:120] for r in results if isinstance(r, BaseException)
        )
        pipe.send({"open": len(held), "errors": dict(errors)})
        await loop.run_in_executor(None, pipe.recv)
        for p in held:
            p.ws.transport.abort()

    asyncio.run(main())


def measure_idle(pid: int, opened: int, base: int, seconds: float) -> dict[str, Any]:
    time.sleep(1.0)  # settle: handshake buffers freed, first syncs sent
    cpu0, t0 = bs.cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    cpu = bs.cpu_seconds(pid) - cpu0
    span = time.monotonic() - t0
    rss = bs.rss_bytes(pid)
    return {
        "open": opened,
        "rss_base": base,
        "rss": rss,
        "per_conn": (rss - base) / opened if opened else float("nan"),
        "cpu_us_per_conn_s": cpu / span / opened * 1e6 if opened else float("nan"),
    }


def idle_run(args: argparse.Namespace, kind: str) -> dict[str, Any]:
    pairs = args.connections // 2
    if kind == "arena":
        srv = bs.start_server(bs.arena_server, ["--store", "memory"], None, None)
        try:
            time.sleep(0.3)
            base = bs.rss_bytes(srv.pid)
            procs, pipes = [], []
            for i, n in enumerate(bs.split(pairs, args.workers)):
                parent, child = bs.CTX.Pipe()
                url = f"ws://127.0.0.1:{srv.port}"
                proc = bs.CTX.Process(
                    target=arena_idle_worker, args=(child, url, n, i), daemon=True
                )
                proc.start()
                procs.append(proc)
                pipes.append(parent)
            opened, errors = 0, Counter[str]()
            for p in pipes:
                if not p.poll(300):
                    raise RuntimeError("idle: an arena worker did not finish opening")
                r = p.recv()
                opened += r["open"]
                errors.update(r["errors"])
            out = measure_idle(srv.pid, opened, base, args.idle_seconds)
            for p in pipes:
                p.send("close")
            for proc in procs:
                proc.join(30)
            return {**out, "errors": dict(errors)}
        finally:
            srv.stop()
    node = NodeServer(kind)
    try:
        time.sleep(0.3)
        base = bs.rss_bytes(node.pid)
        procs = [
            load_js({"peer": kind, "path": "idle", "port": node.port, "pairs": n})
            for n in bs.split(pairs, args.workers)
            if n
        ]
        opened, errors = 0, Counter[str]()
        for p in procs:
            assert p.stdout is not None
            r = json.loads(p.stdout.readline())
            opened += r["open"]
            errors.update(r["errors"])
        out = measure_idle(node.pid, opened, base, args.idle_seconds)
        for p in procs:
            with contextlib.suppress(OSError):
                p.communicate(timeout=30)
        return {**out, "errors": dict(errors)}
    finally:
        node.stop()


# -- report ---------------------------------------------------------------------------------


def report(args: argparse.Namespace, res: dict[str, Any]) -> str:
    lines = [
        f"Peers bench: Collapsi 4x4 (standard), {args.games} concurrent games in "
        f"{args.workers} client processes per server; {args.duration:g} s measured per run in "
        f"{args.rounds} interleaved rounds, each after {args.warmup:g} s warm-up",
        f"node {res['tools']['node']}, npm {res['tools']['npm']}; "
        + ", ".join(f"{k} {v}" for k, v in res["packages"].items()),
        "",
        f"{'path':<10}{'server':<14}{'moves/s':>9}{'median ms':>11}{'p99 ms':>9}"
        f"{'CPU us/move':>13}{'arena/peer CPU':>16}{'per round':>18}",
    ]
    for path in ("newroom", "inroom"):
        arena = res["runs"][f"arena {path}"]
        for label, kind, p in RUNS:
            if p != path:
                continue
            r = res["runs"][f"{kind} {path}"]
            ratio, rounds = "", ""
            if kind != "arena":
                ratio = f"{arena['server_cpu_us'] / r['server_cpu_us']:.2f}"
                per = res["round_ratios"][f"{kind} {path}"]
                rounds = " ".join(f"{x:.2f}" for x in per)
                ratio = f"{statistics.median(per):.2f} ({ratio})"
            lines.append(
                f"{'new room' if path == 'newroom' else 'in room':<10}{label:<14}"
                f"{r['rate']:>9.0f}{r['median_ms']:>11.2f}{r['p99_ms']:>9.2f}"
                f"{r['server_cpu_us']:>13.0f}{ratio:>16}{rounds:>18}"
            )
    lines += [
        "",
        "arena/peer CPU: the median of the rounds' ratios (the pooled figures' ratio);",
        "targets: in room <= 2x Colyseus; new room <= 0.35 of boardgame.io, <= 0.4 of Colyseus",
    ]
    for key, r in res["runs"].items():
        if r.get("errors"):
            lines.append(f"{key} errors: {r['errors']}")
    if res.get("idle"):
        lines += [
            "",
            f"{'idle':<14}{'connections':>12}{'KiB/conn':>10}{'CPU us/s/conn':>15}"
            f"{'conns per GiB':>15}",
        ]
        for label, kind in (("arena", "arena"), ("boardgame.io", "bgio"), ("Colyseus", "colyseus")):
            i = res["idle"][kind]
            per_gib = (1 << 30) / i["per_conn"] if i["per_conn"] > 0 else float("inf")
            lines.append(
                f"{label:<14}{i['open']:>12}{i['per_conn'] / 1024:>10.1f}"
                f"{i['cpu_us_per_conn_s']:>15.2f}{per_gib:>15.0f}"
            )
            if i["errors"]:
                lines.append(f"  {label} idle errors: {i['errors']}")
        lines.append("(idle: clients seated in a started game nobody plays)")
    lines.append(
        f"machine load average (1 min) before and after: {res['load'][0]} -> {res['load'][1]}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=50, help="concurrent games (50)")
    parser.add_argument(
        "--duration", type=float, default=30.0, help="measured seconds per run, over all rounds"
    )
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (3)")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring (3)")
    parser.add_argument("--workers", type=int, default=2, help="client processes (2)")
    parser.add_argument(
        "--connections", type=int, default=2000, help="idle connections per server (0 skips)"
    )
    parser.add_argument(
        "--idle-seconds", type=float, default=5.0, help="idle CPU measured over (5)"
    )
    parser.add_argument(
        "--only-arena",
        action="store_true",
        help="the arena's runs alone (no Node.js needed): checks the harness",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if args.games < 1 or args.workers < 1 or args.rounds < 1:
        parser.error("--games, --workers and --rounds must be at least 1")
    args.workers = min(args.workers, args.games)
    bs.raise_nofile()
    runs = [r for r in RUNS if r[1] == "arena" or not args.only_arena]
    res: dict[str, Any] = {"command": " ".join(["bench/peers/run.py", *sys.argv[1:]])}
    if args.only_arena:
        res["tools"], res["packages"] = {"node": "-", "npm": "-"}, {}
    else:
        res["tools"] = tool_versions()
        ensure_packages()
        res["packages"] = package_versions()
    res["load"] = [Path("/proc/loadavg").read_text().split()[0]]
    rounds: dict[str, list[dict[str, Any]]] = {f"{k} {p}": [] for _, k, p in runs}
    a_args = arena_args(args)
    for _ in range(args.rounds):
        for _, kind, path in runs:
            if kind == "arena":
                r = bs.arena_phase(a_args, None, None, rematch=path == "inroom")
            else:
                r = peer_phase(args, kind, path)
            rounds[f"{kind} {path}"].append(r)
    res["runs"] = {key: bs.summarize(rs) for key, rs in rounds.items()}
    res["round_ratios"] = {}
    for key, rs in rounds.items():
        kind, path = key.split()
        if kind == "arena":
            continue
        res["round_ratios"][key] = [
            (a["server_cpu_s"] / a["count"]) / (p["server_cpu_s"] / p["count"])
            if a["count"] and p["count"] and p["server_cpu_s"]
            else float("nan")
            for a, p in zip(rounds[f"arena {path}"], rs, strict=True)
        ]
    if args.connections > 0:
        res["idle"] = {k: idle_run(args, k) for k in ("arena", "bgio", "colyseus")
                       if k == "arena" or not args.only_arena}  # fmt: skip
    res["load"].append(Path("/proc/loadavg").read_text().split()[0])
    if args.only_arena:
        print(report_arena_only(res))
    else:
        print(report(args, res))
    if args.json:
        for r in res["runs"].values():
            r.pop("samples", None)
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    return 0


def report_arena_only(res: dict[str, Any]) -> str:
    lines = [f"{'path':<10}{'moves/s':>9}{'CPU us/move':>13}"]
    for path in ("newroom", "inroom"):
        r = res["runs"][f"arena {path}"]
        lines.append(f"{path:<10}{r['rate']:>9.0f}{r['server_cpu_us']:>13.0f}")
    idle = res.get("idle", {}).get("arena")
    if idle:
        lines.append(
            f"idle arena: {idle['open']} connections, {idle['per_conn'] / 1024:.1f} KiB/conn, "
            f"{idle['cpu_us_per_conn_s']:.2f} CPU us/s/conn"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
