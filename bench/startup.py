"""How long ``arena serve`` takes to start listening, and to stop on SIGTERM.

Each trial starts a fresh ``python -m clients.cli serve --port 0 --log-format
json`` (the same command as ``arena serve``) and times, on the wall clock,
spawn -> its ``listening`` log line, then SIGTERM -> exit. The process's own
CPU time at ``listening`` is read from ``/proc`` too: on a shared machine it is
the steadier figure. In the same run, alternating, a bare interpreter
(``python -c pass``) is timed the same way as the baseline, so the table also
gives the server's start as a multiple of starting Python at all.

    .venv/bin/python bench/startup.py [--trials 10] [--json PATH]
"""

from __future__ import annotations

import argparse
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


def serve_once(data_dir: Path) -> dict[str, float]:
    """One server: seconds to ``listening`` (wall and CPU), then SIGTERM to exit."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*SERVE, "--data-dir", str(data_dir)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        for raw in proc.stderr:
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
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
    return {"listening_s": listening, "cpu_s": cpu, "stop_s": stopped}


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
    args = parser.parse_args(argv)
    if args.trials < 1:
        parser.error("--trials must be at least 1")
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
        "python_s": {"median": statistics.median(bare), "max": max(bare)},
        "load": [load0, load1],
    }
    rows = [
        ("arena serve: spawn -> listening", res["listening_s"]),
        ("arena serve: its CPU at listening", res["cpu_s"]),
        ("arena serve: SIGTERM -> exit", res["stop_s"]),
        ("python -c pass (baseline)", res["python_s"]),
    ]
    print(f"{args.trials} trials; load average {load0} -> {load1} on {os.cpu_count()} CPUs\n")
    print(f"{'':<36}{'median s':>10}{'max s':>9}")
    for name, fig in rows:
        print(f"{name:<36}{fig['median']:>10.3f}{fig['max']:>9.3f}")
    ratio = res["listening_s"]["median"] / res["python_s"]["median"]
    print(
        f"\nstart to listening: {ratio:.1f}x a bare interpreter's run; "
        f"target under 1 s: {'met' if res['listening_s']['max'] < 1 else 'NOT met'} (max)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
