"""The sequential probability ratio test, as fastchess and fishtest define it.

H0: the Elo difference is ``elo0``; H1: it is ``elo1``. After every result the
generalized log-likelihood ratio (LLR) of the observed counts is compared with
Wald's bounds ``ln(beta / (1 - alpha))`` and ``ln((1 - beta) / alpha)``: below
the lower one H0 is accepted, above the upper one H1, else play on.

The LLR is the one of M. Van den Bergh's notes: for each hypothesis the
maximum-likelihood distribution over the outcomes (pair scores 0, 1/4, ..., 1
for the pentanomial model, 0, 1/2, 1 for the trinomial one) that has the
hypothesis's expected score (``logistic``: Elo on the logistic curve) or
normalized score distance (``normalized``: nElo), and the LLR is the number
of samples times the mean log-ratio of the two under the empirical
distribution. Empty outcome classes count 1/1000 (fastchess's regularization),
so early results do not divide by zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clients.tournament.elo import NELO_SCALE, PENTA_SCORES, TRI_SCORES, StatsError, elo_to_score

MODELS = ("logistic", "normalized")


@dataclass(frozen=True, slots=True)
class Sprt:
    """One test's settings; :meth:`parse` reads ``elo0=0,elo1=10,alpha=0.05,beta=0.05``."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "logistic"

    def __post_init__(self) -> None:
        if self.elo0 >= self.elo1:
            raise StatsError("SPRT: elo0 must be less than elo1")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise StatsError("SPRT: alpha and beta lie in (0, 1) and sum to less than 1")
        if self.model not in MODELS:
            raise StatsError(f"SPRT: model is one of {', '.join(MODELS)}, not {self.model!r}")

    @classmethod
    def parse(cls, text: str) -> Sprt:
        """Comma- or space-separated ``key=value`` pairs; missing keys keep their defaults."""
        values: dict[str, float | str] = {}
        for item in text.replace(",", " ").split():
            key, sep, value = item.partition("=")
            if not sep or key not in ("elo0", "elo1", "alpha", "beta", "model"):
                raise StatsError(f"SPRT: cannot read {item!r}: use elo0=,elo1=,alpha=,beta=,model=")
            if key == "model":
                values[key] = value
                continue
            try:
                values[key] = float(value)
            except ValueError:
                raise StatsError(f"SPRT: {key} is a number, not {value!r}") from None
        return cls(**values)  # type: ignore[arg-type]

    @property
    def lower_bound(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper_bound(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def llr_penta(self, penta: Sequence[int]) -> float:
        """LLR of pair counts ``(LL, LD, DD, WD, WW)``."""
        return self._llr(penta, PENTA_SCORES, math.sqrt(2.0))

    def llr_tri(self, tri: Sequence[int]) -> float:
        """LLR of game counts ``(L, D, W)``."""
        return self._llr(tri, TRI_SCORES, 1.0)

    def decision(self, llr: float) -> str:
        """``H0``, ``H1`` or ``continue``."""
        if llr >= self.upper_bound:
            return "H1"
        if llr <= self.lower_bound:
            return "H0"
        return "continue"

    def to_dict(self) -> dict[str, float | str]:
        return {
            "elo0": self.elo0,
            "elo1": self.elo1,
            "alpha": self.alpha,
            "beta": self.beta,
            "model": self.model,
        }

    def _llr(self, counts: Sequence[int], scores: Sequence[float], t_factor: float) -> float:
        if any(c < 0 for c in counts):
            raise StatsError("counts cannot be negative")
        regular = [c if c > 0 else 1e-3 for c in counts]
        total = sum(regular)
        probs = [c / total for c in regular]
        if self.model == "normalized":
            p0 = _mle_normalized(scores, probs, t_factor * self.elo0 / NELO_SCALE)
            p1 = _mle_normalized(scores, probs, t_factor * self.elo1 / NELO_SCALE)
        else:
            p0 = _mle_mean(scores, probs, elo_to_score(self.elo0))
            p1 = _mle_mean(scores, probs, elo_to_score(self.elo1))
        return total * sum(
            p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, p0, p1, strict=True)
        )


def _root(f: Callable[[float], float], lo: float, hi: float, eps: float) -> float:
    """A root of ``f`` between ``lo`` and ``hi`` (open ends, ``f`` decreasing), by bisection."""
    for _ in range(200):
        if hi - lo <= 2 * eps:
            break
        mid = (lo + hi) / 2
        value = f(mid)
        if value == 0:
            return mid
        if value > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _mle_mean(scores: Sequence[float], probs: Sequence[float], s: float) -> list[float]:
    """The distribution closest to ``probs`` (maximum likelihood) whose mean is ``s``."""

    def f(theta: float) -> float:
        return sum(p * (a - s) / (1 + theta * (a - s)) for a, p in zip(scores, probs, strict=True))

    theta = _root(f, -1 / (scores[-1] - s), -1 / (scores[0] - s), 1e-9)
    return [p / (1 + theta * (a - s)) for a, p in zip(scores, probs, strict=True)]


def _mle_normalized(scores: Sequence[float], probs: Sequence[float], t: float) -> list[float]:
    """The maximum-likelihood distribution with ``(mean - 1/2) / sd == t``, found by the
    fixed-point iteration of Van den Bergh's "Comments on normalized Elo" (section 4.1)."""
    p = [1 / len(scores)] * len(scores)
    for _ in range(20):
        mu = sum(a * q for a, q in zip(scores, p, strict=True))
        sigma = math.sqrt(sum(q * (a - mu) ** 2 for a, q in zip(scores, p, strict=True)))
        phi = [a - 0.5 - 0.5 * t * sigma * (1 + ((a - mu) / sigma) ** 2) for a in scores]
        u, v = min(phi), max(phi)

        def f(theta: float, phi: list[float] = phi) -> float:
            return sum(q * x / (1 + theta * x) for q, x in zip(probs, phi, strict=True))

        theta = _root(f, -1 / v, -1 / u, 1e-10)
        new = [q / (1 + theta * x) for q, x in zip(probs, phi, strict=True)]
        change = max(abs(a - b) for a, b in zip(new, p, strict=True))
        p = new
        if change < 1e-9:
            break
    return p
