"""arena bot's settings: in its TOML config file, the flags' names as keys (either
spelling), a string for a list as a flag's words, and a value of the wrong type named
in one line; a game the server does not host and a mistyped flag refused at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from clients.bot.config import ConfigError, build, load_toml
from tests.engine_examples import ROOT


def _config(tmp_path: Path, text: str):
    path = tmp_path / "bot.toml"
    path.write_text('name = "b"\nlevel = "random"\n' + text)
    return build(load_toml(path), {})


def test_keys_take_the_flags_spelling_and_a_string_is_its_words(tmp_path: Path) -> None:
    cfg = _config(tmp_path, 'quick-match = "collapsi collapsi/shifting"\nmax-strikes = 5\n')
    assert cfg.quick_match == ["collapsi", "collapsi/shifting"] and cfg.max_strikes == 5


def test_engine_options_as_the_flag_gives_them_or_as_a_table(tmp_path: Path) -> None:
    path = tmp_path / "bot.toml"
    path.write_text(
        'name = "b"\nengine = "./e"\nquick-match = "collapsi"\n'
        'engine-option = ["Seed=7", "Style=wild"]\n[engine_options]\nStyle = "safe"\n'
    )
    cfg = build(load_toml(path), {})
    assert cfg.engine_options == {"Seed": "7", "Style": "safe"}  # (the table wins)


@pytest.mark.parametrize(
    "line,message",
    [
        ('games = "one"', "games must be a whole number, got 'one'"),
        ("games = true", "games must be a whole number, got True"),
        ("quick_match = [1]", "quick_match must be a list of strings, got [1]"),
        ("rated = 1", "rated must be true or false, got 1"),
        ("max-strikes = 2\nmax_strikes = 3", "max-strikes is also spelt max_strikes"),
        ("untimed-move_s = 2\nuntimed_move-s = 3", "untimed-move_s is also spelt untimed_move-s"),
        ('engine-option = ["Seed"]', "engine-option wants NAME=VALUE, got 'Seed'"),
    ],
)
def test_a_value_of_the_wrong_type_is_named(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _config(tmp_path, line + "\n")


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    """``python ARGV...`` as a user runs it, with no server: these are refused before
    any connection."""
    return subprocess.run(
        [sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def _arena_bot(*flags: str) -> subprocess.CompletedProcess[str]:
    return _run("-m", "clients.cli", "bot", "--name", "b", "--level", "random", *flags)


@pytest.mark.parametrize(
    "spec,message",
    [
        ("collapsi/bigboard", "collapsi has no variant 'bigboard'; variants: base, big-board,"),
        (
            "collapsi/base/standrd",
            "collapsi has no rule set 'standrd'; rule sets: standard, classic",
        ),
        ("colapsi", "unknown game 'colapsi'; known: collapsi, collecto"),
    ],
)
def test_a_game_the_server_does_not_host_is_refused_before_logging_in(spec, message) -> None:
    done = _arena_bot("--url", "ws://127.0.0.1:9", "--quick-match", spec)
    assert done.returncode == 2, done
    assert done.stderr.startswith(f"arena bot: error: {message}") and not done.stdout, done


@pytest.mark.parametrize(
    "flags,message",
    [
        (
            ("--engine-option", "Seed=1", "--quick-match", "collapsi"),
            "--engine-option sets an --engine program's option (a level has none)",
        ),
        (
            ("--quick-match", "collapsi/solo"),
            "solo is a one-player puzzle: quick match and challenges pair players",
        ),
        (
            ("--quick-match", "collapsi", "--rated"),
            "--rated needs --token: rated games are for claimed names",
        ),
        (
            ("--challenge", "collapsi"),
            "--challenge NAME GAME...: 'collapsi' is a game; name the player first",
        ),
        (("--challenge", "B", "collapsi"), "--challenge NAME: a bot cannot challenge itself"),
        (
            ("--quick-match", "collapsi", "--accept-games", "collapsi"),
            "--accept-games, -clocks and -modes go with --accept-challenges",
        ),
        (
            ("--accept-challenges", "--accept-clocks", "5+x"),
            "--accept-clocks: cannot read time control '5+x': use none, 5+3 or fixed:10",
        ),
        (
            ("--accept-challenges", "--accept-games", "collecto/nope"),
            "collecto has no variant 'nope'; variants: base (combined with +)",
        ),
    ],
)
def test_settings_that_cannot_work_are_refused_before_logging_in(flags, message) -> None:
    done = _arena_bot("--url", "ws://127.0.0.1:9", *flags)
    assert done.returncode == 2, done
    assert done.stderr == f"arena bot: error: {message}\n" and not done.stdout, done


def test_a_mistyped_flag_shows_arena_bots_usage() -> None:
    done = _arena_bot("--quik-match", "collapsi")
    assert done.returncode == 2, done
    assert done.stderr.startswith("usage: arena bot "), done.stderr
    assert done.stderr.rstrip().endswith(
        "arena bot: error: unrecognized arguments: --quik-match collapsi"
    )


def test_the_sdk_examples_help_is_its_own() -> None:
    """A Python bot takes arena bot's flags but those that say who plays: its --help is
    its own (its name, no --engine or --level), and --level is a usage error there."""
    example = str(ROOT / "clients" / "examples" / "python" / "sdk_bot.py")
    helped = _run(example, "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: sdk_bot.py "), helped
    assert "--quick-match" in helped.stdout and "--engine" not in helped.stdout, helped.stdout
    wrong = _run(example, "--name", "b", "--level", "random")
    assert wrong.returncode == 2
    assert "sdk_bot.py: error: unrecognized arguments: --level random" in wrong.stderr


def test_help_says_how_a_run_stops() -> None:
    """``arena bot --help`` says what Ctrl-C and SIGTERM do, and the exit statuses."""
    helped = _arena_bot("--help")
    assert helped.returncode == 0, helped
    text = " ".join(helped.stdout.split())
    assert "Ctrl-C or SIGTERM resigns the games under way" in text, text
    assert "(status 130 or 143)" in text and "(exit status 1;" in text, text
