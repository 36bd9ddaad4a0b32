"""How long the measured runner waited for its CPU while other tasks held it.

bench/bot.py ``--trace`` (with ``--pin``) records the kernel's task switches, wake-ups
and the runner's tasks' system call returns on its CPU with ftrace (stamped with
CLOCK_MONOTONIC, the clock of ``time.perf_counter``). From them it knows when the
runner's tasks (the runner's threads, its engines) were ready to run on the runner's CPU
but did not: from a wake-up, or a switch away while still runnable (preempted), until
the task is seen running (its switch in, or any event of its own there: on the machine
this was written on, no switch away from the VM's agent is ever recorded, so a switch
in after it is missing too); less the times another of its own tasks ran (its engine,
say). What is left is time other programs held the CPU, which the runner could not have
used whatever it did. Needs root and tracefs; the tracer's settings are put back.
"""

from __future__ import annotations

import bisect
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")
#: the filter of the system calls' returns: the runner's tasks on its CPUs only (their
#: first return once switched in says they run, where the switch itself is not recorded)
_EXIT_FILTER = "events/raw_syscalls/sys_exit/filter"
#: the measured runner's tasks and its engines' (bench/instant_engine.c or .py): on the
#: runner's CPU these are its own; any other Python there counts as its own too (the
#: figure then errs against the runner)
OWN_COMMS = frozenset(
    ("python", "python3", Path(sys.executable).name[:15], "instant_engine")  # (comm: 15)
)
_SWITCH = re.compile(
    r"\[(\d+)\]\s+\S+\s+([\d.]+): sched_switch: prev_comm=(.+?) prev_pid=(\d+) "
    r"prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.+?) next_pid=(\d+) "
)
#: a line's task (the one running as the event came), its CPU and stamp
_TASK = re.compile(r"^\s*(.+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): ")
_WAKEUP = re.compile(r"\s([\d.]+): sched_wakeup: comm=(.+?) pid=(\d+) prio=\d+ target_cpu=(\d+)")
#: (put back in the reverse order: tracing_on last)
_SETTINGS = ("tracing_on", "trace_clock", "buffer_size_kb", "set_event", _EXIT_FILTER)
_LOST = re.compile(r"entries-in-buffer/entries-written: (\d+)/(\d+)")

Spans = list[tuple[float, float]]


class CpuTrace:
    """ftrace's record while the bench runs: start, halt as the run ends, collect."""

    def __init__(self, cpus: set[int], keep: Path | None = None) -> None:
        self.cpus = cpus
        self.keep = keep  # (a copy of the raw record, ftrace's text, for a closer look)
        self._saved: dict[str, str] = {}
        self.events = 0  # on the runner's CPUs, and its tasks' wake-ups to them
        self.lost = 0  # events the buffer had no room for (the figures then miss waits)
        #: the disjoint spans (s) in which the runner's tasks waited while others ran,
        #: and who was switched in as each began
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.holder: list[str] = []

    @staticmethod
    def usable() -> str | None:
        """None, or why tracing cannot be used here."""
        if not (TRACEFS / "trace").exists():
            return f"no tracefs at {TRACEFS} (mount -t tracefs nodev {TRACEFS}, as root)"
        if not os.access(TRACEFS / "tracing_on", os.W_OK):
            return "cannot use ftrace: run as root"
        return None

    def _set(self, name: str, value: str) -> None:
        (TRACEFS / name).write_text(value)

    def start(self) -> None:
        for name in _SETTINGS:
            text = (TRACEFS / name).read_text()
            if name == "trace_clock":  # "[local] global mono ..." -> the one in brackets
                text = re.search(r"\[(\w+)\]", text).group(1)  # type: ignore[union-attr]
            elif name == "buffer_size_kb":  # "7 (expanded: 1408)": 1408 once in use
                text = text.split()[-1].rstrip(")")
            elif name == _EXIT_FILTER and text.strip() == "none":
                text = "0"  # (clears a filter)
            self._saved[name] = text.strip()
        try:
            self._begin()
        except OSError:
            self._put_back()
            raise

    def _begin(self) -> None:
        self._set("tracing_on", "0")
        self._set("trace_clock", "mono")
        self._set("buffer_size_kb", "32768")
        cpus = " || ".join(f"CPU == {c}" for c in sorted(self.cpus))
        comms = " || ".join(f'COMM == "{c}"' for c in sorted(OWN_COMMS))
        self._set(_EXIT_FILTER, f"({cpus}) && ({comms})")
        self._set("set_event", "sched:sched_switch sched:sched_wakeup raw_syscalls:sys_exit")
        self._set("trace", "")
        self._set("tracing_on", "1")

    def halt(self) -> None:
        """Stop recording (at once, as the run ends; :meth:`collect` reads it later)."""
        self._set("tracing_on", "0")

    def collect(self) -> None:
        """Read the record, then put the tracer's settings back."""
        try:
            text = (TRACEFS / "trace").read_text()
            if self.keep is not None:
                self.keep.write_text(text)
            if (lost := _LOST.search(text)) is not None:
                self.lost = int(lost.group(2)) - int(lost.group(1))
            self._read(text.splitlines())
        finally:
            self._put_back()

    def _put_back(self) -> None:
        self._set("tracing_on", "0")
        self._set("trace", "")
        for name in reversed(_SETTINGS):
            if name in self._saved:
                self._set(name, self._saved[name])

    def _read(self, lines: list[str]) -> None:
        running: Spans = []  # the runner's tasks on its CPUs
        waiting: Spans = []  # ready to run there, not running
        ready_since: dict[int, float] = {}  # own task -> since when it waits
        ran_since: dict[int, float] = {}  # own task -> since when it runs
        switched_in: list[tuple[float, str]] = []  # (when, who) others switched in

        def runs(pid: int, ts: float) -> None:
            if pid not in ran_since:
                ran_since[pid] = ts
                if (since := ready_since.pop(pid, None)) is not None:
                    waiting.append((since, ts))

        def woken(line: str) -> None:  # (a wake-up of one of its tasks, to its CPU)
            w = _WAKEUP.search(line)
            if w is None or int(w.group(4)) not in self.cpus or w.group(2) not in OWN_COMMS:
                return
            if (pid := int(w.group(3))) not in ran_since:
                ready_since.setdefault(pid, float(w.group(1)))

        for line in lines:
            if (t := _TASK.match(line)) is None or int(t.group(3)) not in self.cpus:
                woken(line)  # (from another CPU)
                continue
            self.events += 1
            ts = float(t.group(4))
            if t.group(1) in OWN_COMMS:  # (whatever the event: it runs now)
                runs(int(t.group(2)), ts)
            if (s := _SWITCH.search(line)) is not None:
                prev_pid = int(s.group(4))
                if (since := ran_since.pop(prev_pid, None)) is not None:
                    running.append((since, ts))
                    if s.group(5).startswith("R"):  # preempted: still ready to run
                        ready_since.setdefault(prev_pid, ts)
                if s.group(6) in OWN_COMMS:
                    runs(int(s.group(7)), ts)
                elif int(s.group(7)) != 0:
                    switched_in.append((ts, s.group(6)))
            else:
                woken(line)
        spans = _minus(_union(waiting), _union(running))
        self.starts = [a for a, _ in spans]
        self.ends = [b for _, b in spans]
        when = [t for t, _ in switched_in]
        for a, _ in spans:
            i = bisect.bisect_right(when, a) - 1
            self.holder.append(switched_in[i][1] if i >= 0 else "?")

    def others(self, start: float, end: float, but: Spans | None = None) -> dict[str, float]:
        """Seconds within [start, end], less the spans ``but`` (the engine's own time,
        counted apart), in which the runner's tasks waited while others held the CPU, by
        the task switched in last before each wait began."""
        held: dict[str, float] = defaultdict(float)
        for a, b in _minus([(start, end)], _union(but or [])):
            i = max(0, bisect.bisect_right(self.starts, a) - 1)
            while i < len(self.starts) and self.starts[i] < b:
                overlap = min(self.ends[i], b) - max(self.starts[i], a)
                if overlap > 0:
                    held[self.holder[i]] += overlap
                i += 1
        return dict(held)


def _union(spans: Spans) -> Spans:
    out: Spans = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _minus(spans: Spans, cut: Spans) -> Spans:
    """``spans`` less ``cut`` (both disjoint and sorted)."""
    out: Spans = []
    j = 0
    for a, b in spans:
        while j < len(cut) and cut[j][1] <= a:
            j += 1
        k = j
        while k < len(cut) and cut[k][0] < b:
            if cut[k][0] > a:
                out.append((a, cut[k][0]))
            a = max(a, cut[k][1])
            k += 1
        if a < b:
            out.append((a, b))
    return out
