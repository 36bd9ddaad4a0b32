"""``python3 dev.py serve`` and ``dev.py``'s usage, run as a person runs them (a real process).

The install step itself is what ``.ci/run`` exercises on a clean clone (``dev.py test``);
here the project is installed already, so ``dev.py`` must start at once without reinstalling.
"""

from __future__ import annotations

import hashlib
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_dev_serve_prints_where_to_play_and_watch_and_stops_cleanly(tmp_path: Path) -> None:
    stamp = ROOT / ".venv" / ".arena-installed"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text().strip() != wanted:
        pytest.skip(
            "this .venv was not installed by dev.py from this pyproject.toml: "
            "run python3 dev.py install (dev.py test does)"
        )
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "dev.py"),
            "serve",
            "--port",
            "0",
            "--log-format",
            "console",
            "--data-dir",
            str(tmp_path / "data"),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner: list[str] = []
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith(("dev.py: installing", "dev.py: creating")):
                raise AssertionError("dev.py reinstalled an installed project")
            if banner or line.startswith("Collapsi Arena is up on "):
                banner.append(line.rstrip("\n"))
            if len(banner) == 4:
                break
        assert banner, "no banner before the server's stderr closed"
        url = banner[0].split(" on ", 1)[1].split(" ", 1)[0]
        port = int(url.rsplit(":", 1)[1])
        assert port > 0
        assert any("play" in b and "arena" in b for b in banner[1:])
        assert any("watch" in b and "arena" in b for b in banner[1:])
        assert banner[1].split()[1:3] == [".venv/bin/arena", "tui"]  # the full-screen client
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as reply:
            assert reply.status == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_dev_without_a_command_prints_its_usage() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "dev.py")], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "python3 dev.py serve" in result.stderr and "python3 dev.py test" in result.stderr
