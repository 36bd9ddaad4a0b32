"""A tournament's settings: from a TOML file, from flags, or both (flags win).

Participants are built-in AI levels (``level=mcts,iterations=300``) or engine
programs speaking clients/ENGINE_PROTOCOL.md (``cmd=./my-engine``), each with
its own options and time control. The whole configuration, including the deals
read from a setups file, is saved in the tournament's state file, so a resumed
run plays exactly what the interrupted one would have.
"""

from __future__ import annotations

import shlex
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from clients.tournament.pairings import FORMATS
from clients.tournament.sprt import Sprt
from engine.ai import LEVELS
from engine.base import EngineError, game_class
from engine.match import TimeControl

ADJUDICATORS = ("none", "solver")


class ConfigError(ValueError):
    """A setting that cannot be used; the message names it."""

    code = "bad_config"


@dataclass(frozen=True, slots=True)
class ParticipantSpec:
    """One player of the tournament: exactly one of ``level`` (built in) or ``cmd``."""

    name: str
    level: str | None = None
    cmd: tuple[str, ...] | None = None
    iterations: int | None = None
    budget_ms: int | None = None
    seed: int | None = None
    tc: str | None = None  # its own time control, else the tournament's
    options: dict[str, Any] = field(default_factory=dict)  # engine options (setoption)
    cwd: str | None = None

    @property
    def builtin(self) -> bool:
        return self.level is not None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["cmd"] = None if self.cmd is None else list(self.cmd)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParticipantSpec:
        data = _tc_spelt_clock(data)
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown participant setting(s): {', '.join(unknown)}")
        data = dict(data)
        cmd = data.get("cmd")
        if isinstance(cmd, str):
            data["cmd"] = tuple(shlex.split(cmd))
        elif cmd is not None:
            data["cmd"] = tuple(str(c) for c in cmd)
        for key in ("iterations", "budget_ms", "seed"):
            if data.get(key) is not None:
                try:
                    data[key] = int(data[key])
                except (TypeError, ValueError):
                    raise ConfigError(f"participant {key} is a number, not {data[key]!r}") from None
        if "name" not in data:
            data["name"] = data.get("level") or Path((data.get("cmd") or ("engine",))[0]).name
        return cls(**data)


def _tc_spelt_clock(data: dict[str, Any]) -> dict[str, Any]:
    """``clock``, as ``arena bot`` and hosted tournaments call it, is ``tc`` (a copy)."""
    data = dict(data)
    if "clock" in data:
        if "tc" in data:
            raise ConfigError("clock and tc are the same setting: give one of them")
        data["tc"] = data.pop("clock")
    return data


def parse_participant(text: str) -> ParticipantSpec:
    """A flag value ``name=mcts300,level=mcts,iterations=300`` (``cmd`` takes the rest of
    the text after ``cmd=``, shell-quoted, so it may hold commas and spaces)."""
    data: dict[str, Any] = {}
    head, sep, cmd = text.partition("cmd=")
    for item in head.split(","):
        item = item.strip()
        if not item:
            continue
        key, eq, value = item.partition("=")
        if not eq:
            raise ConfigError(f"cannot read {item!r}: participants are key=value,key=value")
        if key.startswith("option."):
            data.setdefault("options", {})[key[7:]] = value
        else:
            data[key] = value
    if sep:
        data["cmd"] = cmd
    return ParticipantSpec.from_dict(data)


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """Everything that decides what is played (the state file keeps it)."""

    participants: tuple[ParticipantSpec, ...] = ()
    game: str = "collapsi"
    rules: str | None = None
    variant: str | None = None
    seats: int = 2
    format: str = "round-robin"
    cycles: int = 1
    rounds: int = 0  # Swiss rounds (0: enough for a winner)
    gauntlet_seeds: int = 1
    deals: int = 2  # deals per encounter and round, each played in every seat order
    setups: tuple[str, ...] = ()  # deals from a file, used in turn instead of seeds
    seed: int = 1
    concurrency: int = 1
    tc: str = "none"
    move_timeout_ms: int = 10_000  # an engine's answer without a clock (a hang)
    adjudicate: str = "none"
    sprt: Sprt | None = None
    tiebreak_pairs: int = 4  # knockout: extra deals to break a tie

    def validate(self) -> TournamentConfig:
        """Raises :class:`ConfigError` for settings that cannot be played."""
        if len(self.participants) < 2:
            raise ConfigError("a tournament needs at least two participants")
        names = [p.name for p in self.participants]
        if len(set(names)) != len(names):
            raise ConfigError(f"participant names must differ: {names}")
        try:
            cls = game_class(self.game)
            cls.version_of(self.rules)
            for tc in [self.tc, *(p.tc for p in self.participants if p.tc)]:
                TimeControl.parse(tc)
        except EngineError as exc:
            raise ConfigError(str(exc)) from None
        for p in self.participants:
            if (p.level is None) == (p.cmd is None):
                raise ConfigError(f"participant {p.name}: give exactly one of level= or cmd=")
            if p.level is not None and p.level not in LEVELS.get(self.game, ()):
                levels = ", ".join(LEVELS.get(self.game, ()))
                raise ConfigError(
                    f"participant {p.name}: no {self.game} level {p.level!r}; {levels}"
                )
        clocks = {TimeControl.parse(p.tc or self.tc).kind == "none" for p in self.participants}
        if len(clocks) > 1:  # time odds, but a game has clocks for every seat or none
            raise ConfigError("either every participant plays with a clock or none does")
        if self.format not in FORMATS:
            raise ConfigError(f"format is one of {', '.join(FORMATS)}, not {self.format!r}")
        if not 2 <= self.seats <= 4:
            raise ConfigError("games have 2 to 4 seats")
        if self.seats > 2 and self.format in ("swiss", "knockout"):
            raise ConfigError(f"{self.format} pairs two-player games only")
        if min(self.cycles, self.deals, self.concurrency) < 1 or self.rounds < 0:
            raise ConfigError("cycles, deals and concurrency are at least 1")
        if self.adjudicate not in ADJUDICATORS:
            raise ConfigError(f"adjudicate is one of {', '.join(ADJUDICATORS)}")
        if self.sprt is not None and (len(self.participants) != 2 or self.seats != 2):
            raise ConfigError("SPRT compares exactly two participants in two-player games")
        return self

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["participants"] = [p.to_dict() for p in self.participants]
        out["setups"] = list(self.setups)
        out["sprt"] = None if self.sprt is None else self.sprt.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TournamentConfig:
        data = _tc_spelt_clock(data)
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise ConfigError(f"unknown tournament setting(s): {', '.join(unknown)}")
        data["participants"] = tuple(
            p if isinstance(p, ParticipantSpec) else ParticipantSpec.from_dict(p)
            for p in data.get("participants", ())
        )
        data["setups"] = tuple(data.get("setups", ()))
        sprt = data.get("sprt")
        if isinstance(sprt, dict):
            data["sprt"] = Sprt(**sprt)
        elif isinstance(sprt, str):
            data["sprt"] = Sprt.parse(sprt)
        return cls(**data)

    def with_changes(self, **changes: Any) -> TournamentConfig:
        return replace(self, **changes)


def load_toml(path: Path) -> dict[str, Any]:
    """A config file: top-level settings (named as the flags, ``-`` or ``_``) and one
    ``[[participant]]`` table per participant."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    out = {k.replace("-", "_"): v for k, v in data.items() if k != "participant"}
    out["participants"] = list(data.get("participant", []))
    if "setups_file" in out:
        out["setups"] = read_setups(path.parent / out.pop("setups_file"))
    return out


def read_setups(path: Path) -> tuple[str, ...]:
    """One deal (a setup in the game's notation) per line; blank lines and # comments skipped."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read setups file {path}: {exc}") from None
    setups = tuple(s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#"))
    if not setups:
        raise ConfigError(f"no setups in {path}")
    return setups
