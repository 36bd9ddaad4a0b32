"""Who plays whom: round robin (circle method), Swiss (by points, no rematches while
possible) and arena (whoever is free). Pure functions of names and points."""

from __future__ import annotations

from collections.abc import Sequence

Pair = tuple[str, str]


def round_robin(players: Sequence[str], cycles: int = 1) -> list[list[Pair]]:
    """The rounds of a round robin by the circle method (Berger tables): each player
    meets each other once per cycle, seats swapped in every other cycle; an odd field
    gets a rest each round (no pair for it)."""
    field: list[str | None] = list(players)
    if len(field) % 2:
        field.append(None)
    n = len(field)
    base: list[list[Pair]] = []
    order = field[:]
    for r in range(n - 1):
        pairs: list[Pair] = []
        for i in range(n // 2):
            a, b = order[i], order[n - 1 - i]
            if a is None or b is None:
                continue
            # the top row starts, but the fixed player's pair alternates (Berger tables)
            pairs.append((a, b) if i > 0 or r % 2 == 0 else (b, a))
        base.append(pairs)
        order = [order[0], order[-1], *order[1:-1]]
    rounds: list[list[Pair]] = []
    for c in range(cycles):
        for pairs in base:
            rounds.append([(b, a) for a, b in pairs] if c % 2 else list(pairs))
    return rounds


def swiss(
    players: Sequence[str],
    points: dict[str, float],
    met: set[frozenset[str]],
    had_bye: set[str] = frozenset(),  # type: ignore[assignment]
) -> tuple[list[Pair], str | None]:
    """One Swiss round: best against best, avoiding rematches while possible.

    ``players`` in entry order (the tie-break of equal points). In an odd field the
    lowest-ranked player who has had no bye yet sits out with a bye. Then, from the
    top, each player takes the closest-ranked opponent not met before, going back on
    an earlier choice when it would leave two who have met to play each other: a
    rematch only when no pairing of the field avoids one (then, as when the search runs
    past :data:`SWISS_SEARCH` steps, each takes the closest not met, or the closest).
    """
    ranked = sorted(players, key=lambda p: (-points.get(p, 0.0), players.index(p)))
    bye = None
    if len(ranked) % 2:
        bye = next((p for p in reversed(ranked) if p not in had_bye), ranked[-1])
        ranked.remove(bye)
    found = _without_rematch(ranked, met, [SWISS_SEARCH])
    if found is None:
        found = []
        free = ranked[:]
        while free:
            a = free.pop(0)
            pick = next((b for b in free if frozenset((a, b)) not in met), free[0])
            free.remove(pick)
            found.append((a, pick))
    return [(a, b) if i % 2 == 0 else (b, a) for i, (a, b) in enumerate(found)], bye


#: pairs tried at most in the search for a Swiss round without rematches
SWISS_SEARCH = 20_000


def _without_rematch(
    free: list[str], met: set[frozenset[str]], budget: list[int]
) -> list[Pair] | None:
    """Pairs of ``free`` (ranked) with no two who have met, closest first; None if there
    are none, or the search ran out of ``budget`` (a one-item list, counted down)."""
    if not free:
        return []
    a, rest = free[0], free[1:]
    for k, b in enumerate(rest):
        if frozenset((a, b)) in met:
            continue
        budget[0] -= 1
        if budget[0] < 0:
            return None
        tail = _without_rematch(rest[:k] + rest[k + 1 :], met, budget)
        if tail is not None:
            return [(a, b), *tail]
    return None


def arena(free: Sequence[str], points: dict[str, float], last: dict[str, str]) -> list[Pair]:
    """Pair the free players of an arena: closest in points first, never the same
    opponent twice in a row (``last``: each player's previous opponent); a player
    left without a partner waits for the next free one."""
    ranked = sorted(free, key=lambda p: (-points.get(p, 0.0), free.index(p)))
    pairs: list[Pair] = []
    while len(ranked) >= 2:
        a = ranked.pop(0)
        pick = next((b for b in ranked if last.get(a) != b and last.get(b) != a), None)
        if pick is None:
            continue  # only its last opponent is free: a waits
        ranked.remove(pick)
        pairs.append((a, pick) if len(pairs) % 2 == 0 else (pick, a))
    return pairs
