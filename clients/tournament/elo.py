"""Elo from match results: pentanomial (game pairs) and trinomial (single games).

The definitions are fastchess's (``matchmaking/elo``): the score's 95% interval
is the normal approximation of its standard error (over pairs for the
pentanomial model, games for the trinomial one), turned into Elo through the
logistic curve; normalized Elo (nElo) divides the score's distance from 1/2 by
its standard deviation, so it measures how easily two players are told apart;
LOS is the probability that the first is the stronger one. Pairs are the
independent samples when every deal is played with both seat assignments: a
deal that favours one seat then cancels out inside the pair.

A pentanomial count is ``(LL, LD, DD, WD, WW)``: pairs scoring 0, 1/2, 1, 3/2
and 2 points (``DD`` counts both two draws and a win plus a loss).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: the two-sided 95% quantile of the standard normal distribution
CI95_Z = 1.959963984540054
#: Elo per unit of normalized score distance (800 / ln 10)
NELO_SCALE = 800 / math.log(10)
PENTA_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
TRI_SCORES = (0.0, 0.5, 1.0)


class StatsError(ValueError):
    """Counts that give no statistic (negative, or none at all)."""

    code = "bad_stats"


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """What a result table says; a value that does not exist (a perfect score's Elo,
    nElo without variance) is ``None``."""

    score: float
    elo: float | None
    elo_error: float | None
    nelo: float | None
    nelo_error: float | None
    los: float | None
    draw_ratio: float
    samples: int

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            "score": self.score,
            "elo": self.elo,
            "elo_error": self.elo_error,
            "nelo": self.nelo,
            "nelo_error": self.nelo_error,
            "los": self.los,
            "draw_ratio": self.draw_ratio,
            "samples": self.samples,
        }


def score_to_elo(score: float) -> float | None:
    """The logistic Elo difference that expects ``score``; None outside (0, 1)."""
    if not 0 < score < 1:
        return None
    return -400 * math.log10(1 / score - 1)


def elo_to_score(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _estimate(
    counts: tuple[int, ...], scores: tuple[float, ...], draw_ratio: float, nelo_factor: float
) -> EloEstimate:
    if any(c < 0 for c in counts):
        raise StatsError("counts cannot be negative")
    n = sum(counts)
    if n == 0:
        raise StatsError("no results to estimate from")
    probs = [c / n for c in counts]
    mu = sum(p * s for p, s in zip(probs, scores, strict=True))
    var = sum(p * (s - mu) ** 2 for p, s in zip(probs, scores, strict=True))
    half = CI95_Z * math.sqrt(var / n)
    lo, hi = score_to_elo(mu - half), score_to_elo(mu + half)
    elo = score_to_elo(mu)
    error = None if lo is None or hi is None else (hi - lo) / 2
    if var > 0:
        sd = math.sqrt(nelo_factor * var)
        nelo = (mu - 0.5) / sd * NELO_SCALE
        nelo_error = half / sd * NELO_SCALE
        los = (1 - math.erf(-(mu - 0.5) / math.sqrt(2 * var / n))) / 2
    else:
        nelo = nelo_error = None
        los = 0.5 if mu == 0.5 else float(mu > 0.5)
    return EloEstimate(
        score=mu,
        elo=_finite(elo),
        elo_error=_finite(error),
        nelo=_finite(nelo),
        nelo_error=_finite(nelo_error),
        los=los,
        draw_ratio=draw_ratio,
        samples=n,
    )


def pentanomial(penta: tuple[int, int, int, int, int]) -> EloEstimate:
    """Estimate from pair counts ``(LL, LD, DD, WD, WW)``; draw ratio = DD / pairs."""
    if len(penta) != 5:
        raise StatsError("a pentanomial count has five numbers: LL,LD,DD,WD,WW")
    total = sum(penta)
    return _estimate(tuple(penta), PENTA_SCORES, penta[2] / total if total else 0.0, 2.0)


def trinomial(tri: tuple[int, int, int]) -> EloEstimate:
    """Estimate from game counts ``(L, D, W)`` (games treated as independent)."""
    if len(tri) != 3:
        raise StatsError("a trinomial count has three numbers: L,D,W")
    total = sum(tri)
    return _estimate(tuple(tri), TRI_SCORES, tri[1] / total if total else 0.0, 1.0)


def pair_bucket(points: float) -> int:
    """The pentanomial index (0 = LL ... 4 = WW) of a pair that scored ``points`` (0..2)."""
    index = round(points * 2)
    if not 0 <= index <= 4 or abs(points * 2 - index) > 1e-9:
        raise StatsError(f"a pair scores 0, 0.5, 1, 1.5 or 2 points, not {points}")
    return index
