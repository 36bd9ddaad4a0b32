"""The runner's fast paths: built-in games played without the participant interface,
its worker processes (real processes and pipes) and the standings kept group by group."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import pytest

from clients.tournament.builtin import builtin_players, play_units, unit
from clients.tournament.config import ParticipantSpec, TournamentConfig
from clients.tournament.play import play_builtin_game, play_game
from clients.tournament.schedule import Planner
from clients.tournament.standings import Tally, compute
from clients.tournament.workers import WorkerError, WorkerPool
from engine.base import GameRecord, replay


def _config(tc: str = "none", *levels: str) -> TournamentConfig:
    participants = tuple(
        ParticipantSpec(name=f"p{i}", level=lv, seed=i) for i, lv in enumerate(levels)
    )
    return TournamentConfig(participants=participants, deals=2, tc=tc, seed=7).validate()


def _timeless(line: dict[str, Any]) -> dict[str, Any]:
    """A line without what the wall clock decides."""
    out = {k: v for k, v in line.items() if k != "move_times_ms"}
    out["tournament"] = {k: v for k, v in line["tournament"].items() if k != "duration_ms"}
    return out


@pytest.mark.parametrize("tc", ["none", "1+0"])
def test_the_direct_path_plays_the_same_games_as_the_participant_interface(tc: str) -> None:
    config = _config(tc, "random", "greedy", "random")
    specs = [s for g in Planner(config).next_batch({}) for s in g.games(config)]
    assert len(specs) == 3 * 2 * 2
    for spec in specs:
        seated = builtin_players(spec, tuple(config.participants[i] for i in spec.seats))
        direct = play_builtin_game(spec, seated)
        through, faulted = asyncio.run(play_game(spec, list(seated)))
        assert not faulted
        assert _timeless(direct) == _timeless(through)
        assert len(direct["move_times_ms"]) == len(direct["moves"])
        game = replay(GameRecord.from_dict(direct))
        assert game.position() == direct["tournament"]["final_position"]
        assert direct["time_control"]["kind"] == ("none" if tc == "none" else "fischer")


def _double(chunk: list[int]) -> list[int]:
    if -1 in chunk:
        raise ValueError("a chunk the worker cannot play")
    if -2 in chunk:
        os._exit(3)  # the worker dies without a word
    return [2 * x for x in chunk]


async def _collect(pool: WorkerPool, chunks: list[list[int]]) -> list[tuple[Any, Any]]:
    return [item async for item in pool.imap_unordered(chunks)]


def test_worker_processes_answer_every_chunk_and_report_failures() -> None:
    pool = WorkerPool(2, _double)
    try:
        chunks = [[i, i + 1] for i in range(0, 40, 2)]
        got = asyncio.run(_collect(pool, chunks))
        assert sorted(got) == sorted((c, [2 * x for x in c]) for c in chunks)
        # the pool serves the next batch too (the runner's next Swiss round)
        assert asyncio.run(_collect(pool, [[5]])) == [([5], [10])]
        with pytest.raises(WorkerError, match="ValueError: a chunk the worker cannot play"):
            asyncio.run(_collect(pool, [[1], [-1], [2]]))
    finally:
        pool.close()
    dying = WorkerPool(1, _double)
    try:
        with pytest.raises(WorkerError, match="died"):
            asyncio.run(_collect(dying, [[1], [-2], [3]]))
    finally:
        dying.close()


def test_answers_read_together_while_the_runner_was_busy_are_all_handed_over() -> None:
    # the consumer blocks its loop on every answer (as a runner writing a big chunk), so
    # both workers' next answers are read in one turn: none may be dropped
    pool = WorkerPool(2, _double)

    async def slow_consumer() -> list[Any]:
        got = []
        async for item in pool.imap_unordered([[i] for i in range(12)]):
            time.sleep(0.03)
            got.append(item)
        return got

    try:
        got = asyncio.run(slow_consumer())
    finally:
        pool.close()
    assert sorted(got) == [([i], [2 * i]) for i in range(12)]


def test_leaving_a_batch_early_closes_the_pool_and_its_processes() -> None:
    pool = WorkerPool(2, _double)

    async def first_only() -> None:
        async for _ in pool.imap_unordered([[i] for i in range(20)]):
            break

    asyncio.run(first_only())
    with pytest.raises(WorkerError, match="in flight"):
        asyncio.run(_collect(pool, [[1]]))
    procs = list(pool._procs)
    pool.close()
    assert all(not p.is_alive() for p in procs)


def test_units_played_in_bulk_are_the_planned_games() -> None:
    config = _config("none", "random", "greedy")
    [group, *_] = Planner(config).next_batch({})
    text, kept = play_units([unit(group, [1])], config, config.participants)
    assert [k["tournament"]["id"] for k in kept] == [group.ids()[1]] == [f"{group.key}.1"]
    assert text.endswith("\n") and text.count("\n") == 1
    assert set(kept[0]) == {"players", "result", "tournament"}


def _line(seats: tuple[int, ...], winner: int | None, order: tuple[int, ...] = ()) -> dict:
    return {
        "players": [f"p{s}" for s in seats],
        "result": {"winner": winner, "order": list(order)},
        "tournament": {"seats": list(seats)},
    }


def test_standings_kept_group_by_group() -> None:
    names = ["a", "b", "c"]
    groups = [
        [_line((0, 1), 0), _line((1, 0), 1)],  # a wins both: a WW, b LL
        [_line((0, 1), None), _line((1, 0), 0)],  # a draw and b's win: a LD, b WD
        [_line((1, 2), 1), _line((2, 1), None)],  # c wins one, draws one: c WD, b LD
    ]
    tally = Tally(names)
    for group in groups:
        tally.add(group)
    rows = {r.name: r for r in tally.standings().rows}
    assert (rows["a"].games, rows["a"].points, rows["a"].penta) == (4, 2.5, [0, 1, 0, 0, 1])
    assert (rows["b"].wins, rows["b"].draws, rows["b"].losses) == (1, 2, 3)
    assert rows["b"].points == 2.0 and rows["b"].penta == [1, 1, 0, 1, 0]
    assert rows["c"].points == 1.5 and rows["c"].penta == [0, 0, 0, 1, 0]
    assert tally.standings().cross[0][1] == [2.5, 4] and tally.standings().cross[2][1] == [1.5, 2]
    # a table taken earlier does not move when more groups come
    early = Tally(names)
    early.add(groups[0])
    before = early.standings()
    early.add(groups[1])
    assert before.rows[0].games == 2 and early.standings().rows[0].games == 4
    # three-player games go through the general rules: places, duels, no pairs
    big = [_line((0, 1, 2), 2, (2, 0, 1)), _line((1, 2, 0), 0, (0, 2, 1))]
    table = compute(names, [big])
    by = {r.name: r for r in table.rows}
    # game 1: c first, a second, b last; game 2 (b, c, a seated): b first, a second, c last
    assert [by[n].points for n in names] == [0.5 + 0.5, 0.0 + 1.0, 1.0 + 0.0]
    assert (by["b"].wins, by["b"].losses, by["a"].wins, by["a"].losses) == (2, 2, 2, 2)
    assert all(sum(r.penta) == 0 for r in table.rows)
