"""Solo puzzles (ruling 7): solver, line counts, generator, ratings, `arena collapsi puzzle`."""

from __future__ import annotations

import json

import pytest
from arena_process import run_arena as arena

from engine.base import SetupError, new_game
from engine.collapsi import solo_count
from engine.collapsi.deck import SOLO_3X3, STANDARD_4X4, format_deal, shuffled
from engine.collapsi.solo import (
    DIFFICULTIES,
    THRESHOLDS,
    SoloBudgetExceeded,
    analyse,
    count,
    count_by_engine,
    generate,
    puzzle_game,
    rate,
    solve,
    solve_by_engine,
)

# -- an independent brute force, written from the rules text, not from the engine ----------


def _neighbours(cell: int, size: int) -> set[int]:
    r, q = divmod(cell, size)
    return {
        ((r - 1) % size) * size + q,
        ((r + 1) % size) * size + q,
        r * size + (q - 1) % size,
        r * size + (q + 1) % size,
    } - {cell}


def _brute_moves(cards, size, rules, collapsed, cell, exit_):
    """(destinations, reaches the exit): walks of exactly N steps that enter no card twice
    (the start counts as entered) and no collapsed card; the exit is a door that any walk
    of up to N steps may reach (landing or passing), and no other move may cross it."""
    v = cards[cell]
    lengths = {1, 2, 3, 4} if v == 0 and rules == "classic" else {v or 1}
    longest = max(lengths)
    dests: set[int] = set()
    door = False

    def walk(at, seen, steps):
        nonlocal door
        for nxt in _neighbours(at, size):
            if nxt in seen or nxt in collapsed:
                continue
            if nxt == exit_:
                door = True
                continue
            if steps + 1 in lengths:
                dests.add(nxt)
            if steps + 1 < longest:
                walk(nxt, seen | {nxt}, steps + 1)

    walk(cell, {cell}, 0)
    return dests, door


def brute_count(deal: str, rules: str) -> tuple[int, int, set[int]]:
    """(winning lines, all lines, winning first destinations) by plain recursion."""
    cards = [0 if ch == "J" else int(ch) for ch in deal]
    size = int(len(cards) ** 0.5)
    jacks = [i for i, v in enumerate(cards) if v == 0]
    start, exit_ = jacks[0], jacks[1]
    everything = set(range(size * size))

    def lines(collapsed: frozenset, cell: int) -> tuple[int, int]:
        dests, door = _brute_moves(cards, size, rules, collapsed, cell, exit_)
        after = collapsed | {cell}
        wins = total = 0
        if door:
            total += 1
            wins += after | {exit_} == everything
        for d in dests:
            w, t = lines(after, d)
            wins += w
            total += t
        return (wins, total) if total else (0, 1)

    firsts = set()
    dests, door = _brute_moves(cards, size, rules, frozenset(), start, exit_)
    if door and len(everything) == 2:  # pragma: no cover - no such board
        firsts.add(exit_)
    for d in dests:
        if lines(frozenset({start}), d)[0]:
            firsts.add(d)
    return (*lines(frozenset(), start), firsts)


def _deals(size: int, n: int) -> list[str]:
    deck = SOLO_3X3 if size == 3 else STANDARD_4X4
    return [format_deal(shuffled(deck, f"test-solo/{size}/{i}"), size, size) for i in range(n)]


@pytest.mark.parametrize("rules", ["standard", "classic"])
def test_counts_and_solutions_match_an_independent_brute_force(rules):
    solvable = unsolvable = 0
    # seeds chosen so both kinds of 3x3 deal appear (about 3% are unsolvable)
    for deal in _deals(3, 60):
        game = puzzle_game(deal, 3, rules)
        wins, total, firsts = brute_count(deal, rules)
        assert count(game) == (wins, total), deal
        stats = analyse(game)
        assert {int(m) for m in stats.winning_first_moves} == firsts, deal
        line = solve(game)
        if wins:
            solvable += 1
            assert line is not None
            replay = puzzle_game(deal, 3, rules)
            for move in line:
                replay.play(move)
            assert replay.result().reason == "solved"
        else:
            unsolvable += 1
            assert line is None
    assert solvable and unsolvable


def test_fast_search_agrees_with_the_engine_driven_search():
    for rules in ("standard", "classic"):
        for deal in _deals(3, 15):
            game = puzzle_game(deal, 3, rules)
            assert count(game) == count_by_engine(game) == solo_count(game)
            assert (solve(game) is None) == (solve_by_engine(game) is None)
    # midgame positions of a 4x4 puzzle
    game = puzzle_game(generate(4, "hard", 0).deal, 4)
    for move in solve(game)[:6]:
        game.play(move)
        assert count(game) == count_by_engine(game)


def test_generated_3x3_puzzles_are_solvable_rated_and_reproducible():
    shares = {}
    for difficulty in DIFFICULTIES:
        for seed in range(6):
            puzzle = generate(3, difficulty, seed)
            assert puzzle == generate(3, difficulty, seed)
            assert puzzle.difficulty == difficulty
            game = puzzle.game()
            stats = analyse(game)
            assert stats == puzzle.analysis and stats.solvable
            assert rate(stats, 3) == difficulty
            for move in puzzle.solution:
                game.play(move)
            assert game.result().reason == "solved"
            shares.setdefault(difficulty, []).append(stats.share)
        assert len({generate(3, difficulty, s).deal for s in range(6)}) > 1
    easy_min, hard_max = THRESHOLDS[(3, "standard")]
    assert min(shares["easy"]) >= easy_min > max(shares["medium"])
    assert min(shares["medium"]) >= hard_max > max(shares["hard"])


def test_generated_4x4_and_classic_puzzles_replay_to_a_win():
    for size, rules, difficulty in [(4, "standard", "easy"), (4, "standard", "hard")]:
        puzzle = generate(size, difficulty, 3, rules=rules)
        game = puzzle.game()
        for move in puzzle.solution:
            game.play(move)
        assert game.result().reason == "solved"
        assert len(puzzle.solution) == size * size - 1
    puzzle = generate(3, "medium", 1, rules="classic")
    game = puzzle.game()
    for move in puzzle.solution:
        game.play(move)
    assert game.result().reason == "solved"


def test_bad_requests_are_setup_errors():
    with pytest.raises(SetupError):
        generate(5, "easy", 0)
    with pytest.raises(SetupError):
        generate(3, "impossible", 0)
    with pytest.raises(SetupError):
        solve(new_game("collapsi", seed=1))  # type: ignore[arg-type]


def test_puzzle_command_prints_a_puzzle_and_a_winning_line():
    out = arena("collapsi", "puzzle", "--size", "3", "--difficulty", "hard", "--seed", "4")
    assert out.returncode == 0, out.stderr
    puzzle = generate(3, "hard", 4)
    assert f"deal: {puzzle.deal}" in out.stdout
    assert "difficulty hard" in out.stdout and "E" in out.stdout
    assert "solution" not in out.stdout
    out = arena(
        "collapsi", "puzzle", "--size", "3", "--difficulty", "hard", "--seed", "4", "--solution"
    )
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip().splitlines()[-1]
    assert line == "solution: " + ", ".join(puzzle.solution)
    out = arena("collapsi", "puzzle", "--size", "3", "--seed", "4", "--solution", "--json")
    data = json.loads(out.stdout)
    assert data["difficulty"] == "medium" and data["deal"] == generate(3, "medium", 4).deal
    game = puzzle_game(data["deal"], 3)
    for move in data["solution"]:
        game.play(move)
    assert game.result().reason == "solved"
    bad = arena("collapsi", "puzzle", "--size", "5")
    assert bad.returncode == 2


def test_solve_stops_at_a_passed_deadline():
    game = puzzle_game(generate(4, "easy", 0).deal, 4)
    with pytest.raises(SoloBudgetExceeded):
        solve(game, deadline=0.0)
    assert solve(game) is not None
