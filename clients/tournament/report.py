"""How a tournament looks in the terminal: the live progress and standings while it
runs, the standings, crosstable and SPRT when it ends (rich)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

if TYPE_CHECKING:
    from clients.tournament.runner import Runner


def _num(value: float | None, fmt: str = "{:+.1f}") -> str:
    return "-" if value is None else fmt.format(value)


def standings_table(standings: list[dict[str, Any]], title: str = "standings") -> Table:
    table = Table(title=title)
    for col in (
        "#",
        "participant",
        "games",
        "points",
        "W-D-L",
        "Elo",
        "+/-",
        "nElo",
        "LOS",
        "even pairs",  # (deal pairs scored 1 of 2: both drawn, or one won one lost)
    ):
        table.add_column(col, justify="left" if col == "participant" else "right")
    for rank, row in enumerate(standings, 1):
        table.add_row(
            str(rank),
            row["name"],
            str(row["games"]),
            f"{row['points']:g}",
            f"{row['wins']}-{row['draws']}-{row['losses']}",
            _num(row["elo"]),
            _num(row["elo_error"], "{:.1f}"),
            _num(row["nelo"]),
            _num(row["los"] * 100 if row["los"] is not None else None, "{:.1f}%"),
            _num(row["draw_ratio"] * 100 if row["draw_ratio"] is not None else None, "{:.0f}%"),
        )
    return table


def crosstable(summary: dict[str, Any]) -> Table:
    names = [r["name"] for r in summary["standings"]]
    table = Table(title="crosstable (points / games)")
    table.add_column("")
    for n in names:
        table.add_column(n, justify="right")
    for a in names:
        cells = []
        for b in names:
            cell = summary["crosstable"].get(a, {}).get(b)
            cells.append("" if cell is None else f"{cell['points']:g}/{cell['games']}")
        table.add_row(a, *cells)
    return table


def print_summary(summary: dict[str, Any], console: Console | None = None) -> None:
    if console is None:
        console = Console()
        if not console.is_terminal:  # a file or pipe: do not squeeze the tables into 80 columns
            console = Console(width=120)
    console.print(
        standings_table(summary["standings"], f"standings after {summary['games']} games")
    )
    console.print(crosstable(summary))
    sprt = summary.get("sprt")
    if sprt:
        console.print(
            f"SPRT [{sprt['elo0']:g}, {sprt['elo1']:g}] ({sprt['model']}): "
            f"LLR {sprt['llr']:.2f} ({sprt['lower_bound']:.2f}, {sprt['upper_bound']:.2f}) "
            f"-> {sprt['decision']}"
        )
    extra = []
    if summary.get("adjudicated"):
        extra.append(f"{summary['adjudicated']} adjudicated by the solver")
    if summary.get("faults"):
        extra.append(f"{summary['faults']} engine faults")
    console.print(
        f"stopped: {summary['stopped']}; records: {summary['out']}/games.jsonl"
        + ("; " + ", ".join(extra) if extra else "")
    )


class LiveDisplay:
    """A progress bar (games, time left) over the current standings, redrawn after
    every game; prints nothing when the output is not a terminal."""

    def __init__(self) -> None:
        self.console = Console(stderr=True)
        self.progress = Progress(
            TextColumn("games"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.task = self.progress.add_task("games", total=None)
        self.table = Table()
        self.live = Live(
            Group(self.progress, self.table), console=self.console, refresh_per_second=4
        )
        self.enabled = self.console.is_terminal
        self._drawn = 0.0

    def __enter__(self) -> LiveDisplay:
        if self.enabled:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.live.__exit__(None, None, None)

    def update(self, runner: Runner) -> None:
        if not self.enabled:
            return
        self.progress.update(self.task, completed=runner.games_committed, total=runner.games_total)
        now = time.monotonic()
        if now - self._drawn < 0.5:  # the table is recomputed twice a second at most
            return
        self._drawn = now
        rows = runner.standings.to_dict()["standings"]
        self.live.update(Group(self.progress, standings_table(rows)))
