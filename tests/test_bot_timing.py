"""``arena bot``'s time management (clients/bot/timing.py): what the clocks the server
last sent allow for one move, less the time spent since they arrived and the margin."""

from __future__ import annotations

from clients.bot.timing import move_time
from clients.engines import protocol as p
from engine.match import TimeControl
from protocol import messages as m
from protocol.timecontrol import protocol_time_control

FISCHER = m.Fischer(base_ms=60_000, increment_ms=2_000)


def test_fischer_spends_a_thirtieth_plus_most_of_the_increment_and_deducts_time_spent():
    clock = m.Clock(remaining_ms=[30_000, 45_000], running=1)
    # the clock arrived 500 ms ago: seat 1 (running) has 44.5 s left
    mt = move_time(clock, FISCHER, 1, received=100.0, margin_ms=100, now=100.5)
    assert mt.hard_ms == 44_400  # all that is left but the margin: the clock decides
    assert mt.budget_ms == int(44_500 / 30 + 2_000 * 0.8)
    assert mt.go == p.Go(time=(30_000, 44_500), inc=2_000)


def test_a_budget_is_never_more_than_half_of_what_is_left():
    clock = m.Clock(remaining_ms=[1_000, 1_000], running=0)
    mt = move_time(clock, FISCHER, 0, received=5.0, margin_ms=100, now=5.0)
    assert mt.hard_ms == 900 and mt.budget_ms == 450


def test_per_move_gives_the_engine_movetime_and_a_level_half_of_it():
    clock = m.Clock(remaining_ms=[3_000, 3_000], running=0)
    mt = move_time(clock, m.PerMove(ms=3_000), 0, received=1.0, margin_ms=400, now=1.2)
    assert mt.hard_ms == 2_400 and mt.budget_ms == 1_200
    assert mt.go == p.Go(movetime=2_400)


def test_untimed_and_a_flag_about_to_fall():
    assert move_time(None, m.Untimed(), 0, received=0.0, margin_ms=100) == move_time(
        m.Clock(remaining_ms=[0, 0], running=None), m.Untimed(), 1, 0.0, 100
    )
    assert move_time(None, m.Untimed(), 0, 0.0, 100).hard_ms is None
    late = m.Clock(remaining_ms=[50, 9_000], running=0)
    assert move_time(late, FISCHER, 0, 0.0, margin_ms=100, now=0.0).hard_ms == 1.0


def test_the_bots_clock_flags_become_the_protocols_time_controls():
    assert protocol_time_control(TimeControl.parse("3+2")) == m.Fischer(
        base_ms=180_000, increment_ms=2_000
    )
    assert protocol_time_control(TimeControl.parse("fixed:5")) == m.PerMove(ms=5_000)
    assert protocol_time_control(TimeControl.parse("none")) == m.Untimed()
