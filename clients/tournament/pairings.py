"""Who meets whom: the tournament formats, as pure functions of the results so far.

An *encounter* is a tuple of participant indices (two for two-player games,
three or four for Big Board); every deal of an encounter is played once per
seat permutation (:func:`seat_orders`), so a seat's advantage is shared out.
Round robin and gauntlet are fixed in advance (one round per cycle); Swiss and
knockout pair each round from the standings of the rounds before, so they are
asked round by round. Everything is deterministic: ties go to the participant
listed first (the higher seed).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

FORMATS = ("round-robin", "gauntlet", "swiss", "knockout")

Encounter = tuple[int, ...]


class PairingError(ValueError):
    """A format that cannot be played with these participants."""

    code = "bad_pairing"


def seat_orders(encounter: Encounter) -> list[Encounter]:
    """Every seat assignment of an encounter, the encounter's own order first."""
    return list(itertools.permutations(encounter))


def round_robin(n: int, seats: int = 2) -> list[Encounter]:
    """Every group of ``seats`` participants out of ``n``, once (one cycle)."""
    if n < seats:
        raise PairingError(f"a round robin of {seats}-player games needs {seats} participants")
    return list(itertools.combinations(range(n), seats))


def gauntlet(n: int, seats: int = 2, seeds: int = 1) -> list[Encounter]:
    """The first ``seeds`` participants each against every group of the others."""
    if not 1 <= seeds < n or n - seeds < seats - 1:
        raise PairingError("a gauntlet needs its seed(s) and enough opponents for a game")
    return [
        (s, *group)
        for s in range(seeds)
        for group in itertools.combinations(range(seeds, n), seats - 1)
    ]


def swiss_round(
    scores: Sequence[float], met: set[frozenset[int]], byes: set[int]
) -> tuple[list[Encounter], int | None]:
    """The next Swiss round of two-player encounters, and the participant with a bye.

    Players are ranked by ``scores`` (then by their index) and paired top down with
    the nearest player they have not met (backtracking when the rest cannot be
    paired); with an odd number, the lowest-ranked player who had no bye yet sits out.
    Rematches happen only when no pairing without one exists.
    """
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    bye = None
    if len(order) % 2:
        bye = next((i for i in reversed(order) if i not in byes), order[-1])
        order.remove(bye)
    for allow_rematch in (False, True):
        pairs = _pair(order, met, allow_rematch)
        if pairs is not None:
            return pairs, bye
    raise AssertionError("pairing with rematches allowed always succeeds")  # pragma: no cover


def _pair(
    order: list[int], met: set[frozenset[int]], allow_rematch: bool
) -> list[Encounter] | None:
    if not order:
        return []
    first, rest = order[0], order[1:]
    for k, other in enumerate(rest):
        if not allow_rematch and frozenset((first, other)) in met:
            continue
        tail = _pair(rest[:k] + rest[k + 1 :], met, allow_rematch)
        if tail is not None:
            return [(first, other), *tail]
    return None


def knockout_first_round(n: int) -> list[Encounter | tuple[int]]:
    """The bracket's first round: seed 1 against the lowest seed and so on; with ``n``
    not a power of two the top seeds get byes (an encounter of one)."""
    if n < 2:
        raise PairingError("a knockout needs two participants")
    size = 1 << (n - 1).bit_length()
    slots = _bracket(size)
    out: list[Encounter | tuple[int]] = []
    for a, b in _pairs_of(slots):
        out.append((a,) if b >= n else (b,) if a >= n else (a, b))
    return out


def knockout_next_round(winners: Sequence[int]) -> list[Encounter]:
    """Winners of adjacent encounters meet (the bracket keeps its shape)."""
    return [(winners[i], winners[i + 1]) for i in range(0, len(winners) - 1, 2)]


def _bracket(size: int) -> list[int]:
    """Seed order of a standard bracket: 0 meets size-1, and the top two meet last."""
    slots = [0]
    while len(slots) < size:
        m = 2 * len(slots)
        slots = [x for s in slots for x in (s, m - 1 - s)]
    return slots


def _pairs_of(items: list[int]) -> list[tuple[int, int]]:
    return [(items[i], items[i + 1]) for i in range(0, len(items), 2)]
