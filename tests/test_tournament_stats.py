"""Tournament statistics (clients/tournament/elo.py, sprt.py) and pairings, by hand and
against fastchess's published test cases (app/tests/elo_test.cpp, sprt_test.cpp), and
``arena tournament stats`` as a user runs it."""

from __future__ import annotations

import json
import math

import pytest
from arena_process import run_arena

from clients.tournament import pairings
from clients.tournament.elo import StatsError, pentanomial, trinomial
from clients.tournament.sprt import Sprt


def _elo(score: float) -> float:
    return -400 * math.log10(1 / score - 1)


def test_pentanomial_by_hand() -> None:
    # pairs LL, LD, DD, WD, WW = 1, 1, 2, 3, 3 (10 pairs) -> pair scores 0, .25, .5, .75, 1
    est = pentanomial((1, 1, 2, 3, 3))
    mu = (0 * 1 + 0.25 * 1 + 0.5 * 2 + 0.75 * 3 + 1 * 3) / 10  # 0.65
    var = (
        1 * (0 - mu) ** 2 + 1 * (0.25 - mu) ** 2 + 2 * (0.5 - mu) ** 2
        + 3 * (0.75 - mu) ** 2 + 3 * (1 - mu) ** 2
    ) / 10  # fmt: skip
    half = 1.959963984540054 * math.sqrt(var / 10)
    assert est.score == pytest.approx(0.65)
    assert est.elo == pytest.approx(_elo(0.65))
    assert est.elo_error == pytest.approx((_elo(mu + half) - _elo(mu - half)) / 2)
    assert est.nelo == pytest.approx((mu - 0.5) / math.sqrt(2 * var) * 800 / math.log(10))
    assert est.nelo_error == pytest.approx(half / math.sqrt(2 * var) * 800 / math.log(10))
    assert est.los == pytest.approx((1 - math.erf(-(mu - 0.5) / math.sqrt(2 * var / 10))) / 2)
    assert est.draw_ratio == pytest.approx(0.2)


def test_even_and_degenerate_results() -> None:
    even = pentanomial((1, 0, 2, 0, 1))
    assert even.elo == pytest.approx(0.0) and even.los == pytest.approx(0.5)
    assert even.nelo == pytest.approx(0.0)
    perfect = pentanomial((0, 0, 0, 0, 7))  # a perfect score has no finite Elo
    assert perfect.elo is None and perfect.nelo is None and perfect.los == 1.0
    tri = trinomial((2, 2, 6))  # L, D, W
    assert tri.score == pytest.approx(0.7) and tri.draw_ratio == pytest.approx(0.2)
    with pytest.raises(StatsError):
        pentanomial((0, 0, 0, 0, 0))
    with pytest.raises(StatsError):
        trinomial((1, -1, 2))


# fastchess Stats(ll, ld, wl, dd, wd, ww) -> our (LL, LD, WL + DD, WD, WW)
@pytest.mark.parametrize(
    ("penta", "elo", "error", "nelo", "nerror", "los"),
    [
        ((34, 54, 31 + 32, 64, 75), 55.58, 27.65, 57.94, 28.28, 1.0000),
        ((332, 433, 457 + 41, 333, 334), -8.64, 10.33, -9.17, 10.96, 0.0505),
        ((7895, 8757, 5485 + 200, 568, 9999), -21.04, 2.95, -19.01, 2.65, 0.0),
    ],
)
def test_pentanomial_matches_fastchess(penta, elo, error, nelo, nerror, los) -> None:
    est = pentanomial(penta)
    assert est.elo == pytest.approx(elo, rel=0.01)
    assert est.elo_error == pytest.approx(error, rel=0.01)
    assert est.nelo == pytest.approx(nelo, rel=0.01)
    assert est.nelo_error == pytest.approx(nerror, rel=0.01)
    assert est.los == pytest.approx(los, abs=0.0001)


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1", "model", "llr"),
    [  # fastchess's sprt_test.cpp: Stats(wins, losses, draws) -> (L, D, W)
        ((36027, 68692, 36433), 0, 2, "normalized", 0.92),
        ((10650, 20431, 10871), -1.75, 0.25, "normalized", 2.30),
        ((0, 0, 4250), 0, 10, "normalized", 120.56),
        ((21184, 40708, 21404), 0.5, 2.5, "logistic", -1.57),
        ((57030, 106593, 57433), 0, 2, "logistic", -2.59),
        ((365, 16618, 36229, 16974, 390), 0, 2, "normalized", 2.25),
        ((127, 4883, 10712, 5150, 104), -1.75, 0.25, "normalized", 3.01),
        ((0, 0, 0, 0, 5550), 0, 5, "normalized", 111.82),
        ((223, 9863, 21279, 10037, 246), 0.5, 2.5, "logistic", -3.07),
        ((871, 26175, 55983, 26678, 821), 0, 2, "logistic", -4.98),
    ],
)
def test_sprt_llr_matches_fastchess(counts, elo0, elo1, model, llr) -> None:
    sprt = Sprt(elo0, elo1, 0.05, 0.05, model)
    got = sprt.llr_tri(counts) if len(counts) == 3 else sprt.llr_penta(counts)
    assert got == pytest.approx(llr, rel=0.01, abs=0.01)


def test_sprt_bounds_and_decisions() -> None:
    sprt = Sprt.parse("elo0=0,elo1=10,alpha=0.05,beta=0.05")
    assert sprt.lower_bound == pytest.approx(math.log(0.05 / 0.95))
    assert sprt.upper_bound == pytest.approx(math.log(0.95 / 0.05))
    assert sprt.decision(sprt.llr_penta((0, 0, 0, 0, 150))) == "H1"
    assert sprt.decision(sprt.llr_penta((150, 0, 0, 0, 0))) == "H0"
    assert sprt.decision(sprt.llr_penta((1, 1, 2, 1, 1))) == "continue"
    for bad in ("elo0=10,elo1=0", "alpha=0.6,beta=0.5", "model=bayes", "elo0=x", "gamma=1"):
        with pytest.raises(StatsError):
            Sprt.parse(bad)


def test_pairings() -> None:
    assert len(pairings.round_robin(5)) == 10
    assert len(pairings.round_robin(4, seats=3)) == 4
    assert pairings.gauntlet(4) == [(0, 1), (0, 2), (0, 3)]
    assert len(pairings.seat_orders((0, 1, 2, 3))) == 24
    assert pairings.knockout_first_round(6) == [(0,), (3, 4), (1,), (2, 5)]
    # Swiss: the leaders meet unless they met; the bye goes to the last without one
    pairs, bye = pairings.swiss_round([2, 2, 1, 1, 0], {frozenset((0, 1))}, {4})
    assert bye == 3 and {frozenset(p) for p in pairs} == {frozenset((0, 2)), frozenset((1, 4))}
    with pytest.raises(pairings.PairingError):
        pairings.gauntlet(1)


def test_stats_command_json() -> None:
    proc = run_arena(
        "tournament", "stats", "--penta", "1,1,2,3,3", "--sprt",
        "elo0=0,elo1=10,alpha=0.05,beta=0.05,model=normalized", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    est = pentanomial((1, 1, 2, 3, 3))
    for key in ("elo", "elo_error", "nelo", "nelo_error", "los", "draw_ratio"):
        assert out[key] == pytest.approx(getattr(est, key))
    sprt = Sprt(0, 10, 0.05, 0.05, "normalized")
    assert out["llr"] == pytest.approx(sprt.llr_penta((1, 1, 2, 3, 3)))
    assert (out["lower_bound"], out["upper_bound"]) == pytest.approx((-2.944, 2.944), abs=1e-3)
    assert out["decision"] == "continue"
    tri_args = ["--tri", "0,0,300", "--sprt", "elo0=0,elo1=10", "--json"]
    tri = json.loads(run_arena("tournament", "stats", *tri_args).stdout)
    assert tri["decision"] == "H1" and tri["elo"] is None and tri["draw_ratio"] == 0
    bad = run_arena("tournament", "stats", "--penta", "1,2,3")
    assert bad.returncode == 2 and "5 numbers" in bad.stderr and "Traceback" not in bad.stderr
