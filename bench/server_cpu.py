"""The game server's own Python CPU per move, without sockets: for A/B on a busy machine.

``bench/server.py`` measures the real thing (loopback sockets, client processes),
but on a shared 2-core machine its CPU per move moves by ~10% between runs, more
than a small change saves. This driver runs the real :class:`server.app.Arena`
(rooms, presence in memory, logs to ``/dev/null``, metrics) in one process with
stub transports: frames the server writes are parsed by in-process clients that
play like the bench's (the player to move sends the first legal move at once;
after ``game_over`` both leave and the pair opens a new room: create_room,
join_room, take_seat, ready x2). It reports the process CPU per move over
several rounds; the minimum is the steadiest figure. The clients' own work is
in the figure too, identical in both versions, so compare differences in us, not
ratios. Syscalls are not in it: ``bench/server.py`` measures those.

    .venv/bin/python bench/server_cpu.py [--pairs 50] [--games 5] [--rounds 8] [--rematch]
        [--profile PATH] [--store memory|sqlite]

Run it from each version's checkout (it imports ``server`` from the working directory),
alternating.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import os
import pstats
import statistics
import sys
import tempfile
import time
from typing import Any

import msgpack
from websockets.protocol import State
from websockets.server import ServerProtocol

sys.path.insert(0, os.getcwd())

from bench.pairs import open_game
from bench.server import children_of, cpu_seconds
from server.app import Arena, Config
from server.connection import Connection
from server.logs import configure


def process_cpu() -> float:
    """This process's CPU and its children's (the SQLite store's writer process)."""
    return time.process_time() + sum(cpu_seconds(c) for c in children_of(os.getpid()))


def frames_of(data: bytes) -> list[bytes]:
    """Payloads of the unmasked server frames in ``data`` (one write may hold several)."""
    out, i = [], 0
    while i < len(data):
        size = data[i + 1] & 0x7F
        i += 2
        if size == 126:
            size, i = int.from_bytes(data[i : i + 2], "big"), i + 2
        elif size == 127:
            size, i = int.from_bytes(data[i : i + 8], "big"), i + 8
        out.append(data[i : i + size])
        i += size
    return out


class StubTransport:
    """Never full; what the server writes goes straight to the client."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return 16384, 65536

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def write(self, data: bytes) -> None:
        self.client.received(data)

    def abort(self) -> None:
        pass


class StubWebSocket:
    """What :class:`Connection` uses of a ``websockets`` connection: its sans-I/O protocol."""

    def __init__(self, client: Client) -> None:
        self.transport = StubTransport(client)
        self.protocol = ServerProtocol()
        self.protocol.state = State.OPEN
        self.send_in_progress = None  # for websockets.broadcast() (older servers)

    def send_data(self) -> None:
        for data in self.protocol.data_to_send():
            self.transport.write(data)


class Client:
    """One player: requests go through the connection's own frame handler, in order."""

    def __init__(self, arena: Arena, counts: list[int]) -> None:
        self.conn = Connection(arena, StubWebSocket(self))  # type: ignore[arg-type]
        arena.connections.add(self.conn)
        self.counts = counts  # [moves, games]
        self.inbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.ids = 0
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.room: str | None = None
        self.seat: int | None = None
        self.over = asyncio.Event()
        self.task = asyncio.ensure_future(self._feed())

    async def _feed(self) -> None:
        while True:
            await self.conn._handle_frame(await self.inbox.get())

    def send(self, msg: dict[str, Any]) -> None:
        self.inbox.put_nowait(msgpack.packb(msg))

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        msg["id"] = self.ids
        fut = asyncio.get_running_loop().create_future()
        self.pending[self.ids] = fut
        self.send(msg)
        reply = await fut
        if reply["type"] == "error":
            raise RuntimeError(f"{msg['type']}: {reply['code']}")
        return reply

    def received(self, data: bytes) -> None:
        for frame in frames_of(data):
            msg = msgpack.unpackb(frame)
            kind, re = msg["type"], msg.get("re")
            if re is not None:
                fut = self.pending.pop(re, None)
                if fut is not None:
                    fut.set_result(msg)
                    continue
                if kind != "move_made":
                    raise RuntimeError(f"unexpected reply {msg}")
            if msg.get("room") != self.room:
                continue
            if kind in ("move_made", "game_started"):
                if kind == "move_made" and msg["seat"] == self.seat:
                    self.counts[0] += 1
                if msg.get("to_move") == self.seat and msg.get("legal_moves"):
                    self.ids += 1
                    move = msg["legal_moves"][0]
                    # answered by its own move_made (reply "event"), as in the bench
                    self.send(
                        {
                            "type": "move",
                            "id": self.ids,
                            "room": self.room,
                            "move": move,
                            "reply": "event",
                        }
                    )
            elif kind == "game_over":
                self.over.set()


async def play(a: Client, b: Client, games: int, rematch: bool = False) -> None:
    """``games`` games, each in a new room, or with ``rematch`` all in one room."""
    room = await open_game(a, b)
    for i in range(games):
        await a.over.wait()
        await b.over.wait()
        a.counts[1] += 1
        if rematch and i < games - 1:  # the players swap seats in a rematch
            a.over, b.over = asyncio.Event(), asyncio.Event()
            a.seat, b.seat = b.seat, a.seat
            await a.request({"type": "offer_rematch", "room": room})
            await b.request({"type": "accept_rematch", "room": room})
            continue
        await a.request({"type": "leave_room", "room": room})
        await b.request({"type": "leave_room", "room": room})
        if i < games - 1:
            room = await open_game(a, b)


async def run(
    pairs: int,
    games: int,
    rounds: int,
    rematch: bool = False,
    profile: str | None = None,
    data_dir: str | None = None,
) -> dict[str, Any]:
    config = Config(port=0, rate_burst=10**6, rate_per_second=10**6, ping_interval=None)
    if data_dir is not None:
        config.presence_url, config.data_dir = f"sqlite:{data_dir}", data_dir
    arena = Arena(config)
    await arena.start()
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)  # as `arena serve` does
    counts = [0, 0]
    clients = [Client(arena, counts) for _ in range(2 * pairs)]
    for i, c in enumerate(clients):
        await c.request({"type": "hello", "versions": [1], "software": "bench/server_cpu.py"})
        await c.request({"type": "login", "name": f"p{i}", "bot": True})
    duos = [(clients[2 * i], clients[2 * i + 1]) for i in range(pairs)]
    await asyncio.gather(*(play(a, b, 2) for a, b in duos))  # warm-up
    per_move, moves, played = [], 0, 0
    profiler = cProfile.Profile(time.thread_time) if profile else None
    for _ in range(rounds):
        counts[0] = counts[1] = 0
        if profiler is not None:
            profiler.enable()
        start = process_cpu()
        await asyncio.gather(*(play(a, b, games, rematch) for a, b in duos))
        per_move.append((process_cpu() - start) / counts[0] * 1e6)
        if profiler is not None:
            profiler.disable()
        moves, played = moves + counts[0], played + counts[1]
    calls = None
    if profiler is not None and profile:
        profiler.dump_stats(profile)
        calls = pstats.Stats(profiler).total_calls / moves  # a count load does not move
    return {"us_per_move": per_move, "moves_per_game": moves / played, "calls_per_move": calls}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=50, help="concurrent games (50)")
    parser.add_argument("--games", type=int, default=5, help="games per pair per round (5)")
    parser.add_argument("--rounds", type=int, default=8, help="measured rounds (8)")
    parser.add_argument(
        "--rematch", action="store_true", help="a pair's games all in one room (rematches)"
    )
    parser.add_argument("--profile", metavar="PATH", help="cProfile the measured rounds to PATH")
    parser.add_argument(
        "--store",
        choices=("memory", "sqlite"),
        default="memory",
        help="presence: memory (default) or SQLite in a fresh temporary data dir; the "
        "process CPU counts the writer process too",
    )
    args = parser.parse_args(argv)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # the server's logs, as in bench/server.py
    configure("info", json=True)
    with tempfile.TemporaryDirectory(prefix="arena-cpu-") as tmp:
        data_dir = tmp if args.store == "sqlite" else None
        res = asyncio.run(
            run(args.pairs, args.games, args.rounds, args.rematch, args.profile, data_dir)
        )
    cpu = res["us_per_move"]
    print(
        f"CPU per move (server and clients, no syscalls): min {min(cpu):.1f} us, "
        f"median {statistics.median(cpu):.1f} us over {len(cpu)} rounds; "
        f"{res['moves_per_game']:.2f} moves per game"
    )
    if res["calls_per_move"] is not None:
        print(f"Python function calls per move (profiled): {res['calls_per_move']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
