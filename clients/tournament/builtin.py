"""Games between built-in levels, played in bulk (by the runner's worker processes, or
by the runner itself at ``--concurrency 1``) and encoded where they are played.

The runner hands out *units*: a group (one deal of one encounter) and the seat orders
of it still to play, as plain tuples, so sending one costs little; the player turns
them into :class:`~clients.tournament.play.GameSpec` with the tournament's config.
What comes back is :data:`Played`: the record lines' text, ready for the records
file, and the small part of each line the runner keeps.
"""

from __future__ import annotations

import json
from typing import Any

from clients.tournament.config import ParticipantSpec, TournamentConfig
from clients.tournament.participants import BuiltinParticipant
from clients.tournament.play import GameSpec, play_builtin_game
from clients.tournament.schedule import Group

#: (round, encounter, deal, players, seat orders to play): see the module docstring
Unit = tuple[int, int, int, tuple[int, ...], tuple[int, ...]]

#: finished games: their record lines as JSON text (one line each, newline-terminated),
#: and per game the part the runner keeps (what the standings and the summary read), so
#: long tournaments do not pile up in memory
Played = tuple[str, list[dict[str, Any]]]

_players: dict[tuple[Any, ...], BuiltinParticipant] = {}
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def unit(group: Group, perms: list[int]) -> Unit:
    return (group.round, group.encounter, group.deal, group.players, tuple(perms))


def unit_specs(u: Unit, config: TournamentConfig) -> list[GameSpec]:
    specs = Group(*u[:4]).games(config)
    return [specs[perm] for perm in u[4]]


def builtin_players(
    spec: GameSpec, players: tuple[ParticipantSpec, ...]
) -> list[BuiltinParticipant]:
    """The seated levels, made once per process (a level keeps no state between games)."""
    seated = []
    for p in players:
        key = (spec.game, p.name, p.level, p.seed, p.iterations, p.budget_ms)
        if key not in _players:
            _players[key] = BuiltinParticipant(p, spec.game)
        seated.append(_players[key])
    return seated


def play_units(
    units: list[Unit], config: TournamentConfig, participants: tuple[ParticipantSpec, ...]
) -> Played:
    """Play the units' games (built-in levels only) and encode them."""
    lines = []
    for u in units:
        for spec in unit_specs(u, config):
            seated = builtin_players(spec, tuple(participants[i] for i in spec.seats))
            lines.append(play_builtin_game(spec, seated))
    return encode(lines)


def encode(lines: list[dict[str, Any]]) -> Played:
    """Finished games' lines as the records file's text and the parts the runner keeps."""
    dumps = _COMPACT.encode
    return "".join([dumps(line) + "\n" for line in lines]), [kept(line) for line in lines]


def kept(line: dict[str, Any]) -> dict[str, Any]:
    """What the runner keeps of a game's line: what the standings, the pairings of the
    next rounds and the summary read (a resumed run reads whole lines back)."""
    t = line["tournament"]
    return {
        "players": line["players"],
        "result": line["result"],
        "tournament": {
            "id": t["id"],
            "seats": t["seats"],
            "adjudicated": t["adjudicated"],
            "faults": t["faults"],
        },
    }
