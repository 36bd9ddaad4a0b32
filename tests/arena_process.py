"""The ``arena`` command as a real subprocess, run from the repository root, for the tests:
``run_arena`` runs a command to its end, ``start_node`` starts an ``arena serve`` and waits
until it listens."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def run_arena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``arena ARGS`` (``python -m clients.cli``) to the end; output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def serve_command(*args: str) -> list[str]:
    """``arena serve`` on a free port (``--port 0``) logging JSON lines, plus ``args``."""
    return [
        sys.executable,
        "-m",
        "clients.cli",
        "serve",
        "--port",
        "0",
        "--log-format",
        "json",
        *args,
    ]


class Node:
    """One ``arena serve`` subprocess; its JSON log lines are collected (others in ``other``)."""

    def __init__(self, name: str, proc: asyncio.subprocess.Process, url: str) -> None:
        self.name = name
        self.proc = proc
        self.url = url
        self.lines: list[dict[str, Any]] = []
        self.other: list[bytes] = []
        self.drainer: asyncio.Task[None] | None = None

    def events(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.lines if e.get("event") == event]

    def kill9(self) -> None:
        if self.proc.returncode is None:
            os.kill(self.proc.pid, signal.SIGKILL)


async def start_node(
    argv: list[str], env: dict[str, str] | None = None, name: str = "", cwd: Path = ROOT
) -> Node:
    """Run ``argv`` (an ``arena serve`` command line) and wait for its ``listening`` line."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stderr=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
    )
    assert proc.stderr is not None
    lines: list[dict[str, Any]] = []
    other: list[bytes] = []
    url = None
    try:
        while url is None:
            raw = await asyncio.wait_for(proc.stderr.readline(), 20)
            assert raw, f"node {name} exited before listening: {lines[-3:]} {other[-20:]!r}"
            try:
                entry = json.loads(raw)
            except ValueError:
                other.append(raw)
                continue
            lines.append(entry)
            if entry.get("event") == "listening":
                url = entry["url"]
    except BaseException:  # (too slow to start, cancelled): it must not outlive the test
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        raise
    node = Node(name, proc, url)
    node.lines = lines
    node.other = other

    async def drain() -> None:
        while raw := await proc.stderr.readline():  # type: ignore[union-attr]
            try:
                lines.append(json.loads(raw))
            except ValueError:
                other.append(raw)

    node.drainer = asyncio.create_task(drain())
    return node


async def stop_node(node: Node, clean: bool = True) -> int:
    """SIGTERM, then SIGKILL if still running after 30 s (longer than the server's own
    ``--shutdown-timeout``); wait until its log is read to the end; its exit status.

    With ``clean``, a node that had to end itself (``shutdown_stuck``: its shutdown hung)
    fails the test, with the stacks it logged."""
    if node.proc.returncode is None:
        node.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(node.proc.wait(), 30)
        except TimeoutError:
            node.proc.kill()
            await node.proc.wait()
    if node.drainer is not None:
        await node.drainer
    stuck = node.events("shutdown_stuck")
    assert not (clean and stuck), f"node {node.name}'s shutdown hung: {stuck}"
    assert node.proc.returncode is not None
    return node.proc.returncode
