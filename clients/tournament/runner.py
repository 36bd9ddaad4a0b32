"""The local tournament runner: plays a :class:`TournamentConfig` to its end.

Games run ``concurrency`` at a time: games between built-in levels in worker
processes (one game per task, so the cores are used), games with an engine
program in this process's event loop (the program is the other process). Each
finished game is appended at once to ``games.jsonl`` in the output directory
(one record line per game, see :mod:`clients.tournament.play`); a run that is
stopped (Ctrl-C) or killed starts again from ``state.json`` and that file, and
plays only the games missing.

Results are *committed* group by group in the planned order, whatever order the
games finish in; standings and the SPRT see committed groups only, so the same
seed gives the same pairings, deals, results and stopping point at any
concurrency (with deterministic players).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import IO, Any

from clients.tournament.builtin import (
    Played,
    Unit,
    builtin_players,
    encode,
    kept,
    play_units,
    unit,
    unit_specs,
)
from clients.tournament.config import ConfigError, ParticipantSpec, TournamentConfig
from clients.tournament.elo import pair_bucket
from clients.tournament.participants import BuiltinParticipant, Participant, builtin_only
from clients.tournament.play import GameSpec, play_game
from clients.tournament.schedule import Group, Planner, derive_seed, group_points
from clients.tournament.standings import Standings, Tally
from clients.tournament.workers import WorkerError, WorkerPool

STATE_VERSION = 1
#: games handed to a worker at once, at most
CHUNK = 64


def resolved_participants(config: TournamentConfig) -> tuple[ParticipantSpec, ...]:
    """Participants with their seeds fixed (a seed derived from the tournament's when none is
    given, so two copies of one level still play different games)."""
    return tuple(
        p if p.seed is not None else replace(p, seed=derive_seed(config.seed, "player", i))
        for i, p in enumerate(config.participants)
    )


# -- the records file ------------------------------------------------------------------
def read_lines(path: Path) -> dict[str, dict[str, Any]]:
    """Finished games by id; a last line cut short by a kill is removed from the file."""
    if not path.exists():
        return {}
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end != len(data):
        with path.open("r+b") as f:
            f.truncate(end)
    out = {}
    for raw in data[:end].splitlines():
        line = json.loads(raw)
        out[line["tournament"]["id"]] = kept(line)
    return out


class Runner:
    """One tournament in ``out``: ``await runner.run()`` returns the summary.

    ``listener(runner)`` is called after every finished game (progress display).
    """

    def __init__(
        self,
        config: TournamentConfig,
        out: Path,
        listener: Callable[[Runner], None] | None = None,
    ) -> None:
        self.config = config.validate()
        self.out = out
        self.listener = listener
        self.participants = resolved_participants(config)
        self.names = [p.name for p in self.participants]
        self.planner = Planner(config)
        self.lines: dict[str, dict[str, Any]] = {}
        self.committed: dict[str, list[dict[str, Any]]] = {}
        self.played_now = 0  # games played by this process (not found in the file)
        self.started = time.monotonic()
        self._tally = Tally(self.names)
        self._games_committed = 0
        self._sprt_penta = [0] * 5  # the first participant's pairs, for the SPRT
        self.sprt_state: dict[str, Any] | None = None
        self.stop_reason = "complete"
        self._records = out / "games.jsonl"
        self._pool: WorkerPool | None = None
        self._records_file: IO[str] | None = None
        self._idle: dict[int, list[Participant]] = {}

    # -- progress ---------------------------------------------------------------------
    @property
    def standings(self) -> Standings:
        """The table of the committed groups (kept up to date as they are committed)."""
        return self._tally.standings()

    @property
    def games_committed(self) -> int:
        return self._games_committed

    @property
    def games_total(self) -> int:
        return max(self.planner.estimated_games(), self.games_committed)

    def eta_seconds(self) -> float | None:
        if not self.played_now:
            return None
        rate = self.played_now / (time.monotonic() - self.started)
        return max(0, self.games_total - self.games_committed) / rate

    # -- state ------------------------------------------------------------------------
    def _open_state(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        state_path = self.out / "state.json"
        mine = self.config.to_dict()
        if state_path.exists():
            saved = json.loads(state_path.read_text())
            theirs = dict(saved["config"])
            if {**theirs, "concurrency": 0} != {**mine, "concurrency": 0}:
                raise ConfigError(
                    f"{self.out} holds another tournament: resume it with --resume {self.out} "
                    "or choose another --out"
                )
        else:
            tmp = state_path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"version": STATE_VERSION, "config": mine}, indent=1))
            os.replace(tmp, state_path)
        self.lines = read_lines(self._records)

    def _append(self, text: str) -> None:
        """Lines of finished games, handed to the OS at once: a killed run loses none
        (it loses the games in progress, which a resume plays again)."""
        if self._records_file is None:
            self._records_file = self._records.open("a")
        self._records_file.write(text)
        self._records_file.flush()

    # -- running ----------------------------------------------------------------------
    async def run(self) -> dict[str, Any]:
        self._open_state()
        if builtin_only(self.participants) and self.config.concurrency > 1:
            self._pool = WorkerPool(
                self.config.concurrency,
                partial(play_units, config=self.config, participants=self.participants),
            )
        try:
            while batch := self.planner.next_batch(self.committed):
                if not await self._run_batch(batch):
                    break
        finally:
            if self._pool is not None:
                self._pool.close()
            if self._records_file is not None:
                self._records_file.close()
            for instances in self._idle.values():
                for p in instances:
                    await p.stop()
        summary = self.summary()
        (self.out / "results.json").write_text(json.dumps(summary, indent=1))
        return summary

    async def _run_batch(self, batch: list[Group]) -> bool:
        """Play a batch; False when the SPRT decided (the rest is not played)."""
        ids = {g.key: g.ids() for g in batch}
        units = [
            unit(g, [perm for perm, i in enumerate(ids[g.key]) if i not in self.lines])
            for g in batch
        ]
        units = [u for u in units if u[-1]]
        pending = deque(ids.items())

        def commit_ready() -> bool:
            """Commit the groups complete in planned order; True once the SPRT decided."""
            while pending and all(i in self.lines for i in pending[0][1]):
                key, group_ids = pending.popleft()
                lines = self.committed[key] = [self.lines[i] for i in group_ids]
                self._tally.add(lines)
                self._games_committed += len(lines)
                self._count_pair(lines)
                if self._sprt_decided():
                    return True
            return False

        def finished(played: Played) -> bool:
            text, lines = played
            self._append(text)
            for line in lines:
                self.lines[line["tournament"]["id"]] = line
            self.played_now += len(lines)
            decided = commit_ready()
            if self.listener:
                self.listener(self)
            return decided

        if commit_ready():
            return False
        if self._pool is None:
            return not await self._play_in_loop(units, finished)
        # built-in games go to the workers many at a time (up to CHUNK games, 8 chunks a
        # worker at least): one game each would spend more on the hand-over than on the
        # game when the players are fast, and every answer wakes this process
        games = sum(len(u[-1]) for u in units)
        most = min(CHUNK, games // (8 * self.config.concurrency))
        size = max(1, most // len(ids[batch[0].key]))
        chunks = [units[i : i + size] for i in range(0, len(units), size)]
        async for _, played in self._pool.imap_unordered(chunks):
            if finished(played):
                return False  # the games still in flight are dropped with the pool
        if pending:  # every answer came back, so every group is complete
            raise WorkerError(f"{len(pending)} groups of the batch were not all played")
        return True

    async def _play_in_loop(self, units: list[Unit], finished: Callable[[Played], bool]) -> bool:
        """Play ``units`` in this process, ``concurrency`` games at a time; True if stopped."""
        if self.config.concurrency == 1 and builtin_only(self.participants):
            for u in units:  # nothing else runs meanwhile: no awaits per move
                if finished(play_units([u], self.config, self.participants)):
                    return True
                await asyncio.sleep(0)  # where a Ctrl-C (this task cancelled) stops the run
            return False
        todo = [spec for u in units for spec in unit_specs(u, self.config)]
        sem = asyncio.Semaphore(self.config.concurrency)
        stop = asyncio.Event()

        async def one(spec: GameSpec) -> None:
            async with sem:
                if stop.is_set():
                    return
                line = await self._play(spec)
            if finished(encode([line])):
                stop.set()

        tasks = [asyncio.ensure_future(one(s)) for s in todo]
        try:
            waiter = asyncio.ensure_future(stop.wait())
            done_all = asyncio.gather(*tasks)
            done_all.add_done_callback(lambda f: f.cancelled() or f.exception())  # seen below
            await asyncio.wait([waiter, done_all], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in tasks:
                t.cancel()
            waiter.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        for t in tasks:
            if t.done() and not t.cancelled() and (exc := t.exception()) is not None:
                raise exc
        return stop.is_set()

    async def _play(self, spec: GameSpec) -> dict[str, Any]:
        seated = tuple(self.participants[i] for i in spec.seats)
        if builtin_only(seated):
            line, _ = await play_game(spec, list(builtin_players(spec, seated)))
            return line
        players = [await self._acquire(i) for i in spec.seats]
        faulted: set[int] = set()
        try:
            line, faulted = await play_game(spec, players)
        finally:
            for seat, (i, p) in enumerate(zip(spec.seats, players, strict=True)):
                if seat in faulted:
                    await p.restart()
                self._idle.setdefault(i, []).append(p)
        return line

    async def _acquire(self, index: int) -> Participant:
        idle = self._idle.setdefault(index, [])
        if idle:
            return idle.pop()
        spec = self.participants[index]
        if spec.builtin:
            return BuiltinParticipant(spec, self.config.game, offload=True)
        try:
            from clients.tournament.engines import EngineParticipant
        except ImportError as exc:  # the engine protocol driver is not installed
            raise ConfigError(
                f"participant {spec.name}: engine programs unavailable: {exc}"
            ) from None

        p = EngineParticipant(spec, self.config.game)
        await p.start()
        return p

    # -- SPRT and summary -------------------------------------------------------------
    def _count_pair(self, lines: list[dict[str, Any]]) -> None:
        if self.config.sprt is not None:
            points = group_points(lines).get(0, 0.0)
            self._sprt_penta[pair_bucket(points)] += 1

    def _sprt_decided(self) -> bool:
        sprt = self.config.sprt
        if sprt is None:
            return False
        penta = self._sprt_penta
        llr = sprt.llr_penta(penta)
        decision = sprt.decision(llr)
        self.sprt_state = {
            **sprt.to_dict(),
            "llr": llr,
            "lower_bound": sprt.lower_bound,
            "upper_bound": sprt.upper_bound,
            "decision": decision,
            "pairs": sum(penta),
        }
        if decision != "continue":
            self.stop_reason = f"sprt_{decision}"
            return True
        return False

    def summary(self) -> dict[str, Any]:
        return {
            "out": str(self.out),
            "games": self.games_committed,
            "games_played_now": self.played_now,
            "stopped": self.stop_reason,
            **self.standings.to_dict(),
            "sprt": self.sprt_state,
            "knockout_winner": (
                self.names[self.planner.winner()] if self.planner.winner() is not None else None
            ),
            "adjudicated": sum(
                1 for g in self.committed.values() for ln in g if ln["tournament"]["adjudicated"]
            ),
            "faults": sum(
                len(ln["tournament"]["faults"]) for g in self.committed.values() for ln in g
            ),
        }
