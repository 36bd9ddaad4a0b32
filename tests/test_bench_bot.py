"""bench/bot.py keeps working: a tiny run through a real subprocess (a server, the slow
opponent runner, the measured runner), its table and JSON checked for sane figures; and
bench/bot_floor.py (its relay and engine real processes too).

Only that it runs and measures what it says; the runner's time is never asserted here.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from tests.bench_run import run_bench

#: the C engine is built with the system's compiler (bench/instant_engine.c)
NEEDS_CC = pytest.mark.skipif(
    shutil.which("cc") is None, reason="no C compiler (cc) to build bench/instant_engine.c"
)

#: uvloop (a dependency where CPython runs on Linux or macOS: pyproject.toml)
NEEDS_UVLOOP = pytest.mark.skipif(
    importlib.util.find_spec("uvloop") is None, reason="uvloop is not installed"
)


@pytest.mark.parametrize(
    ("engine", "loop"),
    [
        pytest.param("c", "asyncio", marks=NEEDS_CC),
        ("python", "asyncio"),
        pytest.param("python", "uvloop", marks=NEEDS_UVLOOP),
    ],
)
def test_bench_bot_tiny_run(tmp_path: Path, engine: str, loop: str) -> None:
    stdout, res = run_bench(
        "bot.py",
        "--engine", engine,
        "--event-loop", loop,
        "--games", "3",
        "--concurrency", "3",
        "--opponent-ms", "1000",
        json_to=tmp_path / "bot.json",
    )  # fmt: skip
    assert "runner p99 ms" in stdout, stdout
    assert res["games"] == 3 and res["exit"] == 0, res
    # every game overlapped the others: the opponent waits 1 s a move (a loaded machine
    # starts each engine slowly, and the games start one after another)
    assert res["peak_under_way"] == 3, res
    # one measured move per turn of the measured runner's seat, each with the engine's
    # own time taken out of the turn's: what is left is the runner's, never negative
    assert res["moves"] >= 3, res
    # every move was sent from the engine answer's callback, a game's first too (its
    # search begun as the engine's readyok to the game's newgame was read)
    assert res["sent_at_once"] >= res["moves"], res
    assert 0 < res["runner_p50_ms"] <= res["runner_max_ms"], res
    assert res["engine_p50_ms"] > 0, res  # (the engine's own stamps were read)
    # the parts of a move: the kernel's stamp of the frame comes before the runner reads
    # it (one clock for both, within its conversion's microseconds), each part in order
    assert res["parts_moves"] >= 1, res
    assert res["socket_wait_p50_ms"] > -0.05 and res["to_engine_p50_ms"] > 0, res
    assert res["engine"] == engine and res["event_loop"] == loop, res


@NEEDS_CC
@pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2 or shutil.which("taskset") is None,
    reason="--pin needs two CPUs and taskset (util-linux)",
)
def test_bench_bot_pinned_tiny_run(tmp_path: Path) -> None:
    """``--pin``: the measured runner on one CPU, the server and the opponent on the rest."""
    stdout, res = run_bench(
        "bot.py", "--pin", "--games", "2", "--concurrency", "2", "--opponent-ms", "500",
        json_to=tmp_path / "bot.json",
    )  # fmt: skip
    first, *others = sorted(os.sched_getaffinity(0))
    assert res["pinned"] == [[first], others], res
    assert f"on CPU [{first}] (the server and the opponent on {others})" in stdout, stdout
    assert res["games"] == 2 and res["exit"] == 0 and res["moves"] >= 2, res


@pytest.mark.parametrize("engine", [pytest.param("c", marks=NEEDS_CC), "python"])
def test_bench_bot_floor_tiny_run(tmp_path: Path, engine: str) -> None:
    stdout, res = run_bench(
        "bot_floor.py",
        "--engine", engine,
        "--messages", "30",
        "--gap-ms", "2",
        json_to=tmp_path / "floor.json",
    )  # fmt: skip
    assert "relay p50 ms" in stdout, stdout
    # every message went through the engine and back; the relay's time is never negative
    # (the kernel's stamp comes first), and the engine's own stamps were read
    assert res["messages"] == 30, res
    assert 0 < res["p50_ms"] <= res["p99_ms"] <= res["max_ms"], res
    assert res["engine_p50_ms"] > 0, res
    assert res["engine"] == engine, res


def _why_no_trace() -> str | None:
    if len(os.sched_getaffinity(0)) < 2 or shutil.which("taskset") is None:
        return "--pin needs two CPUs and taskset (util-linux)"
    if os.geteuid() != 0 or not Path("/sys/kernel/tracing/trace").exists():
        return "--trace needs root and tracefs mounted at /sys/kernel/tracing"
    return None


@NEEDS_CC
@pytest.mark.skipif(_why_no_trace() is not None, reason=str(_why_no_trace()))
def test_bench_bot_traced_tiny_run(tmp_path: Path) -> None:
    """``--trace``: the task switches on the runner's CPU are recorded, each move's time
    less what other tasks held of that CPU is given, and the tracer is left as found."""
    settings = ("trace_clock", "tracing_cpumask", "set_event", "tracing_on")
    before = {name: Path("/sys/kernel/tracing", name).read_text() for name in settings}
    stdout, res = run_bench(
        "bot.py", "--pin", "--trace", "--games", "2", "--concurrency", "2",
        "--opponent-ms", "500", json_to=tmp_path / "bot.json",
    )  # fmt: skip
    assert res["traced"] and res["trace_events"] > 0 and res["trace_lost"] == 0, res
    assert "Other tasks on the runner's CPU (traced)" in stdout, stdout
    for at, runner, _, _, others in res["each_move"]:
        assert 0 <= others <= runner + 0.05, (at, runner, others)  # (within the move)
    assert res["less_others_p99_ms"] <= res["runner_p99_ms"], res
    after = {name: Path("/sys/kernel/tracing", name).read_text() for name in settings}
    assert after == before
