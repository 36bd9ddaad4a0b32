"""The example engines (clients/examples) as argument lists, for the tests that run them.

The C engine is compiled by :func:`example_argv` with the system compiler into a
temporary directory; a missing ``node`` or compiler skips with the reason.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "clients" / "examples"
BAD = Path(__file__).resolve().parent / "engines" / "bad_engine.py"
THINKER = Path(__file__).resolve().parent / "engines" / "thinker_engine.py"
LANGUAGES = ("python", "node", "c")


def bad(mode: str) -> list[str]:
    """A misbehaving engine (tests/engines/bad_engine.py) in ``mode``."""
    return [sys.executable, str(BAD), mode]


def thinker(seconds: float) -> list[str]:
    """tests/engines/thinker_engine.py: thinks ``seconds`` a move, in a thread."""
    return [sys.executable, str(THINKER), str(seconds)]


def example_argv(language: str, workdir: Path) -> list[str]:
    """The command line of the example engine in ``language``."""
    if language == "python":
        return [sys.executable, str(EXAMPLES / "python" / "random_engine.py")]
    if language == "node":
        node = shutil.which("node")
        if node is None:
            pytest.skip("node is not on PATH: the Node example engine cannot run")
        return [node, str(EXAMPLES / "node" / "random_engine.mjs")]
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc or gcc) on PATH: the C example engine cannot be built")
    exe = workdir / "random_engine"
    if not exe.exists():
        subprocess.run(
            [
                compiler,
                "-O2",
                "-Wall",
                "-Werror",
                "-o",
                str(exe),
                str(EXAMPLES / "c" / "random_engine.c"),
            ],
            check=True,
            timeout=60,
        )
    return [str(exe)]
