"""What a bot plays, from command-line flags and a TOML file (flags win).

A config file holds the same settings as the flags, with ``_`` for ``-``::

    url = "ws://127.0.0.1:8765"
    name = "kestrel-bot"
    token = "s3cret-token-of-my-bot"   # 16+ characters, 8 of them different
    engine = "python3 clients/examples/python/random_engine.py"
    quick_match = ["collapsi/base", "collapsi/shifting", "collecto"]   # in turn
    clock = "1+1"
    rated = true
    games = 0            # 0: forever
    concurrency = 2
    log_dir = "bot-logs"
    accept_challenges = true
    accept_games = ["collapsi"]          # challenges to other games are declined
    accept_clocks = ["1+1", "3+2"]

    [engine_options]
    Seed = 7
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from engine.match import BadTimeControl, TimeControl
from protocol.tokens import weak_token


class ConfigError(ValueError):
    """A setting that cannot work; the message names it."""


@dataclass(slots=True)
class BotConfig:
    """Every setting of one ``arena bot`` run (see ``arena bot --help``)."""

    url: str = "ws://127.0.0.1:8765"
    name: str = ""
    token: str | None = None
    engine: str | None = None
    level: str | None = None
    engine_options: dict[str, str] = field(default_factory=dict)
    #: game specs ``GAME[/VARIANT[/RULES]]``, taken in turn, one per game
    quick_match: list[str] = field(default_factory=list)
    open_room: list[str] = field(default_factory=list)
    join: list[str] = field(default_factory=list)
    #: a hosted tournament's id: enter it and play its pairings until it is over
    tournament: str | None = None
    #: ``NAME [GAME...]``: challenge that player, to these game specs in turn
    challenge: list[str] = field(default_factory=list)
    accept_challenges: bool = False
    #: the challenges it accepts: of these game specs (none given: every game it plays),
    #: with these clocks (none given: any), ``rated`` or ``casual`` (none given: both)
    accept_games: list[str] = field(default_factory=list)
    accept_clocks: list[str] = field(default_factory=list)
    accept_modes: list[str] = field(default_factory=list)
    rules: str | None = None
    variant: str | None = None
    seats: int | None = None
    clock: str = "none"
    rated: bool = False
    games: int = 0
    concurrency: int = 1
    margin_ms: int = 100
    untimed_move_s: float = 30.0
    max_strikes: int = 3
    log_dir: str | None = None
    reconnect_s: float = 60.0
    seed: int = 0

    def specs(self) -> list[tuple[str, str | None, str | None]]:
        """Every game spec named (quick match, open rooms, joins, challenges sent and
        accepted), as :meth:`spec`."""
        named = (
            *self.quick_match, *self.open_room, *self.join, *self.challenge[1:],
            *self.accept_games,
        )  # fmt: skip
        return [self.spec(t) for t in named]

    def spec(self, text: str) -> tuple[str, str | None, str | None]:
        """``GAME[/VARIANT[/RULES]]`` as (game, variant, rules); ``--variant`` and
        ``--rules`` fill what it leaves out."""
        parts = text.split("/")
        if not parts[0] or len(parts) > 3:
            raise ConfigError(f"a game is GAME[/VARIANT[/RULES]], got {text!r}")
        from engine.base import SetupError, game_class

        try:
            cls = game_class(parts[0])
        except SetupError as exc:
            raise ConfigError(str(exc)) from None
        variant = parts[1] if len(parts) > 1 and parts[1] else self.variant
        rules = parts[2] if len(parts) > 2 and parts[2] else self.rules
        # (the names the server takes: server/variants.py; found here, before logging in)
        if rules is not None and rules not in cls.rule_sets:
            known = ", ".join(cls.rule_sets)
            raise ConfigError(f"{parts[0]} has no rule set {rules!r}; rule sets: {known}")
        if variant is not None and not all(v in cls.variants for v in variant.split("+")):
            known = ", ".join(cls.variants)
            raise ConfigError(
                f"{parts[0]} has no variant {variant!r}; variants: {known} (combined with +)"
            )
        return parts[0], variant, rules

    def modes(self) -> list[str]:
        """Where its games come from, besides challenges it accepts (one at most)."""
        kinds = ("quick_match", "open_room", "join", "tournament", "challenge")
        return [k for k in kinds if getattr(self, k)]

    def time_control(self) -> TimeControl:
        try:
            return TimeControl.parse(self.clock)
        except BadTimeControl as exc:
            raise ConfigError(f"clock: {exc}") from None

    def check(self, sdk: bool = False) -> BotConfig:
        """Raise :class:`ConfigError` for settings that cannot work together (``sdk``:
        a Python bot class chooses the moves, so neither engine nor level is wanted)."""
        if not self.name:
            raise ConfigError("a name is needed (--name or name = ... in the config)")
        if sdk and (self.engine or self.level):
            raise ConfigError("a Python bot takes neither --engine nor --level")
        if not sdk and (self.engine is None) == (self.level is None):
            raise ConfigError("give exactly one of --engine CMD and --level LEVEL")
        for key in ("quick_match", "open_room", "join", "challenge", *_ACCEPTS):
            value = getattr(self, key)
            setattr(self, key, value.split() if isinstance(value, str) else list(value))
        modes = self.modes()
        if not modes and not self.accept_challenges:
            raise ConfigError(
                "say what to play: --quick-match, --open-room or --join GAME, "
                "--tournament ID, --challenge NAME GAME, or --accept-challenges"
            )
        if len(modes) > 1:
            raise ConfigError(
                "--quick-match, --open-room, --join, --tournament and --challenge "
                "do not go together"
            )
        paired = (*self.quick_match, *self.challenge[1:])
        if any("solo" in (self.spec(t)[1] or "").split("+") for t in paired):
            raise ConfigError(
                "solo is a one-player puzzle: quick match and challenges pair players"
            )
        if self.token and (weak := weak_token(self.token)):  # (the server would refuse it)
            raise ConfigError(f"--token: {weak} (PROTOCOL.md, Player tokens)")
        if self.rated and not self.token:
            raise ConfigError("--rated needs --token: rated games are for claimed names")
        if self.engine_options and self.engine is None:
            raise ConfigError(
                "--engine-option sets an --engine program's option (a level has none)"
            )
        if self.challenge and self.challenge[0] in _game_names():
            raise ConfigError(
                f"--challenge NAME GAME...: {self.challenge[0]!r} is a game; name the player first"
            )
        if self.challenge and self.challenge[0].casefold() == self.name.casefold():
            raise ConfigError("--challenge NAME: a bot cannot challenge itself")
        if any(getattr(self, key) for key in _ACCEPTS) and not self.accept_challenges:
            raise ConfigError("--accept-games, -clocks and -modes go with --accept-challenges")
        if not set(self.accept_modes) <= {"rated", "casual"}:
            raise ConfigError(f"--accept-modes: rated or casual, not {self.accept_modes}")
        for clock in self.accept_clocks:
            try:
                TimeControl.parse(clock)
            except BadTimeControl as exc:
                raise ConfigError(f"--accept-clocks: {exc}") from None
        if self.games < 0 or self.concurrency < 1 or self.max_strikes < 1:
            raise ConfigError("--games must be >= 0, --concurrency and --max-strikes >= 1")
        if self.margin_ms < 0:
            raise ConfigError("--margin-ms must not be negative")
        self.time_control()
        specs = self.specs()
        if self.level is not None:
            from engine.ai import LEVELS

            for game in {g for g, _, _ in specs}:
                if self.level not in LEVELS.get(game, ()):
                    known = ", ".join(LEVELS.get(game, ())) or "none"
                    raise ConfigError(f"no {game} level {self.level!r}; levels: {known}")
        return self


#: the settings that narrow the challenges accepted
_ACCEPTS = ("accept_games", "accept_clocks", "accept_modes")


def _game_names() -> list[str]:
    from engine.base import game_names

    return game_names()


_NAMES = {f.name for f in fields(BotConfig)}
_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "int": ((int,), "a whole number"),
    "float": ((int, float), "a number"),
    "bool": ((bool,), "true or false"),
    "str": ((str,), "a string"),
    "list[str]": ((list, str), "a list of strings"),  # (a string: its words, as a flag's)
    "dict[str, str]": ((dict,), "a table"),
}
#: each setting's TOML types, from its annotation (``X | None``: X)
_TYPES = {f.name: _KINDS[str(f.type).split(" | ")[0]] for f in fields(BotConfig)}


def load_toml(path: str | Path) -> dict[str, Any]:
    """The settings of a TOML config file, checked against the known names."""
    try:
        data = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path} is not valid TOML: {exc}") from None
    spelt: dict[str, str] = {}
    for key in map(str, data):  # (the flags' spelling too, but one of them)
        if (other := spelt.setdefault(key.replace("-", "_"), key)) != key:
            raise ConfigError(f"config {path}: {other} is also spelt {key}")
    data = {str(k).replace("-", "_"): v for k, v in data.items()}
    if "engine_option" in data:  # (the flag's own form: a list of NAME=VALUE)
        pairs = _pairs(path, data.pop("engine_option"))
        table = data.setdefault("engine_options", {})
        if isinstance(table, dict):  # (anything else: named by the type check below)
            data["engine_options"] = {**pairs, **table}
    unknown = sorted(set(data) - _NAMES)
    if unknown:
        raise ConfigError(f"config {path}: unknown settings {', '.join(unknown)}")
    for key, value in data.items():
        kinds, what = _TYPES[key]
        ok = isinstance(value, kinds) and (type(value) is not bool or bool in kinds)
        if ok and type(value) is list:
            ok = all(type(x) is str for x in value)
        if not ok:
            raise ConfigError(f"config {path}: {key} must be {what}, got {value!r}")
    if "engine_options" in data:
        options = data["engine_options"]
        data["engine_options"] = {str(k): _option_text(v) for k, v in options.items()}
    return data


def _pairs(path: str | Path, value: Any) -> dict[str, str]:
    """``engine-option = ["Seed=7"]``, as the flag takes them."""
    items = value.split() if isinstance(value, str) else value
    out = {}
    for item in items if isinstance(items, list) else [items]:
        name, sep, text = str(item).partition("=")
        if not sep or not name:
            raise ConfigError(f"config {path}: engine-option wants NAME=VALUE, got {item!r}")
        out[name] = text
    return out


def _option_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def build(file_settings: dict[str, Any], flags: dict[str, Any], sdk: bool = False) -> BotConfig:
    """A config from a file's settings overlaid with the flags given (``None``: not given)."""
    merged = dict(file_settings)
    for key, value in flags.items():
        if value is not None and key in _NAMES:
            if key == "engine_options":
                merged["engine_options"] = {**merged.get("engine_options", {}), **value}
            else:
                merged[key] = value
    try:
        return BotConfig(**merged).check(sdk)
    except TypeError as exc:
        raise ConfigError(str(exc)) from None
