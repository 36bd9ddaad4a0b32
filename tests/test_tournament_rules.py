"""The server's tournament logic without a server: pairings (server.tournaments.pairing),
a document moving on (server.tournaments.rules) and its table (server.tournaments.table)."""

from __future__ import annotations

import copy
import itertools
from collections import Counter
from typing import Any

import pytest

from server.tournaments import pairing, rules, table


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("cycles", [1, 2])
def test_round_robin_pairs_everyone_once_per_cycle(n: int, cycles: int) -> None:
    players = [f"p{i}" for i in range(n)]
    rounds = pairing.round_robin(players, cycles)
    assert len(rounds) == cycles * (n - 1 if n % 2 == 0 else n)
    for rnd in rounds:
        seen = [p for pair in rnd for p in pair]
        assert len(seen) == len(set(seen)), "nobody plays twice in a round"
    met = Counter(frozenset(p) for rnd in rounds for p in rnd)
    assert set(met) == {frozenset(c) for c in itertools.combinations(players, 2)}
    assert set(met.values()) == {cycles}
    if cycles == 2:  # the second cycle swaps the seats of the first
        half = len(rounds) // 2
        first = [p for rnd in rounds[:half] for p in rnd]
        second = [p for rnd in rounds[half:] for p in rnd]
        assert [(b, a) for a, b in first] == second
    starts = Counter(a for rnd in rounds for a, _ in rnd)
    assert max(starts.values()) - min(starts.get(p, 0) for p in players) <= 1, "seats balanced"


def test_swiss_avoids_rematches_and_gives_the_bye_to_the_lowest_without_one() -> None:
    players = ["a", "b", "c", "d", "e"]
    points = {"a": 2.0, "b": 2.0, "c": 1.0, "d": 0.0, "e": 0.0}
    met = {frozenset(("a", "b")), frozenset(("c", "d"))}
    pairs, bye = pairing.swiss(players, points, met, had_bye={"e"})
    assert bye == "d"  # e, lowest too, had one
    assert all(frozenset(p) not in met for p in pairs)
    assert {frozenset(p) for p in pairs} == {frozenset(("a", "c")), frozenset(("b", "e"))}


def test_swiss_pairs_a_rematch_only_when_nothing_else_is_left() -> None:
    pairs, bye = pairing.swiss(["a", "b"], {}, {frozenset(("a", "b"))})
    assert bye is None and [frozenset(p) for p in pairs] == [frozenset(("a", "b"))]


def test_swiss_goes_back_on_a_choice_that_would_force_a_rematch_below() -> None:
    # greedily a-b, then c and d (who have met) would be left to each other
    points = {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0}
    pairs, bye = pairing.swiss(["a", "b", "c", "d"], points, {frozenset(("c", "d"))})
    assert bye is None
    assert {frozenset(p) for p in pairs} == {frozenset(("a", "c")), frozenset(("b", "d"))}
    # twice over in a field of eight: p0-p1 and p4-p5 lead nowhere
    names = [f"p{i}" for i in range(8)]
    wanted = {frozenset(p) for p in (("p0", "p2"), ("p1", "p3"), ("p4", "p6"), ("p5", "p7"))}
    allowed = wanted | {frozenset(("p0", "p1")), frozenset(("p4", "p5"))}
    met = {frozenset(p) for p in itertools.combinations(names, 2)} - allowed
    pairs, _ = pairing.swiss(names, {}, met)
    assert {frozenset(p) for p in pairs} == wanted
    # nothing without a rematch: the closest are paired as before
    everyone = {frozenset(p) for p in itertools.combinations("abcd", 2)}
    pairs, _ = pairing.swiss(["a", "b", "c", "d"], points, everyone)
    assert [frozenset(p) for p in pairs] == [frozenset(("a", "b")), frozenset(("c", "d"))]


def test_arena_pairs_close_points_and_never_the_last_opponent_again() -> None:
    points = {"a": 3.0, "b": 2.0, "c": 0.0, "d": 0.0}
    pairs = pairing.arena(["a", "b", "c", "d"], points, {"a": "b", "b": "a"})
    assert {frozenset(p) for p in pairs} == {frozenset(("a", "c")), frozenset(("b", "d"))}
    assert pairing.arena(["a", "b"], {}, {"a": "b", "b": "a"}) == []


def doc(fmt: str, names: list[str], **settings: Any) -> dict[str, Any]:
    return {
        "id": "t1",
        "settings": {"format": fmt, "min_players": 2, **settings},
        "status": "open",
        "round": 0,
        "entrants": {n: {"session": n} for n in names},
        "games": [],
        "pending": [],
    }


def play_pending(d: dict[str, Any], winner: int | None = 0) -> None:
    """Every pending pairing gets a room and ends with ``winner``."""
    for i, p in enumerate(list(d["pending"])):
        room = f"r{len(d['games'])}-{i}"
        rules.opened(d, p, room)
        rules.score(d, room, f"{room}-1", {"winner": winner, "reason": "no_moves"})


def test_a_round_robin_document_runs_to_the_end_with_a_forfeit() -> None:
    d = doc("round_robin", ["a", "b", "c", "d"], rounds=1)
    rules.start(d, now=0)
    assert d["status"] == "running" and len(d["schedule"]) == 3
    rules.advance(d, 1)
    assert d["round"] == 1 and len(d["pending"]) == 2
    play_pending(d)
    rules.advance(d, 2)
    assert d["round"] == 2
    d["entrants"]["d"]["withdrawn"] = True  # d's remaining games are lost by forfeit
    rules.advance(d, 3)
    forfeits = [g for g in d["games"] if g["reason"] == "forfeit"]
    assert len(forfeits) == 1 and len(d["pending"]) == 1
    (f,) = forfeits
    assert f["points"][f["players"].index("d")] == 0.0
    play_pending(d, winner=None)
    rules.advance(d, 4)
    assert d["round"] == 3
    play_pending(d)
    rules.advance(d, 5)
    rules.advance(d, 6)
    assert d["status"] == "finished" and not d.get("cancelled")
    rows = table.rows(d)
    assert sum(r.points for r in rows) == 6.0  # six pairings, one point each
    assert all(r.games == 3 for r in rows)
    assert [r.withdrawn for r in rows if r.name == "d"] == [True]


def test_an_aborted_game_is_played_again_at_most_three_times() -> None:
    d = doc("swiss", ["a", "b"], rounds=1)
    d["present"] = ["a", "b"]
    rules.start(d, 0)
    rules.advance(d, 1)
    for tries in range(3):
        (p,) = d["pending"]
        assert p["aborts"] == tries
        room = f"r{tries}"
        rules.opened(d, p, room)
        rules.score(d, room, None, None if tries == 1 else {"winner": None, "reason": "aborted"})
    assert d["pending"] == []
    rules.advance(d, 2)
    assert d["status"] == "finished"
    assert all(r.points == 0 and r.games == 0 for r in table.rows(d))


def test_too_few_entrants_at_the_start_cancel_and_a_cancel_waits_for_running_games() -> None:
    lone = doc("arena", ["a"], duration_ms=1000)
    rules.start(lone, 0)
    assert lone["status"] == "finished" and lone["cancelled"]
    d = doc("arena", ["a", "b", "c"], duration_ms=1000)
    d["present"] = ["a", "b", "c"]
    rules.start(d, 0)
    rules.advance(d, 10)
    (p,) = d["pending"]
    rules.opened(d, p, "r1")
    d["cancel"] = True
    rules.advance(d, 20)
    assert d["status"] == "running", "the running game is played out"
    rules.score(d, "r1", "r1-1", {"winner": 1, "reason": "no_moves"})
    rules.advance(d, 30)
    assert d["status"] == "finished" and d["cancelled"]
    assert [r.points for r in table.rows(d)] == [1.0, 0.0, 0.0]


def test_one_director_at_a_time_opens_a_pairing_and_a_dead_ones_claim_lapses() -> None:
    d = doc("round_robin", ["a", "b"], rounds=1)
    rules.start(d, 0)
    rules.advance(d, 1)
    (p,) = d["pending"]
    rules.claim(d, p, "node-a:1", now=100, ttl_ms=5000)
    rules.claim(d, p, "node-b:1", now=200, ttl_ms=5000)  # a lapsed lease: a second director
    assert rules.claimed(d, "node-b:1") is None
    mine = copy.deepcopy(rules.claimed(d, "node-a:1"))  # (a director holds its own copy)
    assert mine is not None
    rules.claim(d, p, "node-b:2", now=5200, ttl_ms=5000)  # node-a died meanwhile
    theirs = rules.claimed(d, "node-b:2")
    assert theirs is not None and rules.claimed(d, "node-a:1") is None
    rules.opened(d, mine, "r-late")  # node-a's room, too late: not a game of the tournament
    rules.opened(d, theirs, "r-b")
    assert [g["room"] for g in d["games"]] == ["r-b"] and d["pending"] == []
