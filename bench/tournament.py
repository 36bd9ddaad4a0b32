"""The tournament runner's cost, as ratios measured in one run.

1. Throughput: a round robin of instant engines (the built-in ``random`` level) played
   by the runner with ``--concurrency 2`` against a bare loop of the same
   :class:`engine.match.Match` games in one process (no records, no state, no
   pairing): games per second of each and their ratio (target >= 0.9).
2. Overhead per move with external engine processes (``--engine-games``): the time the
   runner adds to each move over what the engine itself spends (the engine
   reports its own compute time), p50/p99 (target p99 <= 1 ms).

    .venv/bin/python bench/tournament.py --games 2000
    .venv/bin/python bench/tournament.py --games 2000 --json /tmp/tournament.json
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

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


def bare_loop(config: TournamentConfig) -> tuple[int, float]:
    """The same games as the runner plays, in a plain loop: (games, seconds)."""
    specs = resolved_participants(config)
    players = [make_player(config.game, p.level or "", seed=p.seed or 0) for p in specs]
    planner = Planner(config)
    games = [s for g in planner.next_batch({}) for s in g.games(config)]
    started = time.perf_counter()
    for spec in games:
        match = Match(spec.new_game(), [PLAYERS[i] for i in spec.seats])
        match.start(0)
        while not match.over:
            seat = match.to_move()
            assert seat is not None
            match.submit_move(seat, players[spec.seats[seat]].choose(match.game), 0)
    return len(games), time.perf_counter() - started


def runner_run(config: TournamentConfig) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        summary = asyncio.run(Runner(config, Path(tmp) / "t").run())
        return summary["games"], time.perf_counter() - started


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
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--engine-games", type=int, default=200, help="0: skip the engine part")
    args = ap.parse_args(argv)
    config = config_for(args.games, args.concurrency)
    bare_games, bare_s = bare_loop(config)
    run_games, run_s = runner_run(config)
    assert bare_games == run_games
    rows = {
        "games": run_games,
        "bare_games_per_s": bare_games / bare_s,
        "runner_games_per_s": run_games / run_s,
        "ratio": (run_games / run_s) / (bare_games / bare_s),
        "concurrency": args.concurrency,
    }
    table = Table(title=f"instant engines: {run_games} games of 4x4 Collapsi")
    for col in ("bare loop games/s", f"runner (--concurrency {args.concurrency}) games/s", "ratio"):
        table.add_column(col, justify="right")
    table.add_row(
        f"{rows['bare_games_per_s']:.0f}",
        f"{rows['runner_games_per_s']:.0f}",
        f"{rows['ratio']:.2f}",
    )
    Console(width=120).print(table)
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
