"""bench/startup.py keeps working: one trial through a real subprocess, its table and JSON checked.

Only that it runs and reports sane figures; start-up time itself is never asserted in tests.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench_run import run_bench


def test_bench_startup_one_trial(tmp_path: Path) -> None:
    stdout, res = run_bench(
        "startup.py",
        "--trials", "1",
        "--data-dir", str(tmp_path / "data"),
        json_to=tmp_path / "startup.json",
    )  # fmt: skip
    for line in ("spawn -> listening", "SIGTERM -> exit", "python -c pass", "target under 1 s"):
        assert line in stdout, stdout
    assert res["trials"] == 1
    # a server that listens has started an interpreter and imported the code: it takes longer
    assert res["listening_s"]["median"] > res["python_s"]["median"] > 0, res
    assert 0 < res["cpu_s"]["median"] <= res["listening_s"]["median"] * 2, res
    assert res["stop_s"]["median"] > 0, res


def test_bench_startup_with_records_and_games_in_progress(tmp_path: Path) -> None:
    """The durable start-up run (``--records --games``): its data dir is built by
    bench/populate.py through the store's ports, and every game in it is restored."""
    stdout, res = run_bench(
        "startup.py",
        "--trials", "1",
        "--records", "20",
        "--games", "3",
        "--data-dir", str(tmp_path / "data"),
        json_to=tmp_path / "startup.json",
    )  # fmt: skip
    assert (res["records"], res["games"], res["games_restored"]) == (20, 3, 3), res
    assert "3 restored" in stdout, stdout
