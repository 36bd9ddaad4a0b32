"""``arena tournament run`` as a user runs it: a real subprocess on 4x4 Collapsi with
built-in levels and iteration budgets (deterministic), its records, SPRT, formats,
adjudication and resuming after ``kill -9``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from arena_process import ROOT, run_arena

from engine.base import GameRecord, replay
from engine.collapsi.solver import solve_winner

LADDER = ["random", "greedy", "mcts", "perfect"]  # bench/ladder.py's rungs, weakest first
FOUR = [
    "--level", "random", "--level", "greedy",
    "--engine", "name=mcts,level=mcts,iterations=300", "--level", "perfect",
]  # fmt: skip


def tournament(out: Path, *args: str, timeout: float = 240) -> dict[str, Any]:
    proc = run_arena("tournament", "run", "--out", str(out), "--json", *args, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def outcomes(out: Path) -> dict[str, tuple[Any, ...]]:
    """What must not depend on timing: per game id, the players, deal, moves and result."""
    return {
        r["tournament"]["id"]: (r["players"], r["setup"], r["moves"], r["result"])
        for r in records(out)
    }


def totals(summary: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(r["name"], r["games"], r["points"], r["penta"]) for r in summary["standings"]]


def test_round_robin_of_four_levels(tmp_path: Path) -> None:
    args = [*FOUR, "--deals", "3", "--concurrency", "2", "--seed", "11"]
    first = tournament(tmp_path / "a", *args)
    second = tournament(tmp_path / "b", *args)
    assert first["games"] == 6 * 3 * 2 and first["stopped"] == "complete"
    # deterministic: the same games, moves and results, the same table
    assert outcomes(tmp_path / "a") == outcomes(tmp_path / "b")
    assert totals(first) == totals(second)
    # every deal was played once per seat order, by the same players
    games = records(tmp_path / "a")
    pairs: dict[str, list[dict[str, Any]]] = {}
    for g in games:
        pairs.setdefault(g["tournament"]["id"].rsplit(".", 1)[0], []).append(g)
    assert len(pairs) == 18
    for pair in pairs.values():
        a, b = pair
        assert a["setup"] == b["setup"] and a["players"] == b["players"][::-1]
    # the Elo order agrees with the ladder (a perfect score has no finite Elo: order by score)
    ranked = [r["name"] for r in first["standings"]]
    assert ranked == LADDER[::-1]
    elos = [r["elo"] for r in first["standings"] if r["elo"] is not None]
    assert elos == sorted(elos, reverse=True)
    # the records replay to their final positions and results
    for g in games:
        game = replay(GameRecord.from_dict(g))
        assert game.position() == g["tournament"]["final_position"]
        assert game.result() is not None and game.result().to_dict() == g["result"]
    crosstable = first["crosstable"]
    assert crosstable["perfect"]["random"]["games"] == 6
    assert (
        crosstable["perfect"]["random"]["points"] + crosstable["random"]["perfect"]["points"] == 6
    )


def test_sprt_stops_with_h1_on_a_large_gap(tmp_path: Path) -> None:
    from clients.tournament.sprt import Sprt

    # the SPRT tests the first participant against the second
    summary = tournament(
        tmp_path / "t", "--level", "perfect", "--level", "random", "--deals", "100",
        "--concurrency", "2", "--sprt", "elo0=0,elo1=100,alpha=0.05,beta=0.05",
    )  # fmt: skip
    sprt = summary["sprt"]
    assert summary["stopped"] == "sprt_H1" and sprt["decision"] == "H1"
    assert summary["games"] < 60  # of 200 planned: it stopped as soon as the bound was crossed
    penta = next(r for r in summary["standings"] if r["name"] == "perfect")["penta"]
    assert sum(penta) == summary["games"] // 2
    assert sprt["llr"] == pytest.approx(Sprt(0, 100).llr_penta(penta))
    assert sprt["llr"] >= sprt["upper_bound"]
    # the pairs before the last one had not crossed it: the run stopped at the first crossing
    counted = [g for g in records(tmp_path / "t") if g["tournament"]["deal"] < sum(penta) - 1]
    earlier = [0] * 5
    for deal in {g["tournament"]["deal"] for g in counted}:
        pair = [g for g in counted if g["tournament"]["deal"] == deal]
        earlier[
            sum(2 * (g["result"]["winner"] == g["players"].index("perfect")) for g in pair)
        ] += 1
    assert Sprt(0, 100).llr_penta(earlier) < sprt["upper_bound"]


def test_sprt_between_equal_engines_does_not_accept_h1(tmp_path: Path) -> None:
    summary = tournament(
        tmp_path / "t", "--engine", "name=a,level=random", "--engine", "name=b,level=random",
        "--deals", "40", "--concurrency", "2", "--sprt", "elo0=0,elo1=100",
    )  # fmt: skip
    assert summary["sprt"]["decision"] in ("H0", "continue")
    assert summary["games"] <= 80


def run_until(out: Path, args: list[str], games: int, **popen: Any) -> subprocess.Popen[str]:
    """``arena tournament run`` started into ``out``, returned once ``games`` records
    are written (it must still be running then)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "clients.cli", "tournament", "run", "--out", str(out), *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        text=True,
        **popen,
    )
    log = out / "games.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and log.read_text().count("\n") >= games:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be stopped"
    return proc


def resume_equals(out: Path, whole: dict[str, Any], whole_out: Path, at_least: int) -> None:
    """Resuming ``out`` plays only the missing games and ends as the whole run did."""
    done_before = len(records(out))
    assert at_least <= done_before < whole["games"]
    resumed = run_arena("tournament", "run", "--resume", str(out), "--json", "--quiet")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads(resumed.stdout)
    assert summary["games_played_now"] == whole["games"] - done_before  # no game played twice
    assert totals(summary) == totals(whole)
    assert outcomes(out) == outcomes(whole_out)


def test_kill_9_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    args = [
        "--level", "random", "--level", "greedy", "--engine", "name=mcts,level=mcts,iterations=60",
        "--deals", "8", "--concurrency", "2", "--seed", "5", "--json", "--quiet",
    ]  # fmt: skip
    whole = tournament(tmp_path / "whole", *args)
    out = tmp_path / "cut"
    proc = run_until(out, args, 10, stderr=subprocess.DEVNULL, start_new_session=True)
    os.killpg(proc.pid, signal.SIGKILL)  # the runner and its worker processes
    proc.wait(10)
    resume_equals(out, whole, tmp_path / "whole", at_least=10)


def test_ctrl_c_stops_after_the_game_in_hand_and_resume_finishes_the_run(
    tmp_path: Path,
) -> None:
    # one game at a time: built-in games then run without awaits per move (the runner
    # yields between games, where Ctrl-C must still reach it)
    args = [
        "--level", "random", "--engine", "name=mcts,level=mcts,iterations=150",
        "--deals", "60", "--seed", "8", "--json", "--quiet",
    ]  # fmt: skip
    # (60 deals: the run lasts seconds after the 6th game, so a busy machine's late look
    # at the records still finds it running)
    whole = tournament(tmp_path / "whole", *args)
    out = tmp_path / "cut"
    proc = run_until(out, args, 6, stderr=subprocess.PIPE)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err[-2000:]
    assert f"continue with: arena tournament run --resume {out}" in err
    resume_equals(out, whole, tmp_path / "whole", at_least=6)


def test_formats_config_file_and_big_board(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(
        'deals = 1\nseed = 3\n[[participant]]\nlevel = "random"\n'
        '[[participant]]\nname = "g1"\nlevel = "greedy"\n'
        '[[participant]]\nname = "g2"\nlevel = "greedy"\nseed = 9\n'
        '[[participant]]\nname = "m"\nlevel = "mcts"\niterations = 50\n'
        '[[participant]]\nname = "r2"\nlevel = "random"\n'
    )
    swiss = tournament(tmp_path / "s", "--config", str(config), "--format", "swiss")
    assert swiss["games"] == 3 * 2 * 2  # 3 rounds of 2 encounters (one bye), 2 games each
    gauntlet = tournament(tmp_path / "g", "--config", str(config), "--format", "gauntlet")
    assert gauntlet["games"] == 4 * 2
    assert set(gauntlet["crosstable"]["random"]) == {"g1", "g2", "m", "r2"}
    knockout = tournament(tmp_path / "k", "--config", str(config), "--format", "knockout")
    assert knockout["knockout_winner"] in {"random", "g1", "g2", "m", "r2"}
    assert knockout["games"] >= 4 * 2  # four encounters, ties add deals
    big = tournament(
        tmp_path / "b", "--level", "random", "--engine", "name=r2,level=random",
        "--level", "greedy", "--seats", "3", "--variant", "big-board", "--deals", "1",
    )  # fmt: skip
    assert big["games"] == 6  # every seat permutation of the one group
    orders = {tuple(r["players"]) for r in records(tmp_path / "b")}
    assert len(orders) == 6
    assert sum(r["points"] for r in big["standings"]) == pytest.approx(6 * 1.5)


def test_deals_from_a_setups_file(tmp_path: Path) -> None:
    deals = ["4J2131211233423J", "J123412341231J23"]
    (tmp_path / "deals.txt").write_text("# two 4x4 deals\n" + "\n".join(deals) + "\n")
    summary = tournament(
        tmp_path / "t", "--level", "random", "--level", "greedy", "--deals", "3",
        "--setups", str(tmp_path / "deals.txt"),
    )  # fmt: skip
    assert summary["games"] == 6
    used = [
        g["setup"] for g in sorted(records(tmp_path / "t"), key=lambda g: g["tournament"]["id"])
    ]
    assert used == [deals[0]] * 2 + [deals[1]] * 2 + [deals[0]] * 2  # in turn, each in both seats


def test_participants_with_time_controls_of_their_own(tmp_path: Path) -> None:
    summary = tournament(
        tmp_path / "t", "--engine", "name=fast,level=random,tc=fixed:5",
        "--engine", "name=slow,level=greedy,tc=1+0.5", "--deals", "1",
    )  # fmt: skip
    assert summary["games"] == 2
    for g in records(tmp_path / "t"):
        odds = {p: tc for p, tc in zip(g["players"], g["seat_time_controls"], strict=True)}
        assert odds["fast"] == {
            "kind": "fixed",
            "base_ms": 0,
            "increment_ms": 0,
            "per_move_ms": 5000,
        }
        assert odds["slow"]["kind"] == "fischer" and odds["slow"]["increment_ms"] == 500
        assert g["result"]["reason"] == "no_moves"


def test_the_clock_for_all_is_spelt_as_arena_bot_spells_it(tmp_path: Path) -> None:
    """``--clock`` (arena bot's and the server's tournaments' flag) is ``--tc``."""
    tournament(tmp_path / "t", "--level", "random", "--level", "greedy", "--deals", "1",
               "--clock", "fixed:5")  # fmt: skip
    for g in records(tmp_path / "t"):
        assert g["time_control"]["per_move_ms"] == 5000, g
    # and so in a config file, and for a participant of its own
    config = tmp_path / "t.toml"
    config.write_text('clock = "fixed:5"\ndeals = 1\n[[participant]]\nlevel = "random"\n'
                      '[[participant]]\nlevel = "greedy"\nclock = "fixed:4"\n')  # fmt: skip
    tournament(tmp_path / "u", "--config", str(config))
    for g in records(tmp_path / "u"):
        odds = dict(zip(g["players"], g["seat_time_controls"], strict=True))
        assert (odds["random"]["per_move_ms"], odds["greedy"]["per_move_ms"]) == (5000, 4000)
    tournament(tmp_path / "v", "--config", str(config), "--clock", "fixed:3")  # (flags win)
    for g in records(tmp_path / "v"):
        odds = dict(zip(g["players"], g["seat_time_controls"], strict=True))
        assert (odds["random"]["per_move_ms"], odds["greedy"]["per_move_ms"]) == (3000, 4000)


def test_solver_adjudication(tmp_path: Path) -> None:
    summary = tournament(
        tmp_path / "t", "--level", "random", "--level", "greedy", "--deals", "3",
        "--adjudicate", "solver",
    )  # fmt: skip
    games = records(tmp_path / "t")
    adjudicated = [g for g in games if g["tournament"]["adjudicated"]]
    assert summary["adjudicated"] == len(adjudicated) > 0
    for g in adjudicated:
        assert g["result"]["reason"] == "adjudicated"
        game = replay(GameRecord.from_dict(g))
        assert solve_winner(game.to_position()) == g["result"]["winner"]


def test_bad_settings_are_clear_errors(tmp_path: Path) -> None:
    for args, words in [
        (["--level", "random"], "at least two participants"),
        (["--level", "random", "--level", "nosuch"], "no collapsi level"),
        (["--level", "random", "--level", "greedy", "--level", "mcts", "--sprt", "elo0=0"],
         "exactly two participants"),
    ]:  # fmt: skip
        proc = run_arena("tournament", "run", "--out", str(tmp_path / "x"), *args)
        assert proc.returncode == 2 and words in proc.stderr and "Traceback" not in proc.stderr


def test_live_progress_and_standings_on_a_terminal(tmp_path: Path) -> None:
    """On a terminal the run shows a progress bar (games played of all, time left) and
    the current standings while it plays."""
    import pty
    import select

    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "clients.cli", "tournament", "run", "--out", str(tmp_path / "t"),
         "--engine", "name=m,level=mcts,iterations=200", "--level", "greedy", "--deals", "4"],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=child, stderr=child,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm"},
    )  # fmt: skip
    os.close(child)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 1)
        if ready:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(main)
    assert proc.wait(30) == 0
    text = seen.decode(errors="replace")
    assert "8/8" in text  # the progress bar: games played of all
    assert any(f"{k}/8" in text for k in range(1, 8)), "no progress shown while it played"
    assert "participant" in text and "greedy" in text and "W-D-L" in text
    assert "even pairs" in text  # (pairs scored 1 of 2: not draws, which W-D-L counts)
