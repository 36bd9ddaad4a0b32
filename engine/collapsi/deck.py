"""Collapsi decks, named presets, seeded deals and the deal notation.

A deal is written one character per card, row-major, from ``J1234`` (J a jack
or joker, 1 an ace): 16 characters for 4x4, 36 for 6x6. Rows may be separated
by ``/`` (needed only for boards that are not square). The first J in
row-major order is the first seat's start card, the second J the second
seat's, and so on (rulings 4 and 7).

Decks are counts per card value (ruling 8), written in options as
``{"J": 2, "1": 4, "2": 4, "3": 4, "4": 2}`` (``"A"`` is accepted for 1).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass

from engine.base import NotationError, SetupError
from engine.collapsi.board import MAX_SIDE, MIN_SIDE
from engine.collapsi.position import JACK

CARD_CHARS = "J1234"
#: card character -> value; lower case is not a deal's: in a position it marks a collapsed card
_CHAR_VALUE = {"J": 0, "1": 1, "A": 1, "2": 2, "3": 3, "4": 4}


@dataclass(frozen=True, slots=True)
class Deck:
    """A deck as counts per card value, and the board it must fill."""

    width: int
    height: int
    counts: tuple[int, int, int, int, int]  # jacks, aces, 2s, 3s, 4s

    @property
    def size(self) -> int:
        return sum(self.counts)

    @property
    def jacks(self) -> int:
        return self.counts[JACK]

    def cards(self) -> list[int]:
        return [v for v, n in enumerate(self.counts) for _ in range(n)]

    def to_dict(self) -> dict[str, int]:
        return {CARD_CHARS[v]: n for v, n in enumerate(self.counts)}

    def check(self) -> Deck:
        if not (MIN_SIDE <= self.width <= MAX_SIDE and MIN_SIDE <= self.height <= MAX_SIDE):
            raise SetupError(
                f"board {self.width}x{self.height} is out of range (sides {MIN_SIDE}..{MAX_SIDE})"
            )
        if any(n < 0 for n in self.counts):
            raise SetupError("deck counts must not be negative")
        if self.size != self.width * self.height:
            # ruling 8: a deck that does not fill the board exactly is rejected
            raise SetupError(
                f"deck has {self.size} cards but a {self.width}x{self.height} board "
                f"needs {self.width * self.height} ({self.to_dict()})"
            )
        return self


def deck_from_counts(width: int, height: int, counts: Mapping[str, int]) -> Deck:
    """A deck from ``{"J": n, "1": n, ...}`` counts; raises :class:`SetupError`."""
    values = [0] * 5
    for key, n in counts.items():
        v = _CHAR_VALUE.get(str(key).upper())
        if v is None:
            raise SetupError(f"unknown card {key!r} in deck; cards are J, 1, 2, 3, 4")
        if not isinstance(n, int) or isinstance(n, bool):
            raise SetupError(f"deck count for {key!r} must be an integer, got {n!r}")
        values[v] += n
    return Deck(width, height, tuple(values)).check()  # type: ignore[arg-type]


#: The classic 16 cards (both rule sets; rules texts).
STANDARD_4X4 = Deck(4, 4, (2, 4, 4, 4, 2))
#: Big Board: 4 jacks and 8 each of A, 2, 3, 4 (ruling 4).
BIG_BOARD = Deck(6, 6, (4, 8, 8, 8, 8))
#: Solo 3x3: 2 jacks, three 1s, three 2s, one 3 (ruling 7).
SOLO_3X3 = Deck(3, 3, (2, 3, 3, 1, 0))

#: Named presets for custom boards (ruling 8).
PRESETS: dict[str, Deck] = {
    "3x3": SOLO_3X3,
    "4x4": STANDARD_4X4,
    "5x5": Deck(5, 5, (2, 6, 6, 6, 5)),
    "5x5-3p": Deck(5, 5, (3, 6, 6, 5, 5)),
    "6x6": BIG_BOARD,
    "6x6-2p": Deck(6, 6, (2, 9, 9, 8, 8)),
    "7x7": Deck(7, 7, (4, 12, 11, 11, 11)),
}


def format_deal(cards: list[int] | tuple[int, ...], width: int, height: int) -> str:
    """The deal notation: one character per card; ``/`` between rows unless square."""
    text = "".join(CARD_CHARS[v] for v in cards)
    if width == height:
        return text
    return "/".join(text[r * width : (r + 1) * width] for r in range(height))


def parse_deal(text: str, width: int | None = None) -> tuple[list[int], int, int]:
    """Parse a deal into (cards, width, height); raises :class:`NotationError`."""
    text = text.strip()
    if not text:
        raise NotationError("empty deal")
    rows = text.split("/")
    if len(rows) > 1:
        w = len(rows[0])
        if any(len(r) != w for r in rows):
            raise NotationError(f"deal {text!r}: rows have different lengths")
        h = len(rows)
        flat = "".join(rows)
    else:
        flat = text
        n = len(flat)
        if width is not None:
            if n % width:
                raise NotationError(f"deal {text!r}: {n} cards do not fill rows of {width}")
            w, h = width, n // width
        else:
            w = math.isqrt(n)
            if w * w != n:
                raise NotationError(
                    f"deal {text!r} has {n} cards, not a square board; "
                    "separate rows with '/' for other shapes"
                )
            h = w
    if width is not None and w != width:
        raise NotationError(f"deal {text!r} is {w} wide, expected {width}")
    cards = []
    for ch in flat:
        v = _CHAR_VALUE.get(ch)
        if v is None:
            hint = " (lower case marks a collapsed card in a position)" if ch in "jabcd" else ""
            raise NotationError(f"deal {text!r}: bad card {ch!r}; cards are J, 1, 2, 3, 4{hint}")
        cards.append(v)
    if not (MIN_SIDE <= w <= MAX_SIDE and MIN_SIDE <= h <= MAX_SIDE):
        raise NotationError(f"deal {text!r}: board {w}x{h} is out of range")
    return cards, w, h


def check_deal(cards: list[int], width: int, height: int, deck: Deck) -> None:
    """Reject a deal that is not exactly ``deck`` on its board."""
    if (width, height) != (deck.width, deck.height):
        raise SetupError(
            f"deal is {width}x{height} but this variant plays on {deck.width}x{deck.height}"
        )
    counts = tuple(cards.count(v) for v in range(5))
    if counts != deck.counts:
        have = "".join(f"{CARD_CHARS[v]}x{n} " for v, n in enumerate(counts) if n).strip()
        want = "".join(f"{CARD_CHARS[v]}x{n} " for v, n in enumerate(deck.counts) if n).strip()
        raise SetupError(f"deal has the wrong cards: {have}; this deck is {want}")


def shuffled(deck: Deck, key: str) -> list[int]:
    """The deck shuffled by a generator seeded from ``key`` (stable across runs/platforms)."""
    cards = deck.cards()
    random.Random(key).shuffle(cards)
    return cards
