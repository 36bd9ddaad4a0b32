"""``arena tui`` speed: how long a move takes from arriving at the client to being drawn,
while the clocks tick, and how much CPU an idle client in a game uses.

    .venv/bin/python bench/tui.py [--moves 60] [--idle 10] [--json out.json]

A real ``arena serve`` subprocess (so this process's CPU is the client's alone), the TUI
under Textual's headless driver (``run_test``: everything but the terminal writes) as
one player of a Collapsi game with a running clock, a library client as the other.
Latency: from the client library decoding the opponent's ``move_made`` to the board
widget drawing (a row of) the position after it for the screen; beside it this process's
CPU time over the same span (what drawing costs, which the machine's load does not
inflate) and how many times
the screen was laid out again. A game's first move (the bench's opponent moves at once)
arrives while the game screen is still being set up, so the figures are also given
without it. Idle: process CPU time over wall time while the TUI waits
in a game with its clock ticking (redrawn every 0.1 s).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.screen import Screen
from textual.widgets._footer import FooterKey

from clients.client import Client
from clients.tui.app import ArenaTui
from clients.tui.board import BoardView
from clients.tui.game_screen import GameScreen
from clients.tui.lobby import LobbyScreen
from protocol import messages as m


async def serve() -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "clients.cli", "serve", "--port", "0", "--store", "memory",
        "--log-format", "json",
        stderr=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    while True:
        line = await proc.stderr.readline()  # type: ignore[union-attr]
        if not line:
            raise SystemExit("arena serve ended before listening")
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("event") == "listening":
            asyncio.get_running_loop().create_task(drain(proc))
            return proc, entry["url"]


async def drain(proc: asyncio.subprocess.Process) -> None:
    while await proc.stderr.readline():  # type: ignore[union-attr]
        pass


async def until(pilot: Any, cond: Any) -> Any:
    for _ in range(2000):
        if value := cond():
            return value
        await pilot.pause(0.01)
    raise SystemExit(f"timed out: {cond.__code__.co_firstlineno}")


async def run(moves: int, idle: float) -> dict[str, Any]:
    proc, url = await serve()
    arrived: dict[int, tuple[float, float, int, float]] = {}  # ply -> (wall, CPU, layouts, GC)
    lat: list[float] = []  # ms from arrival to the board rendering it
    cpu: list[float] = []  # this process's CPU ms over the same span (load does not add)
    layouts: list[int] = []  # screen layouts run over the same span
    plies: list[int] = []  # the ply of each
    gc_ms: list[float] = []  # garbage collection pauses over the same span
    collected = [0.0, 0.0]  # GC ms so far, when the running collection began

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collected[1] = time.perf_counter()
        else:
            collected[0] += (time.perf_counter() - collected[1]) * 1000

    gc.callbacks.append(on_gc)
    try:
        bob = Client(url)
        await bob.connect()
        await bob.login("bob")
        app = ArenaTui(url, name="ann", config=Path(os.devnull))
        receive = app.client._receive

        def timed_receive(msg: Any) -> None:
            if msg.type == "move_made" and msg.seat == 0:
                arrived[msg.ply] = (time.perf_counter(), time.process_time(), laid[0], collected[0])
            receive(msg)

        app.client._receive = timed_receive  # type: ignore[method-assign]
        # drawn: the compositor asks the board for a row of the new position (the board
        # draws only the rows a move changed: clients/tui/lines.py)
        render_line = BoardView.render_line

        def timed_render(self: BoardView, y: int) -> Any:
            out = render_line(self, y)
            ply = len((self.view or {}).get("history") or [])
            if ply in arrived:
                wall, cpu0, layouts0, gc0 = arrived.pop(ply)
                gc_ms.append(collected[0] - gc0)
                lat.append((time.perf_counter() - wall) * 1000)
                cpu.append((time.process_time() - cpu0) * 1000)
                layouts.append(laid[0] - layouts0)
                plies.append(ply)
            return out

        BoardView.render_line = timed_render  # type: ignore[method-assign]
        laid = [0]  # screen layouts so far
        refresh_layout = Screen._refresh_layout

        def counted_layout(self: Screen, *args: Any, **kw: Any) -> Any:
            laid[0] += 1
            return refresh_layout(self, *args, **kw)

        Screen._refresh_layout = counted_layout  # type: ignore[method-assign]
        async with app.run_test(size=(150, 48)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen))
            games = 0
            idle_cpu = None
            while len(lat) < moves:
                clock = m.Fischer(base_ms=600_000, increment_ms=0)
                room = (await bob.create_room("collapsi", seat=0, time_control=clock)).room
                await app.play_room(room)
                screen = await until(
                    pilot, lambda: isinstance(app.screen, GameScreen) and app.screen
                )
                # the screen is built and drawn (its footer too) before the game starts:
                # the opponent readies after ann sat down, and moves at once
                await until(pilot, lambda s=screen: s.composed and s.query(FooterKey))
                await pilot.pause(0.2)
                await bob.ready(room)
                model = screen.model
                games += 1
                ev = await bob.next(type="game_started", room=room, timeout=30)
                await until(pilot, lambda m=model: m.status == "playing")
                if idle_cpu is None:  # bob to move, clocks running: the TUI idles
                    await pilot.pause(1.0)
                    c0, w0 = time.process_time(), time.perf_counter()
                    await pilot.pause(idle)
                    idle_cpu = (time.process_time() - c0) / (time.perf_counter() - w0)
                while ev.to_move is not None and model.status == "playing":
                    if ev.to_move == 0:
                        await bob.move(room, ev.legal_moves[0])
                    else:
                        await until(pilot, lambda m=model: m.my_turn or m.status != "playing")
                        if model.my_turn:
                            await app.client.move(room, model.legal[0])
                    ev = await bob.next(type=("move_made", "game_over"), room=room, timeout=30)
                    if ev.type == "game_over":
                        break
                await until(pilot, lambda m=model: m.status == "finished")
                await app.client.leave(room)
                await bob.leave(room)
                app.pop_screen()
                arrived.clear()
        await bob.close()
    finally:
        proc.terminate()
        await proc.wait()
    later = [i for i, ply in enumerate(plies) if ply > 1]  # not a game's first move
    return {
        **figures("latency_ms", lat),
        **figures("cpu_ms", cpu),
        **figures("later_latency_ms", [lat[i] for i in later]),
        **figures("later_cpu_ms", [cpu[i] for i in later]),
        "layouts_per_move": round(statistics.mean(layouts), 2),
        # the slowest draws: (ply, wall ms, CPU ms, layouts), to tell what they were
        "slowest": sorted(zip(plies, lat, cpu, layouts, gc_ms, strict=True), key=lambda x: -x[1])[
            :3
        ],
        "gc_ms_max": round(max(gc_ms), 2),
        "idle_cpu_share": round(idle_cpu or 0.0, 4),
        "idle_seconds": idle,
        "load_average": round(os.getloadavg()[0], 2),
        "games": games,
    }


def figures(name: str, values: list[float]) -> dict[str, Any]:
    values = sorted(values)
    p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
    return {
        f"{name}_count": len(values),
        f"{name}_median": round(statistics.median(values), 2),
        f"{name}_p99": round(p99, 2),
        f"{name}_max": round(values[-1], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    res = asyncio.run(run(args.moves, args.idle))
    rows = [
        ("opponent moves drawn", res["latency_ms_count"]),
        ("arrival -> drawn, median (ms)", res["latency_ms_median"]),
        ("arrival -> drawn, p99 (ms)", res["latency_ms_p99"]),
        ("arrival -> drawn, max (ms)", res["latency_ms_max"]),
        ("CPU arrival -> drawn, median (ms)", res["cpu_ms_median"]),
        ("CPU arrival -> drawn, p99 (ms)", res["cpu_ms_p99"]),
        ("  the same after a game's 1st move:", ""),
        ("  arrival -> drawn, median (ms)", res["later_latency_ms_median"]),
        ("  arrival -> drawn, p99 (ms)", res["later_latency_ms_p99"]),
        ("  CPU arrival -> drawn, median (ms)", res["later_cpu_ms_median"]),
        ("  CPU arrival -> drawn, p99 (ms)", res["later_cpu_ms_p99"]),
        ("screen layouts per move", res["layouts_per_move"]),
        ("idle in a game, share of a core", f"{res['idle_cpu_share']:.2%}"),
        ("load average (1 min) at the end", res["load_average"]),
    ]
    print(f"{'measure':<36} {'value':>10}")
    for label, value in rows:
        print(f"{label:<36} {value!s:>10}")
    print("slowest (ply, wall ms, CPU ms, layouts, GC ms):", res["slowest"])
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
