"""Which (game, rules, variant) a room may be opened with, before any engine work.

``welcome.games[].variants`` lists a game's variant names; a client may combine them
with ``+`` as the engine plays them (``big-board+shifting``, ``players-choice+shifting``:
PROTOCOL.md, "Game payloads"). A name that is no combination of listed names is
``unknown_game``; a combination the engine refuses (``solo+shifting``) is
``bad_setup`` (from the room's trial deal). The variant is then named as the engine
names it, so one combination is one quick-match queue whatever its spelling.
"""

from __future__ import annotations

from functools import lru_cache

from engine.base import SetupError, game_class, game_names, new_game
from protocol.errors import ErrorCode, ProtocolError


def check_game(game: str, rules: str | None, variant: str | None) -> tuple[str, str]:
    """``(rules, variant)`` with defaults filled in and the variant canonical."""
    if game not in game_names():
        raise ProtocolError(ErrorCode.UNKNOWN_GAME, f"this server does not host {game!r}")
    cls = game_class(game)
    rules = rules or cls.rule_sets[0]
    variant = variant or cls.variants[0]
    if rules not in cls.rule_sets or not all(part in cls.variants for part in variant.split("+")):
        raise ProtocolError(ErrorCode.UNKNOWN_GAME, f"{game} has no {rules}/{variant}")
    if variant in cls.variants:
        return rules, variant
    return rules, _canonical(game, rules, variant)


@lru_cache(maxsize=256)
def _canonical(game: str, rules: str, variant: str) -> str:
    """The engine's name of a combination (a trial game: cached, as the set is small).

    One the engine refuses without options (``custom+...``) is kept as spelled: the
    room's own trial deal, with its options, says ``bad_setup`` if it is bad."""
    try:
        return str(new_game(game, rules=rules, variant=variant).variant)
    except SetupError:
        return variant
