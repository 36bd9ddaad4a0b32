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
import signal
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from clients.tournament.config import ConfigError, ParticipantSpec, TournamentConfig
from clients.tournament.elo import pair_bucket
from clients.tournament.participants import BuiltinParticipant, Participant, builtin_only
from clients.tournament.play import GameSpec, play_game
from clients.tournament.schedule import Group, Planner, derive_seed, group_points
from clients.tournament.standings import Standings, compute

STATE_VERSION = 1


def resolved_participants(config: TournamentConfig) -> tuple[ParticipantSpec, ...]:
    """Participants with their seeds fixed (a seed derived from the tournament's when none is
    given, so two copies of one level still play different games)."""
    return tuple(
        p if p.seed is not None else replace(p, seed=derive_seed(config.seed, "player", i))
        for i, p in enumerate(config.participants)
    )


# -- worker processes (built-in games) ------------------------------------------------
_worker_loop: asyncio.AbstractEventLoop | None = None
_worker_players: dict[tuple[Any, ...], Participant] = {}


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop


def _builtin_players(spec: GameSpec, players: tuple[ParticipantSpec, ...]) -> list[Participant]:
    seated = []
    for p in players:
        key = (spec.game, p.name, p.level, p.seed, p.iterations, p.budget_ms)
        if key not in _worker_players:
            _worker_players[key] = BuiltinParticipant(p, spec.game)
        seated.append(_worker_players[key])
    return seated


Played = tuple[str, dict[str, Any]]  # a game's record line as JSON text, and its summary


def encode(line: dict[str, Any]) -> Played:
    """The line's JSON text for the records file, and the part the runner keeps (what
    the standings and the summary read), so long games do not pile up in memory."""
    text = json.dumps(line, separators=(",", ":"))
    return text, {
        "players": line["players"],
        "result": line["result"],
        "tournament": line["tournament"],
    }


def play_builtin(specs: list[GameSpec], participants: tuple[ParticipantSpec, ...]) -> list[Played]:
    """Play games between built-in levels in a worker process (encoded there too)."""
    global _worker_loop
    if _worker_loop is None:
        _worker_loop = asyncio.new_event_loop()

    async def play_all() -> list[Played]:
        out = []
        for spec in specs:
            seated = _builtin_players(spec, tuple(participants[i] for i in spec.seats))
            line, _ = await play_game(spec, seated)
            out.append(encode(line))
        return out

    return _worker_loop.run_until_complete(play_all())


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
        out[line["tournament"]["id"]] = line
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
        self._standings: Standings | None = None
        self._games_committed = 0
        self._sprt_penta = [0] * 5  # the first participant's pairs, for the SPRT
        self.sprt_state: dict[str, Any] | None = None
        self.stop_reason = "complete"
        self._records = out / "games.jsonl"
        self._pool: Executor | None = None
        self._records_file: IO[str] | None = None
        self._idle: dict[int, list[Participant]] = {}

    # -- progress ---------------------------------------------------------------------
    @property
    def standings(self) -> Standings:
        """The table of the committed groups (computed when asked, then kept)."""
        if self._standings is None:
            self._standings = compute(self.names, list(self.committed.values()))
        return self._standings

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

    def _append(self, texts: list[str]) -> None:
        """Lines of finished games, handed to the OS at once: a killed run loses none
        (it loses the games in progress, which a resume plays again)."""
        if self._records_file is None:
            self._records_file = self._records.open("a")
        self._records_file.write("".join(t + "\n" for t in texts))
        self._records_file.flush()

    # -- running ----------------------------------------------------------------------
    async def run(self) -> dict[str, Any]:
        self._open_state()
        if builtin_only(self.participants) and self.config.concurrency > 1:
            self._pool = ProcessPoolExecutor(self.config.concurrency, initializer=_worker_init)
        try:
            while batch := self.planner.next_batch(self.committed):
                if not await self._run_batch(batch):
                    break
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
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
        specs = {g.key: g.games(self.config) for g in batch}
        order = [s for g in batch for s in specs[g.key]]
        todo = [s for s in order if s.id not in self.lines]
        sem = asyncio.Semaphore(self.config.concurrency)
        pending = list(batch)
        stop = asyncio.Event()

        def commit_ready() -> None:
            while pending and all(s.id in self.lines for s in specs[pending[0].key]):
                group = pending.pop(0)
                self.committed[group.key] = [self.lines[s.id] for s in specs[group.key]]
                self._standings = None
                self._games_committed += len(specs[group.key])
                self._count_pair(self.committed[group.key])
                if self._sprt_decided():
                    stop.set()
                    return

        async def one(chunk: list[GameSpec]) -> None:
            async with sem:
                if stop.is_set():
                    return
                played = await self._play_chunk(chunk)
            self._append([text for text, _ in played])
            for spec, (_, line) in zip(chunk, played, strict=True):
                self.lines[spec.id] = line
            self.played_now += len(chunk)
            commit_ready()
            if self.listener:
                self.listener(self)

        commit_ready()
        if stop.is_set():
            return False
        # built-in games go to the workers a few at a time: one game each would spend
        # more on the hand-over than on the game when the players are fast
        size = (
            1 if self._pool is None else max(1, min(16, len(todo) // (8 * self.config.concurrency)))
        )
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
        tasks = [asyncio.ensure_future(one(c)) for c in chunks]
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
        return not stop.is_set()

    async def _play_chunk(self, chunk: list[GameSpec]) -> list[Played]:
        if self._pool is not None:  # only built-in participants
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, play_builtin, chunk, self.participants)
        return [encode(await self._play(spec)) for spec in chunk]

    async def _play(self, spec: GameSpec) -> dict[str, Any]:
        seated = tuple(self.participants[i] for i in spec.seats)
        if builtin_only(seated):
            line, _ = await play_game(spec, _builtin_players(spec, seated))
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
