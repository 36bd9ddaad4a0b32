"""The tournament runner's cost, as ratios measured in one run.

1. Throughput: a round robin of instant engines (the built-in ``random`` level, 4x4
   Collapsi) played by the runner (``Runner.run``: worker processes at ``--concurrency 2``,
   records written, results committed in order, results.json) against a *bare loop*: the
   same games (same deals, seat orders and seeded players) planned before the clock
   starts, each a :class:`engine.match.Match` driven to its end in one process by calling
   the level's ``choose`` and ``Match.submit_move`` (time 0: no clock read), with no
   records, files, pairing or state. The two alternate in ``--rounds`` rounds (ABBA), so
   a machine whose load changes meanwhile weighs on both alike; the ratio of games per
   second over all rounds is the figure (target >= 0.9), each round's ratio is shown too.
   CPU seconds per game of each (the runner's main process plus its workers) are shown
   as well: their ratio is what the runner's own work costs whatever the cores free.
2. Overhead per move with external engine processes (``--engine-games``): the time the
   runner adds to each move over what the engine itself spends (the engine
   reports its own compute time), p50/p99 (target p99 <= 1 ms).

    .venv/bin/python bench/tournament.py --games 2000 --rounds 5
    .venv/bin/python bench/tournament.py --games 2000 --json /tmp/tournament.json
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.table import Table

from clients.tournament.config import ParticipantSpec, TournamentConfig
from clients.tournament.participants import Turn
from clients.tournament.runner import Runner, resolved_participants
from clients.tournament.schedule import Planner
from engine.ai import make_player
from engine.base import Game
from engine.match import Match

PLAYERS = ("a", "b", "c", "d")


def config_for(games: int, concurrency: int) -> TournamentConfig:
    participants = tuple(ParticipantSpec(name=n, level="random") for n in PLAYERS)
    deals = max(1, games // (6 * 2))  # six encounters, two games per deal
    return TournamentConfig(participants=participants, deals=deals, concurrency=concurrency)


def _bare_games(config: TournamentConfig, part: int = 0, parts: int = 1) -> tuple[int, float]:
    """Play every ``parts``-th of the tournament's games, from ``part``, in a plain loop
    (planned before the clock starts): (games, seconds)."""
    specs = resolved_participants(config)
    players = [make_player(config.game, p.level or "", seed=p.seed or 0) for p in specs]
    games = [s for g in Planner(config).next_batch({}) for s in g.games(config)][part::parts]
    started = time.perf_counter()
    for spec in games:
        match = Match(spec.new_game(), [PLAYERS[i] for i in spec.seats])
        match.start(0)
        while not match.over:
            seat = match.to_move()
            assert seat is not None
            match.submit_move(seat, players[spec.seats[seat]].choose(match.game), 0)
    return len(games), time.perf_counter() - started


def bare_loop(config: TournamentConfig) -> tuple[int, float, float]:
    """The same games as the runner plays, in a plain loop: (games, seconds, CPU seconds)."""
    cpu = time.process_time()
    games, seconds = _bare_games(config)
    return games, seconds, time.process_time() - cpu


def bare_loops_in_parallel(config: TournamentConfig) -> tuple[int, float, float]:
    """The runner's ceiling: ``concurrency`` bare loops in as many processes (forked, so
    nothing to start but the fork), each playing its share of the same games, and nothing
    else: (games, seconds from the first fork to the last exit, CPU seconds)."""
    n = config.concurrency
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    pids = []
    for part in range(n):
        pid = os.fork()
        if pid == 0:  # the child plays its share and leaves at once
            _bare_games(config, part, n)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    total = sum(len(g.games(config)) for g in Planner(config).next_batch({}))
    return total, seconds, cpu


def runner_run(config: TournamentConfig) -> tuple[int, float, float]:
    """The runner on a fresh output directory: (games, seconds, CPU seconds of its main
    process and its worker processes)."""
    with tempfile.TemporaryDirectory() as tmp:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        started, cpu = time.perf_counter(), time.process_time()
        summary = asyncio.run(Runner(config, Path(tmp) / "t").run())
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        workers = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
        return summary["games"], seconds, time.process_time() - cpu + workers


KINDS = {"bare": bare_loop, "parallel": bare_loops_in_parallel, "runner": runner_run}


def throughput(config: TournamentConfig, rounds: int) -> dict[str, Any]:
    """The bare loop, the bare loops in parallel and the runner, in turn (the order
    rotating every round), ``rounds`` of each: totals per kind and the runner's ratios."""
    load_before = os.getloadavg()[0]
    per_round = []
    totals = {k: [0, 0.0, 0.0] for k in KINDS}
    order = list(KINDS)
    for _ in range(rounds):
        got = {}
        for kind in order:
            got[kind] = KINDS[kind](config)
            for i, v in enumerate(got[kind]):
                totals[kind][i] += v
        order = order[1:] + order[:1]
        assert got["bare"][0] == got["runner"][0] == got["parallel"][0], got
        per_round.append((got["runner"][0] / got["runner"][1]) / (got["bare"][0] / got["bare"][1]))

    def rate(kind: str) -> float:
        return totals[kind][0] / totals[kind][1]

    def cpu_us(kind: str) -> float:
        return totals[kind][2] / totals[kind][0] * 1e6

    return {
        "games_per_round": totals["bare"][0] // rounds,
        "rounds": rounds,
        "bare_games_per_s": rate("bare"),
        "parallel_bare_games_per_s": rate("parallel"),
        "runner_games_per_s": rate("runner"),
        "ratio": rate("runner") / rate("bare"),
        "round_ratios": per_round,
        "parallel_ratio": rate("parallel") / rate("bare"),
        "runner_to_parallel": rate("runner") / rate("parallel"),
        "bare_cpu_us_per_game": cpu_us("bare"),
        "parallel_cpu_us_per_game": cpu_us("parallel"),
        "runner_cpu_us_per_game": cpu_us("runner"),
        "cpu_ratio": cpu_us("bare") / cpu_us("runner"),
        "concurrency": config.concurrency,
        "load_average": [load_before, os.getloadavg()[0]],
    }


ENGINE = Path(__file__).resolve().parent.parent / "clients/examples/python/random_engine.py"


def engine_overhead(games: int, concurrency: int) -> dict[str, float]:
    """Two example engine processes play ``games`` games; per move, the time from one
    ``go`` being sent to the next, minus the time the engine took to answer (its pipe
    round trip included): what the runner adds (Match, clocks, position, records)."""
    from clients.tournament.engines import EngineParticipant

    starts: list[tuple[int, float, float]] = []  # (ply, go sent, engine ms), games in turn
    original = EngineParticipant.choose

    async def timed(self: EngineParticipant, game: Game, turn: Turn) -> str:
        sent = time.perf_counter()
        move = await original(self, game, turn)
        starts.append((len(game.history), sent, self.last_elapsed_ms))
        return move

    EngineParticipant.choose = timed  # type: ignore[method-assign]
    cmd = f"{sys.executable} {ENGINE}"
    participants = tuple(ParticipantSpec.from_dict({"name": n, "cmd": cmd}) for n in ("x", "y"))
    config = TournamentConfig(
        participants=participants, deals=max(1, games // 2), concurrency=concurrency
    )
    try:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(Runner(config, Path(tmp) / "t").run())
    finally:
        EngineParticipant.choose = original  # type: ignore[method-assign]
    # consecutive moves of one game (concurrency 1: one game at a time)
    overheads = [
        (b[1] - a[1]) * 1000 - a[2] for a, b in itertools.pairwise(starts) if b[0] == a[0] + 1
    ]
    overheads.sort()
    return {
        "moves": len(overheads),
        "p50_ms": overheads[len(overheads) // 2],
        "p99_ms": overheads[min(len(overheads) - 1, int(len(overheads) * 0.99))],
        "max_ms": overheads[-1],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=2000, help="games per round, each way")
    ap.add_argument("--rounds", type=int, default=4, help="bare/runner alternations")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--engine-games", type=int, default=200, help="0: skip the engine part")
    args = ap.parse_args(argv)
    config = config_for(args.games, args.concurrency)
    rows: dict[str, Any] = throughput(config, args.rounds)
    table = Table(
        title=f"instant engines, 4x4 Collapsi: {rows['rounds']} rounds of "
        f"{rows['games_per_round']} games each, load average "
        + " -> ".join(f"{x:.1f}" for x in rows["load_average"])
    )
    c = args.concurrency
    for col in (
        "bare loop games/s",
        f"runner (--concurrency {c}) games/s",
        "ratio (target >= 0.9)",
        "ratio per round",
        f"{c} bare loops in parallel: games/s (ratio)",
        "runner / parallel",
    ):
        table.add_column(col, justify="right")
    table.add_row(
        f"{rows['bare_games_per_s']:.0f}",
        f"{rows['runner_games_per_s']:.0f}",
        f"{rows['ratio']:.2f}",
        " ".join(f"{r:.2f}" for r in rows["round_ratios"]),
        f"{rows['parallel_bare_games_per_s']:.0f} ({rows['parallel_ratio']:.2f})",
        f"{rows['runner_to_parallel']:.2f}",
    )
    Console(width=160).print(table)
    cpu = Table(title="CPU per game (us; the runner: its main process and its workers)")
    for col in ("bare loop", f"{c} bare loops in parallel", "runner", "bare / runner"):
        cpu.add_column(col, justify="right")
    cpu.add_row(
        f"{rows['bare_cpu_us_per_game']:.0f}",
        f"{rows['parallel_cpu_us_per_game']:.0f}",
        f"{rows['runner_cpu_us_per_game']:.0f}",
        f"{rows['cpu_ratio']:.2f}",
    )
    Console(width=160).print(cpu)
    if args.engine_games:
        over = engine_overhead(args.engine_games, 1)
        rows["engine_overhead"] = over
        table = Table(
            title=f"runner overhead per move, two engine processes, {over['moves']} moves"
        )
        for col in ("p50 ms", "p99 ms", "max ms"):
            table.add_column(col, justify="right")
        table.add_row(*(f"{over[k]:.3f}" for k in ("p50_ms", "p99_ms", "max_ms")))
        Console(width=120).print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
