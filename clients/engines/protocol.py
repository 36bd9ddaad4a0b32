"""The engine protocol's lines as values: parse and format, no I/O (clients/ENGINE_PROTOCOL.md).

The runner (``arena bot``, ``arena engine check``, the tournament runner) talks to
an engine program over its stdin/stdout one line at a time. This module turns each
line into a typed value and back, so the process driver (:mod:`clients.engines.process`),
the checker and a Python engine all share one codec, as the ``websockets`` library
keeps its protocol apart from its I/O. A line that does not parse raises
:class:`LineError` (a ``ValueError``) whose message says what was wrong.

Standard library only (apart from :func:`position_of`, which reads an
:class:`engine.Game`), so that the codec can be copied next to an engine.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.base import Game

#: the protocol versions this codec speaks, oldest first
VERSIONS: tuple[int, ...] = (1,)
#: longest line either side may send, in bytes (without the newline)
MAX_LINE = 65536
#: option types an engine may declare (as UCI's)
OPTION_TYPES = ("check", "spin", "combo", "string", "button")
_WHOLE = re.compile(r"-?[0-9]{1,18}")  # (a 64-bit integer's digits at most)


class LineError(ValueError):
    """A line that is not valid in the engine protocol; the message says why."""


# -- runner -> engine ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    """``arena 1``: the first line; names every version the runner speaks."""

    versions: tuple[int, ...] = VERSIONS


@dataclass(frozen=True, slots=True)
class SetOption:
    """``setoption name N value V``: set an option the engine declared."""

    name: str
    value: str | None = None


@dataclass(frozen=True, slots=True)
class IsReady:
    """``isready``: answered by ``readyok`` once everything before it is done."""


@dataclass(frozen=True, slots=True)
class NewGame:
    """``newgame game G rules R variant V players N seat S [options JSON]``."""

    game: str
    rules: str
    variant: str
    players: int
    seat: int
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Position:
    """``position setup S [out SEAT:PLY ...] [moves M ...]``: the deal and the moves so far.

    ``out`` lists players who went out by forfeit while a game of three or more
    went on, as (seat, ply): out after ``ply`` moves.
    """

    setup: str
    moves: tuple[str, ...] = ()
    out: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Legal:
    """``legal M ...``: every legal move of the engine, sent after each ``position``."""

    moves: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Go:
    """``go [time MS ...] [inc MS] [movetime MS]``: think and answer ``bestmove``.

    ``time`` is every seat's time left in seat order, ``inc`` the Fischer increment,
    ``movetime`` a fixed time for this move. None of them: untimed, the engine chooses.
    """

    time: tuple[int, ...] | None = None
    inc: int | None = None
    movetime: int | None = None


@dataclass(frozen=True, slots=True)
class Stop:
    """``stop``: answer ``bestmove`` now."""


@dataclass(frozen=True, slots=True)
class GameOver:
    """``gameover [winner SEAT] reason R``: for the engine's information; no answer."""

    winner: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class Quit:
    """``quit``: exit at once."""


Command = Hello | SetOption | IsReady | NewGame | Position | Legal | Go | Stop | GameOver | Quit


# -- engine -> runner ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Id:
    """``id name X`` / ``id author X``."""

    key: str
    value: str


@dataclass(frozen=True, slots=True)
class OptionDecl:
    """``option name N type T [default D] [min A] [max B] [var V]...``."""

    name: str
    type: str
    default: str | None = None
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()

    def refuses(self, value: str) -> str | None:
        """Why ``value`` is not one this option takes (None: it is)."""
        if self.type == "check" and value not in ("true", "false"):
            return "true or false"
        if self.type == "combo" and value not in self.vars:
            return f"one of {', '.join(self.vars)}"
        if self.type == "spin":
            lo = "" if self.min is None else f" from {self.min}"
            hi = "" if self.max is None else f" to {self.max}"
            if not _WHOLE.fullmatch(value):  # (int() takes "+5", " 5" and "1_000" too)
                return f"a whole number{lo}{hi}"
            n = int(value)
            if (self.min is not None and n < self.min) or (self.max is not None and n > self.max):
                return f"a whole number{lo}{hi}"
        return None


@dataclass(frozen=True, slots=True)
class ArenaOk:
    """``arenaok 1``: the handshake is done; the engine speaks this version."""

    version: int


@dataclass(frozen=True, slots=True)
class ReadyOk:
    """``readyok``."""


@dataclass(frozen=True, slots=True)
class BestMove:
    """``bestmove M`` (or ``bestmove resign``)."""

    move: str

    @property
    def resign(self) -> bool:
        return self.move == "resign"


@dataclass(frozen=True, slots=True)
class Info:
    """``info [depth N] [score S | score win N | score loss N] [nodes N] [time MS] [pv M...]
    [string TEXT]``: optional search information; every field optional."""

    depth: int | None = None
    score: int | None = None
    win_in: int | None = None
    loss_in: int | None = None
    nodes: int | None = None
    time: int | None = None
    pv: tuple[str, ...] = ()
    string: str | None = None


@dataclass(frozen=True, slots=True)
class EngineErrorLine:
    """``error TEXT``: the engine cannot do what it was asked (an unknown game, a bad setup)."""

    text: str


@dataclass(frozen=True, slots=True)
class Unknown:
    """A line from the engine that is no reply of the protocol (ignored, but logged)."""

    text: str


Reply = Id | OptionDecl | ArenaOk | ReadyOk | BestMove | Info | EngineErrorLine | Unknown


# -- helpers ---------------------------------------------------------------------


def _int(word: str, what: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise LineError(f"{what} must be an integer, got {word!r}") from None


def _ms(word: str, what: str) -> int:
    value = _int(word, what)
    if value < 0:
        raise LineError(f"{what} must not be negative, got {value}")
    return value


def _check_token(value: str, what: str) -> str:
    if not value or any(c.isspace() for c in value):
        raise LineError(f"{what} must be one word without spaces, got {value!r}")
    return value


def _split(line: str) -> list[str]:
    if len(line.encode("utf-8", "replace")) > MAX_LINE:
        raise LineError(f"line longer than {MAX_LINE} bytes")
    return line.split()


def _pairs(words: list[str], keys: set[str], what: str) -> dict[str, str]:
    """``key value key value ...`` (each key once) as a dict; unknown keys (and their
    values) are skipped, so that later versions can add fields."""
    if len(words) % 2:
        raise LineError(f"{what}: expected key value pairs, got {' '.join(words)!r}")
    out: dict[str, str] = {}
    for key, value in zip(words[::2], words[1::2], strict=True):
        if key not in keys:
            continue
        if key in out:
            raise LineError(f"{what}: field {key!r} given twice")
        out[key] = value
    return out


# -- formatting ------------------------------------------------------------------


def format_command(cmd: Command) -> str:
    """The line (without newline) for ``cmd``."""
    match cmd:
        case Hello(versions):
            return "arena " + " ".join(str(v) for v in versions)
        case SetOption(name, value):
            text = f"setoption name {name}"
            return text if value is None else f"{text} value {value}"
        case IsReady():
            return "isready"
        case NewGame(game, rules, variant, players, seat, options):
            text = (
                f"newgame game {game} rules {rules} variant {variant} players {players} seat {seat}"
            )
            if options:
                text += " options " + json.dumps(options, separators=(",", ":"), sort_keys=True)
            return text
        case Position(setup, moves, out):
            text = f"position setup {setup}"
            if out:
                text += " out " + " ".join(f"{s}:{p}" for s, p in out)
            if moves:
                text += " moves " + " ".join(moves)
            return text
        case Legal(moves):
            return " ".join(("legal", *moves))
        case Go(time, inc, movetime):
            words = ["go"]
            if time is not None:
                words += ["time", *map(str, time)]
            if inc is not None:
                words += ["inc", str(inc)]
            if movetime is not None:
                words += ["movetime", str(movetime)]
            return " ".join(words)
        case Stop():
            return "stop"
        case GameOver(winner, reason):
            return f"gameover reason {reason}" + ("" if winner is None else f" winner {winner}")
        case Quit():
            return "quit"
    raise TypeError(f"not a command: {cmd!r}")  # pragma: no cover


def format_reply(reply: Reply) -> str:
    """The line (without newline) for ``reply`` (what a Python engine prints)."""
    match reply:
        case Id(key, value):
            return f"id {key} {value}"
        case OptionDecl(name, type_, default, lo, hi, vars_):
            words = ["option", "name", name, "type", type_]
            if default is not None:
                words += ["default", default]
            if lo is not None:
                words += ["min", str(lo)]
            if hi is not None:
                words += ["max", str(hi)]
            for v in vars_:
                words += ["var", v]
            return " ".join(words)
        case ArenaOk(version):
            return f"arenaok {version}"
        case ReadyOk():
            return "readyok"
        case BestMove(move):
            return f"bestmove {move}"
        case Info():
            return _format_info(reply)
        case EngineErrorLine(text):
            return f"error {text}"
        case Unknown(text):
            return text
    raise TypeError(f"not a reply: {reply!r}")  # pragma: no cover


def _format_info(info: Info) -> str:
    words = ["info"]
    if info.depth is not None:
        words += ["depth", str(info.depth)]
    if info.win_in is not None:
        words += ["score", "win", str(info.win_in)]
    elif info.loss_in is not None:
        words += ["score", "loss", str(info.loss_in)]
    elif info.score is not None:
        words += ["score", str(info.score)]
    for key in ("nodes", "time"):
        value = getattr(info, key)
        if value is not None:
            words += [key, str(value)]
    if info.pv:
        words += ["pv", *info.pv]
    if info.string is not None:
        words += ["string", info.string]
    return " ".join(words)


# -- parsing: runner -> engine -----------------------------------------------------


def parse_command(line: str) -> Command | None:
    """The command on ``line``; ``None`` for a blank line or an unknown command (engines
    ignore those, so that later versions can add commands). Raises :class:`LineError`
    for a known command with malformed arguments."""
    words = _split(line)
    if not words:
        return None
    head, rest = words[0], words[1:]
    match head:
        case "arena":
            if not rest:
                raise LineError("arena: no version given")
            return Hello(tuple(_int(w, "arena version") for w in rest))
        case "setoption":
            return _parse_setoption(rest)
        case "isready":
            return IsReady()
        case "newgame":
            return _parse_newgame(line, rest)
        case "position":
            return _parse_position(rest)
        case "legal":
            return Legal(tuple(rest))
        case "go":
            return _parse_go(rest)
        case "stop":
            return Stop()
        case "gameover":
            fields = _pairs(rest, {"winner", "reason"}, "gameover")
            winner = fields.get("winner")
            return GameOver(
                None if winner is None else _int(winner, "winner"), fields.get("reason", "")
            )
        case "quit":
            return Quit()
    return None


def _parse_setoption(rest: list[str]) -> SetOption:
    if not rest or rest[0] != "name" or len(rest) < 2:
        raise LineError("setoption: expected 'setoption name N [value V]'")
    if "value" in rest[2:]:
        at = rest.index("value", 2)
        return SetOption(" ".join(rest[1:at]), " ".join(rest[at + 1 :]))
    return SetOption(" ".join(rest[1:]))


def _parse_newgame(line: str, rest: list[str]) -> NewGame:
    options: dict[str, Any] = {}
    if "options" in rest:
        # the JSON object is the rest of the line and may hold spaces
        rest = rest[: rest.index("options")]
        text = line.split(" options", 1)[1] if " options" in line else ""
        try:
            options = json.loads(text)
        except ValueError as exc:
            raise LineError(f"newgame: options is not JSON: {exc}") from None
        if not isinstance(options, dict):
            raise LineError("newgame: options must be a JSON object")
    fields = _pairs(rest, {"game", "rules", "variant", "players", "seat"}, "newgame")
    missing = [k for k in ("game", "rules", "variant", "players", "seat") if k not in fields]
    if missing:
        raise LineError(f"newgame: missing {', '.join(missing)}")
    return NewGame(
        game=fields["game"],
        rules=fields["rules"],
        variant=fields["variant"],
        players=_int(fields["players"], "players"),
        seat=_int(fields["seat"], "seat"),
        options=options,
    )


def _parse_position(rest: list[str]) -> Position:
    if len(rest) < 2 or rest[0] != "setup":
        raise LineError("position: expected 'position setup S [out SEAT:PLY ...] [moves M ...]'")
    setup, rest = rest[1], rest[2:]
    out: list[tuple[int, int]] = []
    moves: list[str] = []
    section = None
    for word in rest:
        if word in ("out", "moves") and section != "moves":
            if word == "out" and (section is not None):
                raise LineError("position: 'out' must come before 'moves'")
            section = word
        elif section == "out":
            seat, sep, ply = word.partition(":")
            if not sep:
                raise LineError(f"position: out entries are SEAT:PLY, got {word!r}")
            out.append((_int(seat, "out seat"), _int(ply, "out ply")))
        elif section == "moves":
            moves.append(word)
        else:
            raise LineError(f"position: unexpected {word!r} after the setup")
    return Position(setup, tuple(moves), tuple(out))


def _parse_go(rest: list[str]) -> Go:
    time: list[int] | None = None
    inc = movetime = None
    i = 0
    while i < len(rest):
        key = rest[i]
        if key == "time":
            time = []
            i += 1
            while i < len(rest) and rest[i].lstrip("-").isdigit():
                time.append(_ms(rest[i], "time"))
                i += 1
            if not time:
                raise LineError("go: 'time' needs one value per seat")
            continue
        if key in ("inc", "movetime") and i + 1 < len(rest):
            value = _ms(rest[i + 1], key)
            if key == "inc":
                inc = value
            else:
                movetime = value
            i += 2
            continue
        raise LineError(f"go: unexpected {key!r}")
    return Go(None if time is None else tuple(time), inc, movetime)


# -- parsing: engine -> runner -----------------------------------------------------


def parse_reply(line: str) -> Reply | None:
    """The reply on ``line``; ``None`` for a blank line, :class:`Unknown` for a line that
    is no reply. Raises :class:`LineError` for a known reply with malformed arguments
    (``bestmove`` without a move, ``arenaok x``)."""
    words = _split(line)
    if not words:
        return None
    head, rest = words[0], words[1:]
    match head:
        case "id":
            if len(rest) < 2:
                raise LineError("id: expected 'id name X' or 'id author X'")
            return Id(rest[0], " ".join(rest[1:]))
        case "option":
            return _parse_option(rest)
        case "arenaok":
            if len(rest) != 1:
                raise LineError("arenaok: expected one version number")
            return ArenaOk(_int(rest[0], "arenaok version"))
        case "readyok":
            return ReadyOk()
        case "bestmove":
            if not rest:
                raise LineError("bestmove: no move given")
            return BestMove(rest[0])
        case "info":
            return _parse_info(rest)
        case "error":
            return EngineErrorLine(" ".join(rest))
    return Unknown(line.rstrip("\r\n"))


def _parse_option(rest: list[str]) -> OptionDecl:
    if len(rest) < 4 or rest[0] != "name" or "type" not in rest:
        raise LineError("option: expected 'option name N type T ...'")
    at = rest.index("type")
    name = " ".join(rest[1:at])
    if not name or at + 1 >= len(rest):
        raise LineError("option: expected 'option name N type T ...'")
    type_ = rest[at + 1]
    if type_ not in OPTION_TYPES:
        raise LineError(f"option: unknown type {type_!r}; types: {', '.join(OPTION_TYPES)}")
    default = lo = hi = None
    vars_: list[str] = []
    words = rest[at + 2 :]
    for key, value in zip(words[::2], words[1::2], strict=False):
        if key == "default":
            default = value
        elif key == "min":
            lo = _int(value, "option min")
        elif key == "max":
            hi = _int(value, "option max")
        elif key == "var":
            vars_.append(value)
        else:
            raise LineError(f"option: unknown field {key!r}")
    if len(words) % 2:
        raise LineError(f"option: {words[-1]!r} has no value")
    return OptionDecl(name, type_, default, lo, hi, tuple(vars_))


def _parse_info(rest: list[str]) -> Info:
    fields: dict[str, Any] = {}
    i = 0
    while i < len(rest):
        key = rest[i]
        if key == "string":
            fields["string"] = " ".join(rest[i + 1 :])
            break
        if key == "pv":
            j = i + 1
            while j < len(rest) and rest[j] not in ("depth", "score", "nodes", "time", "string"):
                j += 1
            fields["pv"] = tuple(rest[i + 1 : j])
            i = j
            continue
        if key == "score" and i + 1 < len(rest) and rest[i + 1] in ("win", "loss"):
            if i + 2 >= len(rest):
                raise LineError(f"info: score {rest[i + 1]} needs a number of plies")
            fields["win_in" if rest[i + 1] == "win" else "loss_in"] = _ms(rest[i + 2], "score")
            i += 3
            continue
        if key in ("depth", "score", "nodes", "time") and i + 1 < len(rest):
            value = _int(rest[i + 1], f"info {key}")
            fields[key] = value
            i += 2
            continue
        raise LineError(f"info: unexpected {key!r}")
    return Info(**fields)


# -- games -----------------------------------------------------------------------


def new_game_of(game: Game, seat: int) -> NewGame:
    """The ``newgame`` line for playing ``seat`` of ``game``."""
    return NewGame(
        game=game.name,
        rules=game.rules,
        variant=game.variant,
        players=game.num_players,
        seat=seat,
        options=game.options(),
    )


def position_of(game: Game) -> Position:
    """The ``position`` line for ``game`` as it stands (setup, forfeits, moves)."""
    return Position(
        setup=game.setup(),
        moves=tuple(game.history),
        out=tuple((int(f["seat"]), int(f["ply"])) for f in game.forfeits()),
    )


def game_from(new: NewGame, position: Position) -> Game:
    """Rebuild the game a ``newgame`` and ``position`` describe (raises the engine's
    errors: :class:`engine.SetupError`, :class:`engine.IllegalMove`)."""
    from engine.base import GameRecord, replay

    record = GameRecord(
        game=new.game,
        rules=new.rules,
        rules_version="",
        variant=new.variant,
        seed=None,
        setup=position.setup,
        players=[str(s) for s in range(new.players)],
        moves=list(position.moves),
        options=dict(new.options),
        forfeits=[{"seat": s, "ply": p, "reason": "resign"} for s, p in position.out],
    )
    return replay(record)
