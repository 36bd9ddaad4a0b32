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
        ("refuse", "refused: the engine answered error: I play nothing"),
    ],
)
def test_bad_engines_fail_with_the_reason(mode, message):
    done = engine_check(bad(mode), "--move-ms", "300")
    assert done.returncode == 1, done.stdout + done.stderr
    assert message in done.stdout, done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith(f"FAILED: bad-{mode}")
