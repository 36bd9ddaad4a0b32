"""``arena bot`` with engines that misbehave (ENGINE_PROTOCOL.md, "Misbehaving engines"),
beyond the crashes of tests/test_bot_cmd.py: an illegal move is asked again and then
resigned, no answer in time leaves the game to the server's clock, and each counts a
strike; at ``--max-strikes`` the runner stops and says why.
"""

from __future__ import annotations

import shlex

import pytest

from tests.engine_examples import bad
from tests.test_bot_cmd import arena_bot, bots


def _pair(url: str, mode: str, *extra: str):  # the bad engine and a steady opponent
    common = ["--quick-match", "collapsi", "--games", "1", "--clock", "fixed:2"]
    return (
        arena_bot(url, f"bad-{mode}", "--engine", shlex.join(bad(mode)), *common, *extra),
        arena_bot(url, f"steady-{mode}", "--level", "random", *common),
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "mode,strike",
    [
        ("hang", "no move in time"),  # killed after stop: restarted for the next move
        ("garbage", "no move in time"),  # nonsense is no bestmove: the clock runs out
    ],
)
async def test_no_answer_in_time_is_a_strike_and_the_clock_decides(arena, mode, strike):
    await arena.start()
    async with bots(*_pair(arena.url, mode, "--margin-ms", "1000")) as (bad_bot, steady):
        code, lines, err = await bad_bot.finish(others=(bad_bot, steady))
        assert code == 0, err
        assert any(ln.startswith("strike 1/") and strike in ln for ln in lines), lines
        [game] = bad_bot.games()
        # the server's clock ended it: lost on time, or aborted if it had not moved yet
        assert "(timeout)" in game or "(aborted)" in game, game
        assert (await steady.finish())[0] == 0


@pytest.mark.timeout(120)
async def test_illegal_moves_are_asked_again_then_the_runner_stops_after_its_strikes(arena):
    await arena.start()
    async with bots(*_pair(arena.url, "illegal", "--max-strikes", "2")) as (bad_bot, steady):
        code, lines, err = await bad_bot.finish(others=(bad_bot, steady))
        assert code == 1, err
        assert [ln for ln in lines if ln.startswith("strike ")] == [
            ln for ln in lines if ln.startswith("strike ") and "bad answer: illegal move" in ln
        ]
        stopped = [ln for ln in lines if ln.startswith("stopped: ")]
        assert stopped and "stopped after 2 strikes: bad answer: illegal move" in stopped[0]
        [game] = steady.games() if (await steady.finish())[0] == 0 else [""]
        assert "win (resign)" in game or "(aborted)" in game, game
