"""Time odds in the Match authority: one clock setting per seat (tournament participants
with time controls of their own), driven with made-up times."""

from __future__ import annotations

import pytest

from engine.match import BadTimeControl, Match, TimeControl


def test_each_seat_runs_its_own_clock() -> None:
    odds = [TimeControl.parse("1+0"), TimeControl.parse("fixed:2")]
    match = Match.new("collapsi", ["a", "b"], seed=4)
    match = Match(match.game, ["a", "b"], seat_time_controls=odds)
    match.start(0)
    assert match.clocks() == [60_000, 2_000]
    first = match.to_move()
    assert first == 0
    match.submit_move(0, match.game.legal_moves()[0], 500)
    assert match.clocks() == [59_500, 2_000]
    assert match.deadline_ms() == 500 + 2_000  # seat 1's fixed allowance
    match.submit_move(1, match.game.legal_moves()[0], 1_700)
    assert match.clocks() == [59_500, 2_000]  # a fresh allowance after each move
    match.submit_move(0, match.game.legal_moves()[0], 1_800)
    assert match.check_time(3_700) == []
    events = match.check_time(3_800)  # seat 1 used its 2 s
    assert events[-1]["result"]["winner"] == 0 and events[-1]["result"]["reason"] == "timeout"
    record = match.record_dict()
    assert record["seat_time_controls"] == [tc.to_dict() for tc in odds]
    rematch = match.rematch(seed=5)  # sides swap: so do the clocks
    assert rematch.players == ["b", "a"] and rematch.seat_time_controls == odds[::-1]


def test_time_odds_need_a_clock_for_every_seat_or_none() -> None:
    game = Match.new("collapsi", ["a", "b"]).game
    with pytest.raises(BadTimeControl):
        Match(game, ["a", "b"], seat_time_controls=[TimeControl.parse("1+0"), TimeControl()])
    with pytest.raises(BadTimeControl):
        Match(game, ["a", "b"], seat_time_controls=[TimeControl.parse("1+0")])
