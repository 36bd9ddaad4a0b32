"""``arena bot`` as a real process against a real server on loopback.

Engines are real subprocesses (the examples, tests/engines/bad_engine.py); the
runner is ``python -m clients.cli bot``. Games are short (random engines, 4x4
boards, per-move clocks) so that each test takes seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import os
import shlex
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.engine_examples import ROOT, bad, example_argv, thinker
from tests.tcp_proxy import TcpProxy

PY_ENGINE = f"{sys.executable} {ROOT / 'clients' / 'examples' / 'python' / 'random_engine.py'}"
#: every Collapsi and Collecto game a two-seat quick-match room can host
TWO_PLAYER = [
    "collapsi/base",
    "collapsi/base/classic",
    "collapsi/shifting",
    "collapsi/players-choice",
    "collapsi/big-board",
    "collecto",
]


class Bot:
    """One ``arena bot`` process; its standard output is collected line by line."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self.changed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while raw := await self.proc.stdout.readline():
            self.lines.append(raw.decode().rstrip("\n"))
            self.changed.set()

    async def wait_for(self, text: str, timeout: float = 60) -> str:
        async def scan() -> str:
            while True:
                for line in self.lines:
                    if text in line:
                        return line
                self.changed.clear()
                await self.changed.wait()

        try:
            return await asyncio.wait_for(scan(), timeout)
        except TimeoutError:
            raise AssertionError(f"no {text!r} from arena bot; it said: {self.lines}") from None

    async def finish(
        self, timeout: float = 120, others: tuple[Bot, ...] = ()
    ) -> tuple[int, list[str], str]:
        try:
            code = await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            said = [b.lines for b in others or (self,)]
            raise AssertionError(f"arena bot did not finish: {said}") from None
        await self._reader
        assert self.proc.stderr is not None
        err = (await self.proc.stderr.read()).decode()
        return code, self.lines, err

    def games(self) -> list[str]:
        return [ln for ln in self.lines if ln.startswith("game ")]


async def arena_bot(url: str, name: str, *args: str, env: dict[str, str] | None = None) -> Bot:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clients.cli",
        "bot",
        "--url",
        url,
        "--name",
        name,
        *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=None if env is None else {**os.environ, **env},
    )
    return Bot(proc)


def quick_bot(
    url: str,
    name: str,
    *args: str,
    game: str = "collapsi",
    clock: str = "fixed:5",
    games: str | None = "1",
    env: dict[str, str] | None = None,
) -> Any:
    """``arena bot`` (its brain in ``args``) playing ``games`` of ``game`` by quick match,
    ``clock`` a move (``games=None``: until stopped)."""
    count = [] if games is None else ["--games", games]
    return arena_bot(url, name, *args, "--quick-match", game, *count, "--clock", clock, env=env)


def challenge_pair(
    url: str, host: tuple[str, ...], challenger: tuple[str, ...], specs: list[str], *rest: str
) -> tuple[Any, Any]:
    """Two ``arena bot`` runs: ``host`` (a name, then its brain) accepts challenges, the
    ``challenger`` challenges it to each of ``specs`` in turn; ``rest`` for both."""
    return (
        arena_bot(url, host[0], *host[1:], "--accept-challenges", *rest),
        arena_bot(url, challenger[0], *challenger[1:], "--challenge", host[0], *specs, *rest),
    )


@contextlib.asynccontextmanager
async def bots(*started: Any):
    """The bots (``arena_bot`` coroutines, or Bots already started), killed at the end."""
    procs = [b if isinstance(b, Bot) else await b for b in started]
    try:
        yield procs
    finally:
        for b in procs:
            if b.proc.returncode is None:
                b.proc.kill()
                await b.proc.wait()


async def all_complete(
    bots_: tuple[Bot, ...] | list[Bot], count: int, specs: tuple[str, ...] | list[str] = ()
) -> None:
    """Every bot exits 0 after ``count`` games ended by the rules (of ``specs``, if given)."""
    for bot in bots_:
        code, lines, err = await bot.finish(others=tuple(bots_))
        assert code == 0, err
        assert_complete(lines, count)
        if specs:
            played = sorted(ln.split()[4] for ln in bot.games())
            assert played == sorted(g if g.count("/") == 2 else _full(g) for g in specs)


async def quick_match_events(player: Any) -> AsyncIterator[tuple[Any, Any]]:
    """``player`` (a test client) seeks an unrated Collapsi quick match; then each event of
    its game (``game_started``, ``move_made``) with the ``matched`` message, ``game_over``
    last."""
    await player.quick_match("collapsi", rated=False)
    matched = await player.next(type="matched", timeout=30)
    while True:
        ev = await player.next(
            type=("game_started", "move_made", "game_over"), room=matched.room, timeout=30
        )
        yield matched, ev
        if ev.type == "game_over":
            return


def assert_complete(lines: list[str], count: int) -> None:
    """``count`` games ended by the rules (not by the clock or a forfeit)."""
    games = [ln for ln in lines if ln.startswith("game ")]
    assert len(games) == count, lines
    for line in games:
        assert "(no_moves)" in line or "(score)" in line, line


COLLAPSI = [g for g in TWO_PLAYER if g != "collecto"]


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    "level,games",
    [
        ("random", TWO_PLAYER),
        ("greedy", TWO_PLAYER),
        ("mcts", COLLAPSI),
        ("perfect", COLLAPSI),
        ("search", ["collecto"]),
    ],
)
async def test_each_level_plays_every_two_player_game_by_quick_match(arena, level, games):
    """A built-in level against the Python example engine, one game of each in turn by
    quick match; then the level challenges the engine to the first of them."""
    await arena.start()
    # 3 s a move on the clock, but a level thinks ~0.3 s (the margin keeps 2.4 s back): the
    # games stay short, and a loaded test machine does not lose them on time
    clock = ["--clock", "fixed:3", "--margin-ms", "2400"]
    common = ["--quick-match", *games, "--games", str(len(games)), *clock]
    async with bots(
        arena_bot(arena.url, f"lvl-{level}", "--level", level, *common),
        arena_bot(arena.url, "py-engine", "--engine", PY_ENGINE, *common),
    ) as (lvl, eng):
        await all_complete((lvl, eng), len(games), games)
    one = ["--games", "1", *clock]
    async with bots(
        arena_bot(arena.url, "py-engine", "--engine", PY_ENGINE, "--accept-challenges", *one),
    ) as (eng,):
        await eng.wait_for("logged in")
        challenge = ["--challenge", "py-engine", games[0], *one]
        async with bots(arena_bot(arena.url, f"lvl-{level}", "--level", level, *challenge)) as (
            lvl,
        ):
            await all_complete((lvl, eng), 1, games[:1])


@pytest.mark.timeout(120)
async def test_bots_at_machine_speed_wait_out_the_servers_rate_limit(arena):
    """Untimed games at machine speed on a server allowing 5 frames at once, 20 a second:
    each refused request (``rate_limited``) is sent again after its ``retry_after``. A
    runner that dropped a refused move hung its game for ever (issue 16's "Collecto game
    never ends": it was the sixth game in a row, when the 40-frame burst ran out)."""
    await arena.start(rate_burst=5, rate_per_second=20.0)
    common = ["--quick-match", "collapsi", "--games", "3"]
    async with bots(
        arena_bot(arena.url, "fast-a", "--level", "random", *common),
        arena_bot(arena.url, "fast-b", "--level", "random", *common),
    ) as both:
        await all_complete(both, 3)


def _full(spec: str) -> str:
    """``collapsi/base`` -> ``collapsi/base/standard`` as the summary line writes it."""
    parts = spec.split("/")
    return "/".join([*parts, *["base", "standard"][len(parts) - 1 :]])


@pytest.mark.timeout(180)
async def test_node_and_c_engines_play_by_challenge_and_quick_match(arena, tmp_path):
    """The C engine challenges the Node engine to every two-player game and variant in
    turn; then both play the same games through the quick-match pool."""
    await arena.start()
    node = shlex.join(example_argv("node", tmp_path))
    c = shlex.join(example_argv("c", tmp_path))
    clock = ["--games", str(len(TWO_PLAYER)), "--clock", "fixed:2"]
    async with bots(
        *challenge_pair(
            arena.url,
            ("node-engine", "--engine", node),
            ("c-engine", "--engine", c),
            TWO_PLAYER,
            *clock,
        )
    ) as both:
        await all_complete(both, len(TWO_PLAYER), TWO_PLAYER)
        accepted = sum("accepted" in ln for ln in both[0].lines)
        assert accepted == len(TWO_PLAYER), both[0].lines
    common = ["--quick-match", *TWO_PLAYER, *clock]
    async with bots(
        arena_bot(arena.url, "node-engine", "--engine", node, *common),
        arena_bot(arena.url, "c-engine", "--engine", c, *common),
    ) as both:
        await all_complete(both, len(TWO_PLAYER), TWO_PLAYER)


@pytest.mark.timeout(180)
async def test_the_python_engine_plays_every_two_player_game_by_challenge(arena):
    await arena.start()
    clock = ["--games", str(len(TWO_PLAYER)), "--clock", "fixed:3"]
    async with bots(
        *challenge_pair(
            arena.url,
            ("py-host", "--engine", PY_ENGINE),
            ("challenger", "--level", "random"),
            TWO_PLAYER,
            *clock,
        )
    ) as both:
        await all_complete(both, len(TWO_PLAYER), TWO_PLAYER)


@pytest.mark.timeout(120)
async def test_a_bot_challenges_a_bot_on_another_node(arena, redis_url, redis_prefix):
    """Two nodes sharing a real Redis: the challenger on one, the challenged bot on the
    other; each challenge is delivered there at once, accepted and played."""
    await arena.start(presence_url=redis_url, prefix=redis_prefix, node="bots-1")
    first = arena.url
    await arena.start(presence_url=redis_url, prefix=redis_prefix, node="bots-2")
    assert arena.url != first
    clock = ["--games", "2", "--clock", "fixed:3"]
    host = arena_bot(arena.url, "far-host", "--level", "random", "--accept-challenges", *clock)
    async with bots(host) as (far,):
        await far.wait_for("waiting for challenges")
        async with bots(
            arena_bot(
                first, "near", "--level", "greedy", "--challenge", "far-host", "collapsi", *clock
            )
        ) as (near,):
            await all_complete((far, near), 2)
            assert sum("accepted" in ln for ln in far.lines) == 2, far.lines


@pytest.mark.timeout(180)
async def test_big_board_rooms_of_three_and_four_fill_with_joining_bots(arena, tmp_path):
    """One bot keeps a room open, the others sit down in it (--join): 3 and 4 players."""
    await arena.start()
    node = shlex.join(example_argv("node", tmp_path))
    c = shlex.join(example_argv("c", tmp_path))
    for seats in (3, 4):
        variant = "big-board"
        spec = f"collapsi/{variant}"
        common = ["--games", "1", "--clock", "fixed:2"]
        # the Node and C example engines sit down, and a built-in level for the fourth
        players = [["--engine", node], ["--engine", c], ["--level", "greedy"]]
        joiners = [
            arena_bot(arena.url, f"join{seats}-{i}", *players[i], "--join", spec, *common)
            for i in range(seats - 1)
        ]
        async with bots(
            arena_bot(
                arena.url,
                f"host{seats}",
                "--engine",
                PY_ENGINE,
                "--open-room",
                spec,
                "--seats",
                str(seats),
                *common,
            ),
            *joiners,
        ) as all_bots:
            for bot in all_bots:
                code, _, err = await bot.finish(others=tuple(all_bots))
                assert code == 0, err
                [line] = bot.games()
                assert f"collapsi/{variant}/standard" in line
                assert "(no_moves)" in line, line


@pytest.mark.timeout(120)
async def test_an_engine_killed_mid_game_is_restarted_and_the_game_goes_on(arena, tmp_path):
    await arena.start()
    mark = tmp_path / "crashed-once"
    crash_once = shlex.join(bad("crash-once"))
    logs = tmp_path / "logs"
    async with bots(
        quick_bot(
            arena.url,
            "fragile",
            "--engine",
            crash_once,
            "--log-dir",
            str(logs),
            env={"ARENA_BAD_MARK": str(mark)},
        ),
        quick_bot(arena.url, "steady", "--level", "random"),
    ) as (fragile, steady):
        code, lines, err = await fragile.finish(others=(fragile, steady))
        assert code == 0, err
        assert mark.exists()
        assert any("strike 1/3: crashed" in ln and "exit status 4" in ln for ln in lines), lines
        assert_complete(lines, 1)
        [log] = logs.iterdir()
        text = log.read_text()
        assert "dying on purpose" in text and "engine restarted" in text
        code, lines, _ = await steady.finish()
        assert_complete(lines, 1)


@pytest.mark.timeout(120)
async def test_an_engine_that_keeps_crashing_is_stopped_after_its_strikes(arena):
    await arena.start()
    crash = shlex.join(bad("crash"))
    async with bots(
        quick_bot(arena.url, "crasher", "--engine", crash, "--max-strikes", "2", games=None),
        quick_bot(arena.url, "steady2", "--level", "random"),
    ) as (crasher, steady):
        code, lines, err = await crasher.finish(others=(crasher, steady))
        assert code == 1, err
        assert any(
            ln.startswith('stopped: engine "') and "stopped after 2 strikes: crashed" in ln
            for ln in lines
        ), lines
        code, lines, _ = await steady.finish()
        [game] = steady.games()
        # the crasher never completes a move, so its forfeit comes before every player has
        # moved: the game is aborted, no winner, unrated (issue 15's rule, PROTOCOL.md)
        assert "no result (aborted)" in game, game


@pytest.mark.timeout(120)
async def test_the_runner_resumes_after_its_connection_is_cut_mid_game(arena, tmp_path):
    """ann plays the bot; after her second move the bot's connection is cut (no close
    frame); the bot resumes its session and the game ends by the rules, not by abandon."""
    await arena.start()
    port = arena.arena.config.port
    async with (
        TcpProxy(port) as proxy,
        bots(
            arena_bot(
                f"ws://127.0.0.1:{proxy.port}",
                "resumer",
                "--engine",
                PY_ENGINE,
                "--quick-match",
                "collapsi",
                "--games",
                "1",
                "--log-dir",
                str(tmp_path),
            ),
        ) as (bot,),
    ):
        await bot.wait_for("logged in")
        ann = await arena.client("ann")
        moves = 0
        async for matched, ev in quick_match_events(ann):
            if ev.type != "game_over" and ev.to_move == matched.seat:
                await ann.move(matched.room, ev.legal_moves[0])
                moves += 1
                if moves == 2:
                    proxy.cut()
        assert ev.result.reason == "no_moves", ev.result
        code, lines, err = await bot.finish()
        assert code == 0, err
        assert "reconnected: session resumed" in lines, lines
        assert_complete(lines, 1)
        assert proxy.accepted >= 2


@pytest.mark.timeout(120)
async def test_a_search_the_games_end_cuts_short_is_stopped(arena, tmp_path):
    """The bot's engine (one that thinks a second, in a thread) is asked as ann's move
    arrives; ann resigns at once. The game is over before the engine answers: the runner
    sends ``stop`` and drops the answer (it is no move for any later position), with no
    strike and no move sent."""
    await arena.start()
    async with bots(
        arena_bot(
            arena.url,
            "thinker",
            "--engine",
            shlex.join(thinker(1.0)),
            "--quick-match",
            "collapsi",
            "--games",
            "1",
            "--log-dir",
            str(tmp_path),
        ),
    ) as (bot,):
        await bot.wait_for("logged in")
        ann = await arena.client("ann")
        async for matched, ev in quick_match_events(ann):
            if ev.type == "game_over":
                break
            if ev.to_move == matched.seat:
                await ann.move(matched.room, ev.legal_moves[0])
            elif ev.type == "move_made" and ev.seat == matched.seat and ev.ply >= 2:
                # once the bot's engine thinks about the next move (sooner, before both
                # had moved, would abort the game)
                await _asked_after(tmp_path, ev.ply)
                await ann.resign(matched.room)
        assert ev.result.reason == "resign", ev.result
        code, lines, err = await bot.finish()
        assert code == 0, err
        assert not any("strike" in ln for ln in lines), lines
        [log] = tmp_path.iterdir()
        text = [ln.split(" ", 1)[1] for ln in log.read_text().splitlines()]
        # the last search: stopped (when the game's end came, during the task's hold of
        # the turn or while it waited for the answer), its answer read, no move played
        last = max(i for i, ln in enumerate(text) if ln.startswith("engine > go"))
        after = text[last:]
        assert "engine > stop" in after and any("engine < bestmove" in ln for ln in after), text
        assert not any(ln.startswith("plays ") for ln in after), text
        assert any(ln.startswith("game over") for ln in after), text


async def _asked_after(log_dir: Any, ply: int) -> None:
    """Until the bot's game log (written within 0.25 s) shows its engine asked (``go``)
    after move ``ply``."""
    async with asyncio.timeout(10):
        while True:
            for log in log_dir.iterdir():
                text = log.read_text().split(f" move {ply}: ", 1)
                if len(text) == 2 and " engine > go" in text[1]:
                    return
            await asyncio.sleep(0.02)


@pytest.mark.timeout(120)
async def test_a_toml_config_file_with_flags_on_top(arena, tmp_path):
    await arena.start()
    config = tmp_path / "bot.toml"
    config.write_text(
        f'url = "{arena.url}"\n'
        'name = "from-file"\n'
        f'engine = "{PY_ENGINE}"\n'
        'quick_match = ["collecto"]\n'
        "games = 5\n"
        'clock = "fixed:3"\n'
        f'log_dir = "{tmp_path / "logs"}"\n'
        "[engine_options]\nSeed = 42\n"
    )
    async with bots(
        arena_bot(arena.url, "from-flags", "--config", str(config), "--games", "1"),
        quick_bot(arena.url, "other", "--level", "greedy", game="collecto", clock="fixed:3"),
    ) as (filed, other):
        code, lines, err = await filed.finish(others=(filed, other))
        assert code == 0, err
        assert lines[0].startswith("bot from-flags: logged in")  # the flag won
        assert_complete(lines, 1)
        [log] = (tmp_path / "logs").iterdir()
        assert "engine > setoption name Seed value 42" in log.read_text()
        await other.finish()


def test_bad_settings_are_one_line_errors(tmp_path):
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text('name = "x"\nspeed = 3\n')
    # (the flags' own spelling is a key too: quick-match; the wrong type is named)
    typed = tmp_path / "typed.toml"
    typed.write_text('name = "x"\nlevel = "random"\nquick-match = ["collapsi"]\ngames = "one"\n')
    for args, message in [
        (["--name", "x", "--quick-match", "collapsi"], "exactly one of --engine CMD and --level"),
        (
            ["--name", "x", "--level", "search", "--quick-match", "collapsi"],
            "no collapsi level 'search'",
        ),
        (["--name", "x", "--level", "random"], "say what to play"),
        (["--name", "x", "--level", "random", "--quick-match", "chess"], "unknown game 'chess'"),
        (["--config", str(bad_toml)], "unknown settings speed"),
        (["--config", str(typed)], "games must be a whole number, got 'one'"),
        (
            ["--name", "x", "--level", "random", "--quick-match", "collapsi", "--url", "http://x"],
            "not a websocket URL",
        ),
        (
            ["--name", "x", "--level", "random", "--quick-match", "collapsi", "--clock", "soon"],
            "cannot read time control",
        ),
        (
            ["--name", "x", "--level", "random", "--quick-match", "collapsi", "--token", "s3cret"],
            "--token: a player token needs at least 16 characters",
        ),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "clients.cli", "bot", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr


def _readme_bot() -> str:
    text = (ROOT / "README.md").read_text().split("## Write a bot", 1)[1]
    block = text.split("```python", 1)[1].split("```", 1)[0]
    return "\n".join(line[2:] for line in block.splitlines())


def test_the_readme_bot_is_the_sdk_example_and_about_15_lines():
    code = _readme_bot().strip()
    example = (ROOT / "clients" / "examples" / "python" / "sdk_bot.py").read_text()
    assert code.split("# arena bot's")[0].rstrip().rstrip(")") in example
    assert len([ln for ln in code.splitlines() if ln.strip()]) <= 15


@pytest.mark.timeout(120)
async def test_the_sdk_bot_plays_every_two_player_game(arena, tmp_path):
    """The README's bot, as a user runs it (python sdk_bot.py ...), against a level."""
    await arena.start()
    script = tmp_path / "readme_bot.py"
    script.write_text(_readme_bot())
    common = ["--quick-match", *TWO_PLAYER, "--games", str(len(TWO_PLAYER))]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        "--url",
        arena.url,
        "--name",
        "sdk",
        *common,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    async with bots(Bot(proc), arena_bot(arena.url, "lvl", "--level", "random", *common)) as (
        sdk,
        lvl,
    ):
        code, lines, err = await sdk.finish(others=(sdk, lvl))
        assert code == 0, err
        assert_complete(lines, len(TWO_PLAYER))
        assert lines[0] == f"bot sdk: logged in at {arena.url}"
        await lvl.finish()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["quick-match", "open-room"])
async def test_a_games_first_move_is_sent_as_the_engines_answer_is_read(arena, how):
    """Two runners (in this process, their clients noting how each move went) play a
    game: its first move is sent from the callback that read the engine's answer, its
    search begun as the engine's ``readyok`` to ``newgame`` was read (quick match starts
    the game with a ``room_state``, after the ``game_started``; a room the bot opened,
    with a ``game_started``), and so are the others, but for one at most: a turn whose
    move comes while the task is still busy with the last one takes the task's way (on
    a loaded machine, about one game in 40 here)."""
    from clients.bot.brains import EngineBrain
    from clients.bot.config import BotConfig
    from clients.bot.runner import BotRunner
    from clients.client import Client

    await arena.start()
    how_sent: list[str] = []  # each move of the game, in order: "at once" or "task"

    class Counting(Client):
        def move_now(self, room: str, move: str) -> Any:
            sent = super().move_now(room, move)
            if sent is not None:
                how_sent.append("at once")
            return sent

        async def move(self, room: str, move: str) -> None:
            how_sent.append("task")
            await super().move(room, move)

    def runner(name: str, **play: list[str]) -> BotRunner:
        cfg = BotConfig(url=arena.url, name=name, engine=PY_ENGINE, games=1, **play).check()
        r = BotRunner(
            cfg, lambda strike, log: EngineBrain(PY_ENGINE, {}, strike, log, 30.0), io.StringIO()
        )
        r.client = Counting(arena.url, keep_events=False, patient=True)
        return r

    if how == "quick-match":
        a, b = runner("amber", quick_match=["collapsi"]), runner("birch", quick_match=["collapsi"])
    else:
        a, b = runner("amber", open_room=["collapsi"]), runner("birch", join=["collapsi"])
    thresholds = gc.get_threshold()  # (a run settles the heap: put back after)
    try:
        first = asyncio.create_task(a.run())
        if how == "open-room":  # (the guest sits down once the host's task has its room)
            async with asyncio.timeout(30):
                while "waiting for players" not in a.out.getvalue():
                    await asyncio.sleep(0.01)
        assert await asyncio.wait_for(asyncio.gather(first, b.run()), 90) == [0, 0]
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    summaries = [
        ln for r in (a, b) for ln in r.out.getvalue().splitlines() if ln.startswith("game ")
    ]
    assert len(summaries) == 2 and all("(no_moves)" in ln for ln in summaries), summaries
    assert "vs birch," in summaries[0] and "vs amber," in summaries[1], summaries  # (not "?")
    played = int(summaries[0].rsplit(" ", 2)[1])  # "..., 10 moves"
    assert len(how_sent) == played and how_sent[0] == "at once", (how_sent, summaries)
    assert how_sent.count("task") <= 1, how_sent


@pytest.mark.timeout(120)
async def test_an_engine_that_refuses_a_game_is_sent_nothing_more_for_it(arena, tmp_path):
    """ENGINE_PROTOCOL.md ("Misbehaving engines"): an engine that answers ``newgame``
    with ``error`` is not sent that game (no position, no go), the game is resigned, and
    that is no strike. The refusing bot opens the room: it moves first."""
    await arena.start()
    picky = shlex.join(bad("refuse"))
    async with bots(
        arena_bot(
            arena.url,
            "picky",
            "--engine",
            picky,
            "--open-room",
            "collapsi",
            "--games",
            "1",
            "--log-dir",
            str(tmp_path),
        ),
    ) as (host,):
        await host.wait_for("waiting for players")
        async with bots(
            arena_bot(
                arena.url, "guest", "--engine", PY_ENGINE, "--join", "collapsi", "--games", "1"
            ),
        ) as (guest,):
            code, lines, err = await host.finish(others=(guest,))
            assert code == 0, err
            assert (await guest.finish())[0] == 0
    assert not any("strike" in ln for ln in lines), lines
    [game] = [ln for ln in lines if ln.startswith("game ")]
    # (a resignation before every player has moved aborts the game: PROTOCOL.md)
    assert "seat 0" in game and ("(aborted)" in game or "loss (resign)" in game), lines
    assert game.endswith("; the engine answered error: I play nothing"), game  # (its words)
    [log] = tmp_path.iterdir()
    text = [ln.split(" ", 1)[1] for ln in log.read_text().splitlines()]
    new = next(i for i, ln in enumerate(text) if ln.startswith("engine > newgame"))
    assert any("refused the game" in ln for ln in text[new:]), text
    assert not any(ln.startswith(("engine > position", "engine > go")) for ln in text), text


@pytest.mark.timeout(120)
async def test_a_name_in_use_is_one_line_and_sigterm_frees_it_at_once(arena):
    """A second bot with the same name is refused in one line (exit 2, no traceback);
    SIGTERM (a service manager's stop) stops a bot as Ctrl-C does: exit 143, logged out,
    so the name can be used again at once (not after the session's grace)."""
    await arena.start()
    args = ("--level", "random", "--quick-match", "collapsi")
    async with bots(arena_bot(arena.url, "taken", *args)) as (first,):
        await first.wait_for("waiting for an opponent")
        async with bots(arena_bot(arena.url, "taken", *args)) as (second,):
            code, _, err = await second.finish()
        assert code == 2 and "name_taken" in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1, err
        first.proc.terminate()
        code, _, err = await first.finish()
        assert code == 143 and "Traceback" not in err, (code, err)
    async with bots(arena_bot(arena.url, "taken", *args, "--games", "1")) as (again,):
        await again.wait_for("logged in")


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "option,why",
    [
        ("Sed=3", "random-engine declares no option Sed (it declares: Seed)"),
        (
            "Seed=abc",
            "random-engine's option Seed takes a whole number from 0 to 1000000, got 'abc'",
        ),
        ("Seed=-1", "random-engine's option Seed takes a whole number from 0 to 1000000, got '-1'"),
    ],
)
async def test_an_option_the_engine_does_not_declare_stops_the_run(arena, option, why):
    """ENGINE_PROTOCOL.md: ``setoption`` only for options the engine declared, as
    declared. A typo in ``--engine-option``, or a value the option does not take, stops
    the run, naming what the engine has (the Python example declares ``Seed``, a spin
    from 0 to 1000000), before any game."""
    await arena.start()
    args = ("--engine", PY_ENGINE, "--engine-option", option, "--quick-match", "collapsi")
    async with bots(arena_bot(arena.url, "typo", *args)) as (bot,):
        code, lines, err = await bot.finish()
    assert code == 1, (lines, err)
    assert lines == [f"stopped: {why}"], lines  # (before logging in: never seen online)


@pytest.mark.timeout(120)
async def test_sigterm_mid_game_resigns_it(arena):
    """SIGTERM while the bot plays: its game is resigned (the opponent is told at once,
    not after the clock or the grace), and the bot exits 143."""
    await arena.start()
    async with bots(
        arena_bot(arena.url, "stopper", "--level", "random", "--quick-match", "collapsi")
    ) as (bot,):
        await bot.wait_for("waiting for an opponent")
        ann = await arena.client("ann")
        async for matched, ev in quick_match_events(ann):
            if ev.type == "game_over":
                break
            if ev.to_move == matched.seat:
                if ev.type == "move_made" and ev.ply >= 2 and bot.proc.returncode is None:
                    bot.proc.terminate()  # (both have moved: a resignation, not an abort)
                    continue
                await ann.move(matched.room, ev.legal_moves[0])
        assert ev.result.reason == "resign" and ev.result.winner == matched.seat, ev.result
        code, lines, err = await bot.finish()
        assert code == 143 and "Traceback" not in err, (code, err)
        assert f"game {matched.room}: resigning (the run ended)" in lines, lines
        # a line as the game started, and one as the run stopped
        seat = 1 - matched.seat
        assert any(
            ln.startswith(f"playing {matched.room}: collapsi/") and f"vs ann, seat {seat}" in ln
            for ln in lines
        ), lines
        stop = "bot stopper: stopped as asked; 1 game(s) resigned"
        assert stop in lines, lines
        # the game's own result line comes before the stop's
        (result,) = [i for i, ln in enumerate(lines) if ln.startswith(f"game {matched.room}: ")][1:]
        assert lines[result].startswith(f"game {matched.room}: loss (resign) "), lines
        assert result < lines.index(stop), lines


@pytest.mark.timeout(120)
async def test_sigterm_before_every_player_moved_says_aborted(arena):
    """Stopped before its opponent has moved: the resignation aborts the game (no
    result: PROTOCOL.md), and the bot says so, not that it resigned it."""
    await arena.start()
    args = ("--level", "random", "--quick-match", "collapsi")
    async with bots(arena_bot(arena.url, "early", *args)) as (bot,):
        await bot.wait_for("waiting for an opponent")
        ann = await arena.client("ann")
        async for matched, ev in quick_match_events(ann):
            if ev.type == "game_started":
                await bot.wait_for(f"playing {matched.room}: ")
                bot.proc.terminate()  # (ann never moves)
        assert ev.result.reason == "aborted", ev.result
        code, lines, err = await bot.finish()
    assert code == 143 and "Traceback" not in err, (code, err)
    stop = (
        "bot early: stopped as asked; 0 game(s) resigned, 1 aborted (before every player had moved)"
    )
    ended = [i for i, ln in enumerate(lines) if ln.startswith(f"game {matched.room}: no result ")]
    assert ended and ended[0] < lines.index(stop), lines
    assert lines[ended[0]].startswith(f"game {matched.room}: no result (aborted) collapsi/"), lines


@pytest.mark.timeout(120)
async def test_a_second_sigterm_still_frees_the_name(arena):
    """Two SIGTERMs at once (``timeout`` sends two; so does an impatient Ctrl-C): the
    second may land while the engines are told to quit, after the logout, which now
    comes first, so the name is free at once all the same (not after the grace)."""
    await arena.start()
    args = ("--engine", PY_ENGINE, "--quick-match", "collapsi")
    for attempt in range(3):
        async with bots(arena_bot(arena.url, "twice", *args)) as (bot,):
            await bot.wait_for("waiting for an opponent")
            bot.proc.terminate()
            bot.proc.terminate()
            code, _, err = await bot.finish()
            assert code == 143 and "Traceback" not in err, (attempt, code, err)
        again = await arena.client()
        assert (await again.login("twice", bot=True)).name == "twice"  # (not name_taken)
        await again.close()  # (a clean close: free again at once)
