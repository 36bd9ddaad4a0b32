"""A/B of two versions of the Collapsi solver, deal by deal in one run.

Each version runs in its own worker process, importing ``engine`` and
``bench/solver.py`` from its own checkout (a ``git worktree`` of the base
commit, say), and times the solves exactly as ``bench/solver.py`` does (same
deals, same warm-up, same ``first`` and ``cold`` modes, process CPU time).
The driver alternates: each deal and mode goes to A, then B, swapping the
order every other deal, so load on the machine falls on both alike. Printed:
per rule set, solve and mode, each side's median and 90th percentile, B/A of
both, and whether the positions stored agree (they differ only when the
search itself changed).

    git worktree add --detach /tmp/solver-base BASE
    .venv/bin/python bench/solver_ab.py /tmp/solver-base . [--deals 100] [--kinds win/loss length]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

WORKER = """
import json, sys
sys.path[:0] = [{tree!r}, {tree!r} + "/bench"]
import solver as B
kinds = dict(B.KINDS)
timers = {{"first": B.time_first, "cold": B.time_cold}}
warm, deals = {{}}, {{}}
for rules in {rules!r}:
    for pos in B.bench_deals(rules, {warm_up}, seed="bench-warm-up"):
        B.solve_analysis(pos)
    warm[rules] = B.MemoState(rules)
    deals[rules] = B.bench_deals(rules, {deals})
print("ready", flush=True)
for line in sys.stdin:
    rules, kind, mode, i = json.loads(line)
    ms, nodes = timers[mode](kinds[kind], deals[rules][i], warm[rules])
    print(json.dumps([ms, nodes]), flush=True)
"""


class Worker:
    """One version's solver in its own process."""

    def __init__(self, tree: str, args: argparse.Namespace) -> None:
        code = WORKER.format(
            tree=str(Path(tree).resolve()), rules=args.rules, warm_up=args.warm_up, deals=args.deals
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"worker for {tree} failed to start")

    def time(self, rules: str, kind: str, mode: str, i: int) -> tuple[float, int]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps([rules, kind, mode, i]) + "\n")
        self.proc.stdin.flush()
        ms, nodes = json.loads(self.proc.stdout.readline())
        return ms, nodes

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def positions(nodes_of: dict[tuple[str, str], list[int]], kind: str) -> str:
    """``same`` when both searches stored the same positions on every deal, else the medians."""
    a, b = nodes_of[(kind, "A")], nodes_of[(kind, "B")]
    if a == b:
        return "same"
    return f"A median {statistics.median(a):.0f}, B {statistics.median(b):.0f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("a", help="checkout of version A (the base)")
    ap.add_argument("b", help="checkout of version B (the change)")
    ap.add_argument("--deals", type=int, default=100)
    ap.add_argument("--warm-up", type=int, default=100)
    ap.add_argument("--rules", nargs="*", default=["classic", "standard"])
    ap.add_argument("--kinds", nargs="*", default=["win/loss", "length"])
    ap.add_argument("--modes", nargs="*", default=["first", "cold"])
    args = ap.parse_args(argv)
    workers = {"A": Worker(args.a, args), "B": Worker(args.b, args)}
    try:
        for rules in args.rules:
            times: dict[tuple[str, str, str], list[float]] = {}
            nodes_of: dict[tuple[str, str], list[int]] = {}
            for i in range(args.deals):
                order = ("A", "B") if i % 2 == 0 else ("B", "A")
                for kind in args.kinds:
                    nodes = {}
                    for mode in args.modes:
                        for side in order:
                            ms, nodes[side] = workers[side].time(rules, kind, mode, i)
                            times.setdefault((kind, mode, side), []).append(ms)
                    for side in order:
                        nodes_of.setdefault((kind, side), []).append(nodes[side])
            for kind in args.kinds:
                for mode in args.modes:
                    a, b = times[(kind, mode, "A")], times[(kind, mode, "B")]
                    ma, mb = statistics.median(a), statistics.median(b)
                    pa, pb = pct(a, 0.9), pct(b, 0.9)
                    print(
                        f"{rules:8s} {kind:8s} {mode:5s}  A median {ma:7.2f} p90 {pa:7.2f}"
                        f"  B median {mb:7.2f} p90 {pb:7.2f}  B/A median {mb / ma:.2f}"
                        f" p90 {pb / pa:.2f}  positions {positions(nodes_of, kind)}",
                        flush=True,
                    )
    finally:
        for w in workers.values():
            w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
