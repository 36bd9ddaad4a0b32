"""How long ``arena serve`` takes to start listening, and to stop on SIGTERM.

Each trial starts a fresh ``python -m clients.cli serve --port 0 --log-format
json`` (the same command as ``arena serve``) and times, on the wall clock,
spawn -> its ``listening`` log line, then SIGTERM -> exit. The process's own
CPU time at ``listening`` is read from ``/proc`` too: on a shared machine it is
the steadier figure. In the same run, alternating, a bare interpreter
(``python -c pass``) is timed the same way as the baseline, so the table also
gives the server's start as a multiple of starting Python at all.

With ``--records N --games M`` the data dir is first filled (not timed) as a busy
single node leaves it (``bench/populate.py``: N finished games' records, M games in
progress, cloned from real logs), so each start also opens the SQLite store and
restores M games from their logs (the server's own ``restore_ms`` is reported too).

    .venv/bin/python bench/startup.py [--trials 10] [--records 10000 --games 500]
        [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVE = [sys.executable, "-m", "clients.cli", "serve", "--port", "0", "--log-format", "json"]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a live process, from ``/proc/PID/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def serve_once(data_dir: Path) -> dict[str, Any]:
    """One server: seconds to ``listening`` (wall and CPU), then SIGTERM to exit."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*SERVE, "--data-dir", str(data_dir)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    restored: dict[str, Any] = {}
    try:
        for raw in proc.stderr:
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if entry.get("event") == "previous_run_restored":
                restored = entry
            if entry.get("event") == "listening":
                break
        else:
            raise RuntimeError("the server exited before listening")
        listening = time.perf_counter() - t0
        cpu = cpu_seconds(proc.pid)
        t1 = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
        stopped = time.perf_counter() - t1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        raise RuntimeError(f"the server exited with {proc.returncode} on SIGTERM")
    return {
        "listening_s": listening,
        "cpu_s": cpu,
        "stop_s": stopped,
        "restore_s": restored.get("restore_ms", 0) / 1000,
        "games": restored.get("games", 0),
    }


def python_once() -> float:
    """The baseline: a bare interpreter started and finished."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, cwd=ROOT)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=10, help="servers started (10)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument(
        "--data-dir", default="/tmp/arena-startup-bench", help="the servers' --data-dir"
    )
    parser.add_argument(
        "--records", type=int, default=0, help="finished games' records in the data dir (0)"
    )
    parser.add_argument("--games", type=int, default=0, help="games in progress to restore (0)")
    args = parser.parse_args(argv)
    if args.trials < 1:
        parser.error("--trials must be at least 1")
    if args.records or args.games:
        import shutil

        from populate import populate

        shutil.rmtree(args.data_dir, ignore_errors=True)
        asyncio.run(populate(Path(args.data_dir), args.records, args.games))
    load0 = Path("/proc/loadavg").read_text().split()[0]
    runs: list[dict[str, float]] = []
    bare: list[float] = []
    for _ in range(args.trials):
        bare.append(python_once())
        runs.append(serve_once(Path(args.data_dir)))
    load1 = Path("/proc/loadavg").read_text().split()[0]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    res: dict[str, Any] = {
        "command": " ".join(["bench/startup.py", *sys.argv[1:]]),
        "trials": args.trials,
        "listening_s": {"median": med("listening_s"), "max": max(r["listening_s"] for r in runs)},
        "cpu_s": {"median": med("cpu_s"), "max": max(r["cpu_s"] for r in runs)},
        "stop_s": {"median": med("stop_s"), "max": max(r["stop_s"] for r in runs)},
        "restore_s": {"median": med("restore_s"), "max": max(r["restore_s"] for r in runs)},
        "records": args.records,
        "games": args.games,
        "games_restored": min(r["games"] for r in runs),
        "python_s": {"median": statistics.median(bare), "max": max(bare)},
        "load": [load0, load1],
    }
    rows = [
        ("arena serve: spawn -> listening", res["listening_s"]),
        ("arena serve: its CPU at listening", res["cpu_s"]),
        ("arena serve: SIGTERM -> exit", res["stop_s"]),
        ("of which restoring games (its log)", res["restore_s"]),
        ("python -c pass (baseline)", res["python_s"]),
    ]
    print(f"data dir: {args.records} records, {args.games} games in progress; ", end="")
    print(f"{args.trials} trials; load average {load0} -> {load1} on {os.cpu_count()} CPUs\n")
    print(f"{'':<36}{'median s':>10}{'max s':>9}")
    for name, fig in rows:
        print(f"{name:<36}{fig['median']:>10.3f}{fig['max']:>9.3f}")
    ratio = res["listening_s"]["median"] / res["python_s"]["median"]
    print(
        f"\nstart to listening: {ratio:.1f}x a bare interpreter's run; "
        f"target under 1 s: {'met' if res['listening_s']['max'] < 1 else 'NOT met'} (max)"
    )
    if args.records or args.games:
        ok = res["listening_s"]["max"] < 2 and res["games_restored"] == args.games
        print(
            f"with {args.records} records and {args.games} games in progress "
            f"({res['games_restored']} restored): target under 2 s: "
            f"{'met' if ok else 'NOT met'} (max)"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
