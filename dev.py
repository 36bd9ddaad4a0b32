"""The two set-up commands of the README: ``python3 dev.py serve`` and ``python3 dev.py test``.

Each installs the project into ``.venv`` when it is missing or ``pyproject.toml`` has
changed since the last install (the only thing a fresh machine needs is Python 3.11+),
then starts the server or runs the whole test suite. ``.ci/run`` runs ``dev.py test``.
Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".arena-installed"

USAGE = """usage: python3 dev.py serve [ARENA SERVE OPTIONS]   install if needed, start the server
       python3 dev.py test [PYTEST OPTIONS]          install if needed, run the test suite
       python3 dev.py install                        install (or update) .venv only"""


def _wanted_stamp() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def install() -> None:
    """Create ``.venv`` and install the project with its development extras, if needed."""
    wanted = _wanted_stamp()
    if STAMP.exists() and STAMP.read_text().strip() == wanted and (BIN / "arena").exists():
        return
    if not (BIN / "python").exists():
        print("dev.py: creating .venv", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("dev.py: installing the project and its dependencies into .venv", file=sys.stderr)
    subprocess.run(
        [str(BIN / "python"), "-m", "pip", "install", "-q", "-e", f"{ROOT}[dev]"],
        check=True,
        cwd=ROOT,
    )
    STAMP.write_text(wanted + "\n")


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 (it runs before anything is installed)
        print("dev.py: Python 3.11 or newer is needed", file=sys.stderr)
        return 2
    if not argv or argv[0] not in ("serve", "test", "install"):
        print(USAGE, file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    try:
        install()
    except subprocess.CalledProcessError as exc:
        print(f"dev.py: the install failed (exit status {exc.returncode})", file=sys.stderr)
        return 1
    if command == "install":
        return 0
    if command == "test":
        pytest = [str(BIN / "python"), "-m", "pytest", "-q", *rest]
        return subprocess.run(pytest, cwd=ROOT).returncode
    arena = str(BIN / "arena")
    os.execv(arena, [arena, "serve", *rest])  # the server owns the terminal and its signals
    return 0  # pragma: no cover (execv does not return)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
