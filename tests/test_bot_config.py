"""arena bot's TOML config file: the flags' names as keys (either spelling), a string
for a list as a flag's words, and a value of the wrong type named in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from clients.bot.config import ConfigError, build, load_toml


def _config(tmp_path: Path, text: str):
    path = tmp_path / "bot.toml"
    path.write_text('name = "b"\nlevel = "random"\n' + text)
    return build(load_toml(path), {})


def test_keys_take_the_flags_spelling_and_a_string_is_its_words(tmp_path: Path) -> None:
    cfg = _config(tmp_path, 'quick-match = "collapsi collapsi/shifting"\nmax-strikes = 5\n')
    assert cfg.quick_match == ["collapsi", "collapsi/shifting"] and cfg.max_strikes == 5


@pytest.mark.parametrize(
    "line,message",
    [
        ('games = "one"', "games must be a whole number, got 'one'"),
        ("games = true", "games must be a whole number, got True"),
        ("quick_match = [1]", "quick_match must be a list of strings, got [1]"),
        ("rated = 1", "rated must be true or false, got 1"),
    ],
)
def test_a_value_of_the_wrong_type_is_named(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _config(tmp_path, line + "\n")
