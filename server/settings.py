"""Every ``arena serve`` option from the environment as well: ``--lease-ttl`` is
``$ARENA_LEASE_TTL``, and so on (a container's settings are its environment).

A flag on the command line wins over its variable, the variable over the built-in
default. The names follow one rule (``ARENA_`` and the option's name in capitals,
``-`` as ``_``), with one exception kept for older deployments: ``--redis`` is
``$ARENA_REDIS_URL``. A value that does not parse is a usage error naming the
variable, not a traceback. The README's table lists them all (a test checks it
against this parser and starts the server with each).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

PREFIX = "ARENA_"
#: options whose variable does not follow the rule (kept as they were documented)
RENAMED = {"redis": "ARENA_REDIS_URL"}
#: options never logged in clear
SECRETS = {"admin_token"}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_name(action: argparse.Action) -> str:
    """The variable of an option: ``--lease-ttl`` -> ``ARENA_LEASE_TTL``."""
    return RENAMED.get(action.dest, PREFIX + action.dest.upper())


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's options that take a setting (not ``--help``, not positionals)."""
    return [
        a
        for a in parser._actions
        if a.option_strings and not isinstance(a, argparse._HelpAction) and a.dest != "help"
    ]


def from_environment(
    parser: argparse.ArgumentParser, environ: Mapping[str, str] | None = None
) -> None:
    """Make each option's default its variable's value when set, and say so in --help."""
    env = os.environ if environ is None else environ
    for action in options(parser):
        name = env_name(action)
        action.help = f"{action.help or ''} [${name}]".strip()
        raw = env.get(name)
        if raw is not None:
            action.default = _convert(parser, action, name, raw)


def _convert(parser: argparse.ArgumentParser, action: argparse.Action, name: str, raw: str) -> Any:
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        word = raw.strip().lower()
        if word not in _TRUE | _FALSE:
            parser.error(f"${name} wants true or false (1/0, yes/no), not {raw!r}")
        return word in _TRUE
    if action.nargs not in (None, "?"):
        parser.error(f"${name}: {action.option_strings[0]} cannot come from the environment")
    try:
        value = action.type(raw) if callable(action.type) else raw
    except (TypeError, ValueError, argparse.ArgumentTypeError):
        kind = getattr(action.type, "__name__", "value")
        article = "an" if kind[:1] in "aeiou" else "a"
        parser.error(f"${name} wants {article} {kind}, not {raw!r}")
    if action.choices is not None and value not in action.choices:
        parser.error(f"${name} must be one of {', '.join(map(str, action.choices))}, not {raw!r}")
    return value


def redacted(url: str | None) -> str | None:
    """``url`` without its password (for logs): ``redis://:***@host:6379/0``."""
    if not url or "://" not in url or "@" not in url:
        return url
    parts = urlsplit(url)
    user, _, host = parts.netloc.rpartition("@")
    name = user.split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{name}:***@{host}"))


def effective(args: argparse.Namespace, parser_actions: list[argparse.Action]) -> dict[str, Any]:
    """The settings a server runs with, by variable name, passwords hidden (for its log)."""
    out: dict[str, Any] = {}
    for action in parser_actions:
        value = getattr(args, action.dest, None)
        if action.dest in SECRETS and value is not None:
            value = "***"
        out[env_name(action)] = redacted(value) if isinstance(value, str) else value
    return out
