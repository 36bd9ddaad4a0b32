"""``arena engine check`` as a user runs it: passes the examples, rejects bad engines
with the reason."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from tests.engine_examples import LANGUAGES, ROOT, bad, example_argv


def engine_check(argv: list[str], *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", "engine", "check", shlex.join(argv), *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_example_engine_passes(language, tmp_path):
    done = engine_check(example_argv(language, tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout
    for words in ("handshake", "big-board+shifting", "collecto", "players-choice", "stop", "quit"):
        assert words in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("PASSED: random-engine")


@pytest.mark.parametrize(
    "mode,message",
    [
        ("crash", "the engine exited instead of answering bestmove (exit status 3)"),
        ("hang", "no bestmove within 0.3s; no bestmove 0.5s after stop"),
        ("illegal", "illegal move '999'; legal:"),
        ("garbage", "it printed 'I think the best move is over there'"),
        ("fragile", "garbage: after lines it must ignore: the engine exited"),
        ("refuse", "FAIL  games: it declined every game"),
    ],
)
def test_bad_engines_fail_with_the_reason(mode, message):
    done = engine_check(bad(mode), "--move-ms", "300")
    assert done.returncode == 1, done.stdout + done.stderr
    assert message in done.stdout, done.stdout
    assert (mode == "refuse") == ("declined every game" in done.stdout), done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith(f"FAILED: bad-{mode}")


def test_an_engine_may_decline_a_game_it_does_not_play():
    """``error`` after ``newgame`` declines that game, which is no failure
    (ENGINE_PROTOCOL.md, Misbehaving engines); declining every game is one."""
    done = engine_check(bad("collapsi-only"), "--move-ms", "300")
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout.splitlines()
    declined = [ln for ln in said if ln.startswith("ok    collecto/base/standard")]
    assert declined and declined[0].endswith(
        "declined (the engine answered error: I play Collapsi only)"
    )
    assert sum("legal answers in time" in ln for ln in said) == 7, done.stdout
    assert said[-1] == "PASSED: bad-collapsi-only, 0 failure(s), declined 1 of 8 games"


def test_a_mistyped_flag_shows_the_subcommands_usage():
    done = engine_check(["./my-engine"], "--move-msec", "300")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: arena engine check "), done.stderr
    assert "arena engine check: error: unrecognized arguments: --move-msec" in done.stderr
