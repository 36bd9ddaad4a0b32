"""``arena engine check``: does a program speak the engine protocol well enough to play?

Like fastchess's compliance check: the handshake, ``isready``, lines it must ignore,
then one complete game of every game and variant the server hosts (the checker
plays the other seats at random), each answer checked for legality and time, then
``stop`` and ``quit``. Every step is one report line, ``ok`` or ``FAIL`` with the
reason; :func:`check_engine` returns whether all passed.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from clients.engines import protocol as p
from clients.engines.process import (
    EngineProcess,
    EngineProcessError,
    EngineRefused,
    EngineTimeout,
)
from engine.base import Game, new_game

#: (game, rules, variant, players, options)
Spec = tuple[str, str, str, int, dict[str, object] | None]
#: every game and variant, smallest boards
VARIANTS: tuple[Spec, ...] = (
    ("collapsi", "standard", "base", 2, None),
    ("collapsi", "classic", "base", 2, None),
    ("collapsi", "standard", "shifting", 2, None),
    ("collapsi", "standard", "players-choice", 2, None),
    ("collapsi", "standard", "custom", 2, {"preset": "5x5"}),
    ("collapsi", "standard", "big-board", 3, None),
    ("collapsi", "standard", "big-board+shifting", 4, None),
    ("collecto", "standard", "base", 2, None),
)

#: lines an engine must ignore (ENGINE_PROTOCOL.md, Lines)
GARBAGE = (
    "",
    "   ",
    "xyzzy plugh",
    "ucinewgame",
    "debug on",
    "\x01\x02\x7f garbage \u00e9\u00e8",
    "z" * 20000,
)
#: failures after which the check stops (each costs up to a move's time)
MAX_FAILURES = 3


@dataclass(slots=True)
class Report:
    """The check's lines and whether anything failed."""

    say: Callable[[str], None]
    failures: list[str] = field(default_factory=list)
    #: the first game played through (the stop check plays it again)
    first: Spec | None = None
    declined: int = 0  # games the engine said it does not play (no failure)

    def ok(self, text: str) -> None:
        self.say(f"ok    {text}")

    def fail(self, text: str) -> None:
        self.failures.append(text)
        self.say(f"FAIL  {text}")


async def check_engine(
    command: str | Sequence[str], say: Callable[[str], None], move_ms: int = 2000, seed: int = 1
) -> bool:
    """Run every check on ``command``; ``say`` gets each report line. True if all passed."""
    report = Report(say)
    eng = EngineProcess(command, stop_grace=0.5)
    try:
        info = await eng.start()
    except EngineProcessError as exc:
        report.fail(f"handshake: {exc}")
        return False
    author = f" by {info.author}" if info.author else ""
    report.ok(
        f"handshake: {info.name}{author}, protocol {info.version}, {len(info.options)} option(s)"
    )
    try:
        await _readiness(eng, report)
        rng = random.Random(seed)
        for spec in VARIANTS:
            if len(report.failures) >= MAX_FAILURES:
                report.fail(f"stopped after {MAX_FAILURES} failures")
                break
            await _one_game(eng, spec, move_ms, rng, report)
        if report.declined == len(VARIANTS):
            report.fail("games: it declined every game")
        elif report.first is not None and len(report.failures) < MAX_FAILURES:
            await _stop_and_quit(eng, report.first, report)
    finally:
        await eng.kill()
    declined = f", declined {report.declined} of {len(VARIANTS)} games" if report.declined else ""
    say(
        f"{'PASSED' if not report.failures else 'FAILED'}: {info.name}, "
        f"{len(report.failures)} failure(s){declined}"
    )
    return not report.failures


async def _readiness(eng: EngineProcess, report: Report) -> None:
    try:
        await eng.isready(timeout=5)
        report.ok("isready answered readyok")
    except EngineProcessError as exc:
        report.fail(f"isready: {exc}")
        await _revive(eng, report)
        return
    try:
        for line in GARBAGE:
            await eng.send_line(line)
        await eng.isready(timeout=5)
        report.ok(f"ignored {len(GARBAGE)} unknown or garbage lines")
    except EngineProcessError as exc:
        report.fail(f"garbage: after lines it must ignore: {exc}")
        await _revive(eng, report)


async def _revive(eng: EngineProcess, report: Report) -> bool:
    try:
        await eng.restart()
        return True
    except EngineProcessError as exc:
        report.fail(f"restart: {exc}")
        return False


async def _one_game(
    eng: EngineProcess,
    spec: Spec,
    move_ms: int,
    rng: random.Random,
    report: Report,
) -> None:
    name, rules, variant, players, options = spec
    game = new_game(
        name, rules, variant, seed=rng.randrange(1 << 30), players=players, options=options
    )
    seat = rng.randrange(players)
    label = f"{name}/{variant}/{rules} ({players} players, seat {seat})"
    if not eng.running and not await _revive(eng, report):
        return
    try:
        await eng.new_game(p.new_game_of(game, seat), timeout=5)
    except EngineRefused as exc:  # (no failure: ENGINE_PROTOCOL.md, Misbehaving engines)
        report.declined += 1
        report.ok(f"{label}: declined ({exc})")
        return
    except EngineProcessError as exc:
        report.fail(f"{label}: newgame: {exc}")
        return
    answers, slowest = 0, 0.0
    while not game.is_over():
        if game.to_move() != seat:
            game.play(rng.choice(game.legal_moves()))
            continue
        clocks = _clocks(game, move_ms, answers)
        started = time.perf_counter()
        try:
            answer = await eng.play(game, clocks, timeout=move_ms / 1000)
        except EngineProcessError as exc:
            report.fail(f"{label}, move {len(game.history) + 1}: {exc}")
            return
        slowest = max(slowest, (time.perf_counter() - started) * 1000)
        answers += 1
        if answer.move == "resign":
            break
        game.play(answer.move)
    report.first = report.first or spec
    report.ok(f"{label}: {answers} legal answers in time (slowest {slowest:.0f} ms)")
    await eng.game_over(*_outcome(game))


def _clocks(game: Game, move_ms: int, n: int) -> p.Go:
    """Every kind of ``go`` in turn: Fischer, a time per move, untimed."""
    kind = n % 3
    if kind == 0:
        return p.Go(time=tuple([move_ms * 20] * game.num_players), inc=move_ms // 4)
    if kind == 1:
        return p.Go(movetime=move_ms // 2)
    return p.Go()


def _outcome(game: Game) -> tuple[int | None, str]:
    result = game.result()
    return (None, "resign") if result is None else (result.winner, result.reason)


async def _stop_and_quit(eng: EngineProcess, first: Spec, report: Report) -> None:
    """``stop`` in a game the engine plays (the first it played), then ``quit``."""
    name, rules, variant, players, options = first
    game = new_game(name, rules, variant, seed=3, players=players, options=options)
    try:
        await eng.new_game(p.new_game_of(game, 0), timeout=5)
        long = p.Go(time=tuple([600_000] * players))
        await eng.go(p.position_of(game), game.legal_moves(), long, timeout=0.05)
        report.ok("stop: answered at once (no stop needed)")
    except EngineTimeout as exc:
        if exc.hung:
            report.fail(f"stop: {exc}")
            return
        report.ok("stop: bestmove after stop")
    except EngineProcessError as exc:
        report.fail(f"stop: {exc}")
        return
    started = time.monotonic()
    await eng.quit(timeout=2.0)
    if time.monotonic() - started < 2.0:
        report.ok("quit: exited")
    else:
        report.fail("quit: still running 2 s after quit (killed)")
