"""The command line shared by the generated files (``protocol/schema``, ``protocol/vectors``).

Each module renders its file from the models; this prints it, ``--write`` saves it and
``--check`` exits 1 when the committed copy is stale, so both behave the same way.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def generated_file_main(
    module: str,
    path: Path,
    render: Callable[[], str],
    description: str | None,
    argv: list[str] | None = None,
) -> int:
    """Run ``python -m <module> [--write | --check]`` for the file at ``path``."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=description)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help=f"write {path.name}")
    group.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
        return 0
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print(f"{path} is out of date: run python -m {module} --write")
            return 1
        return 0
    sys.stdout.write(text)
    return 0
