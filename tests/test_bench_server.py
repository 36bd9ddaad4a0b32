"""bench/server.py keeps working: a tiny run through a real subprocess, its table and JSON checked.

Only that it runs and reports sane figures; speed itself is never asserted in tests.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.bench_run import ROOT, run_bench


def test_bench_server_tiny_run(tmp_path: Path) -> None:
    stdout, res = run_bench(
        "server.py",
        "--games", "2",
        "--duration", "1",
        "--warmup", "0.3",
        "--rounds", "1",
        "--workers", "1",
        "--connections", "40",
        "--idle-seconds", "0.5",
        "--think", "0.1,0.05",
        json_to=tmp_path / "server.json",
    )  # fmt: skip
    text = stdout
    for line in (
        "arena moves, new rooms",
        "arena moves, in room",
        "server CPU per move in echoes / relayed messages of the same run: in room ",
        "echo messages",
        "relay messages",
        "arena, think 0.1 s",
        "arena, think 0.05 s",
        "arena/relay",
        "arena/echo rate ratio:",
        "move p99, instant moves:",
        "move p99, think 0.1 s (",
        "idle: 40 of 40",
        "logged-in connections per GiB (target >= 40,000: ",
    ):
        assert line in text, text
    arena, echo, relay, idle = res["arena"], res["echo"], res["relay"], res["idle"]
    assert [p["think"] for p in res["paced"]] == [0.1, 0.05]
    paced = res["paced"][0]
    # games were really played: moves counted, whole games finished, nothing refused
    assert arena["count"] > 0 and arena["games"] > 0, res
    assert arena["count"] >= 5 * arena["games"], res  # a Collapsi game has several plies
    assert arena["errors"] == {} and echo["errors"] == {} and paced["errors"] == {}, res
    inroom = res["inroom"]  # rematches in one room: whole games too, none refused
    assert inroom["games"] > 0 and inroom["count"] >= 5 * inroom["games"], res
    assert inroom["errors"] == {}, res
    assert paced["count"] > 0 and paced["rate"] < arena["rate"], res  # thinking is slower
    assert echo["count"] > 0 and relay["count"] > 0 and relay["errors"] == {}
    assert all(p["count"] > 0 and p["errors"] == {} for p in res["paced"]), res
    assert 0 < arena["median_ms"] <= arena["p99_ms"]
    assert res["ratio"] == arena["rate"] / echo["rate"]
    assert res["made_bytes"] > res["move_bytes"] > 0  # echo frames are move_made sized
    assert idle["open"] == 40 and idle["held"] >= 40 and idle["errors"] == {}
    assert idle["rss"] >= idle["rss_base"] > 0
    assert idle["cpu_us_per_conn_s"] >= 0 and idle["seconds"] >= 0.5


def test_bench_server_cpu_tiny_run() -> None:
    """bench/server_cpu.py (the in-process driver) plays whole games and reports."""
    stdout, _ = run_bench("server_cpu.py", "--pairs", "2", "--games", "2", "--rounds", "2")
    assert "CPU per move (server and clients, no syscalls): min " in stdout
    per_game = float(stdout.split(";")[-1].split()[0])
    assert 2 <= per_game <= 20, stdout  # real Collapsi games were played


def test_bench_server_cpu_counts_calls_per_move(tmp_path: Path) -> None:
    """bench/server_cpu.py --profile: also Python calls per move, a count load does not move."""
    args = ("--pairs", "2", "--games", "1", "--rounds", "2", "--profile", str(tmp_path / "prof"))
    stdout, _ = run_bench("server_cpu.py", *args)
    line = stdout.strip().splitlines()[-1]
    assert line.startswith("Python function calls per move (profiled): "), line
    assert 100 < float(line.split(": ")[1]) < 100_000, line  # hundreds of calls, never none
    assert (tmp_path / "prof").stat().st_size > 0


def test_bench_server_instr_native_tiny_run(tmp_path: Path) -> None:
    """bench/server_instr.py runs a checkout's real ``arena serve`` (here this one, twice
    as two roots) through its fixed games and reports per move; ``--native`` skips
    valgrind (minutes under it), ``--strace`` counts system calls when strace is here."""
    args = ["--native", "--pairs", "2", "--games", "1", "--rounds", "1", "--root", str(ROOT)]
    args.append("--rematch")
    strace = shutil.which("strace") is not None
    if strace:
        args.append("--strace")
    stdout, res = run_bench("server_instr.py", *args, json_to=tmp_path / "instr.json")
    assert "CPU us per move, rematches in one room, memory presence" in stdout
    (runs,) = res["runs"].values()
    (run,) = runs
    assert 2 * 4 <= run["moves"] <= 2 * 40, run  # two real games were played and counted
    assert run["cpu_us"] >= 0
    if strace:  # every move is read from one socket and written to two
        assert sum(run["syscalls"].values()) >= 2, run["syscalls"]
