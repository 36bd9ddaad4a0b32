"""clients.engines: the line codec, and EngineProcess driving real engine programs."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

import engine
from clients.engines import protocol as p
from clients.engines.process import (
    EngineCrashed,
    EngineGarbled,
    EngineIllegalMove,
    EngineNotFound,
    EngineProcess,
    EngineRefused,
    EngineTimeout,
    Search,
)
from tests.engine_examples import LANGUAGES, bad, example_argv, thinker

ROOT = Path(__file__).resolve().parent.parent

# -- the codec -------------------------------------------------------------------


@pytest.mark.parametrize(
    "cmd",
    [
        p.Hello((1, 2)),
        p.SetOption("Hash size", "64"),
        p.SetOption("Clear"),
        p.IsReady(),
        p.NewGame("collapsi", "standard", "custom", 2, 1, {"preset": "5x5", "x": [1, 2]}),
        p.Position("141222J3331J4213"),
        p.Position("1J2", ("3", "5<"), ((0, 4), (2, 7))),
        p.Legal(("1,2", "3")),
        p.Go(),
        p.Go((1, 2, 3), 5, None),
        p.Go(None, None, 4000),
        p.Stop(),
        p.GameOver(None, "score"),
        p.GameOver(1, "no_moves"),
        p.Quit(),
    ],
)
def test_commands_round_trip(cmd):
    assert p.parse_command(p.format_command(cmd)) == cmd


@pytest.mark.parametrize(
    "reply",
    [
        p.Id("name", "Deep Collapse 2"),
        p.OptionDecl("Skill Level", "spin", "3", 0, 20),
        p.OptionDecl("Style", "combo", "safe", vars=("safe", "wild")),
        p.ArenaOk(1),
        p.ReadyOk(),
        p.BestMove("5<"),
        p.Info(depth=4, score=-12, nodes=100, time=3, pv=("1", "2"), string="hi there"),
        p.Info(win_in=3),
        p.Info(loss_in=0),
        p.EngineErrorLine("no such game"),
    ],
)
def test_replies_round_trip(reply):
    assert p.parse_reply(p.format_reply(reply)) == reply


@pytest.mark.parametrize(
    "decl,value,wants",
    [
        (p.OptionDecl("Depth", "spin", "3", 0, 20), "20", None),
        (p.OptionDecl("Depth", "spin", "3", 0, 20), "21", "a whole number from 0 to 20"),
        (p.OptionDecl("Depth", "spin", "3", 1), "x", "a whole number from 1"),
        (p.OptionDecl("Depth", "spin", "3", 1), "+5", "a whole number from 1"),
        (p.OptionDecl("Depth", "spin", "3", 1), "1_000", "a whole number from 1"),
        (p.OptionDecl("Depth", "spin", "3", -9), "-2", None),
        (p.OptionDecl("Depth", "spin", "3", 1), "9" * 5000, "a whole number from 1"),
        (p.OptionDecl("Ponder", "check", "false"), "true", None),
        (p.OptionDecl("Ponder", "check", "false"), "yes", "true or false"),
        (p.OptionDecl("Style", "combo", "safe", vars=("safe", "wild")), "wild", None),
        (
            p.OptionDecl("Style", "combo", "safe", vars=("safe", "wild")),
            "mild",
            "one of safe, wild",
        ),
        (p.OptionDecl("Book", "string"), "any thing", None),
    ],
)
def test_an_option_says_which_values_it_takes(decl, value, wants):
    assert decl.refuses(value) == wants


@pytest.mark.parametrize(
    "line,message",
    [
        ("bestmove", "no move"),
        ("arenaok one", "integer"),
        ("option name X type colour", "unknown type"),
        ("info depth deep", "integer"),
        ("info score win", "plies"),
    ],
)
def test_bad_replies_are_line_errors(line, message):
    with pytest.raises(p.LineError, match=message):
        p.parse_reply(line)


@pytest.mark.parametrize(
    "line,message",
    [
        ("position 1234", "expected 'position setup"),
        ("position setup 12 moves 1 out 0:1", None),  # after moves, 'out' is a move word
        ("position setup 12 out 0-1", "SEAT:PLY"),
        ("go time", "one value per seat"),
        ("go time -5", "negative"),
        ("go fast", "unexpected"),
        ("newgame game collapsi", "missing rules"),
        (
            "newgame game collapsi rules standard variant base players 2 seat 0 options [1]",
            "JSON object",
        ),
        ("setoption value 3", "setoption name"),
    ],
)
def test_bad_commands_are_line_errors(line, message):
    if message is None:
        assert p.parse_command(line) == p.Position("12", ("1", "out", "0:1"))
        return
    with pytest.raises(p.LineError, match=message):
        p.parse_command(line)


def test_unknown_lines_are_ignored_or_marked():
    assert p.parse_command("ucinewgame") is None
    assert p.parse_command("   ") is None
    assert p.parse_reply("hello there") == p.Unknown("hello there")
    # unknown fields of a known command are skipped (how version 1 grows)
    cmd = p.parse_command(
        "newgame game collecto rules standard colour red variant base players 2 seat 0"
    )
    assert cmd == p.NewGame("collecto", "standard", "base", 2, 0)


def test_position_of_a_game_with_a_forfeit_rebuilds_it():
    game = engine.new_game("collapsi", variant="big-board", players=3, seed=2)
    for move in ("3", "8", "23"):
        game.play(move)
    game.eliminate(0, "resign")
    game.play(game.legal_moves()[0])
    pos = p.position_of(game)
    assert pos.out == ((0, 3),)
    again = p.game_from(p.new_game_of(game, 1), p.parse_command(p.format_command(pos)))
    assert again.position() == game.position() and again.legal_moves() == game.legal_moves()


# -- the process driver ----------------------------------------------------------

VARIANTS = [
    ("collapsi", "standard", "base", 2, None),
    ("collapsi", "classic", "base", 2, None),
    ("collapsi", "standard", "big-board", 3, None),
    ("collapsi", "standard", "big-board+shifting", 4, None),
    ("collapsi", "standard", "shifting", 2, None),
    ("collapsi", "standard", "players-choice", 2, None),
    ("collapsi", "standard", "custom", 2, {"preset": "5x5"}),
    ("collecto", "standard", "base", 2, None),
]


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_example_engine_plays_every_game_and_variant_to_the_end(language, tmp_path):
    argv = example_argv(language, tmp_path)

    async def main() -> None:
        async with EngineProcess(argv) as eng:
            assert eng.info is not None and eng.info.name.startswith("random-engine")
            if language == "python":
                assert eng.info.options["Seed"].type == "spin"
                await eng.set_option("Seed", 7)
            for name, rules, variant, players, options in VARIANTS:
                game = engine.new_game(
                    name, rules, variant, seed=5, players=players, options=options
                )
                await eng.new_game(p.new_game_of(game, 0))
                while not game.is_over():
                    clocks = p.Go(time=tuple([5000] * game.num_players), inc=10)
                    result = await eng.play(game, clocks, timeout=10)
                    game.play(result.move)
                await eng.game_over(game.result().winner, game.result().reason)
            await eng.isready()
        assert not eng.running

    asyncio.run(main())


def _game() -> engine.Game:
    return engine.new_game("collapsi", seed=1)


async def _go(eng: EngineProcess, timeout: float = 5.0):
    game = _game()
    await eng.new_game(p.new_game_of(game, 0))
    return await eng.play(game, p.Go(time=(1000, 1000)), timeout=timeout)


def test_a_crash_is_engine_crashed_with_the_exit_status_and_restart_works():
    async def main() -> None:
        eng = EngineProcess(bad("crash"))
        await eng.start()
        with pytest.raises(EngineCrashed, match="exit status 3") as err:
            await _go(eng)
        assert err.value.returncode == 3 and not eng.running
        await eng.restart()
        assert eng.running and eng.restarts == 1
        await eng.quit()

    asyncio.run(main())


def test_a_hung_engine_times_out_and_is_killed():
    async def main() -> None:
        eng = EngineProcess(bad("hang"), stop_grace=0.2)
        await eng.start()
        with pytest.raises(EngineTimeout, match=r"no bestmove within 0\.3s") as err:
            await _go(eng, timeout=0.3)
        assert err.value.hung and err.value.late_move is None and not eng.running

    asyncio.run(main())


def test_an_engine_that_answers_only_after_stop_gives_a_late_move():
    async def main() -> None:
        async with EngineProcess(bad("slow")) as eng:
            with pytest.raises(EngineTimeout) as err:
                await _go(eng, timeout=0.2)
            assert err.value.late_move == _game().legal_moves()[0] and not err.value.hung
            assert eng.running
            await eng.isready()  # still in step

    asyncio.run(main())


def test_illegal_and_garbage_answers():
    async def main() -> None:
        async with EngineProcess(bad("illegal")) as eng:
            with pytest.raises(EngineIllegalMove, match="illegal move '999'"):
                await _go(eng)
        async with EngineProcess(bad("garbage"), stop_grace=0.2) as eng:
            with pytest.raises(EngineTimeout, match="it printed 'I think the best move"):
                await _go(eng, timeout=0.3)

    asyncio.run(main())


def test_handshake_failures_and_refusals():
    async def main() -> None:
        with pytest.raises(EngineTimeout, match="arenaok"):
            await EngineProcess(bad("nohandshake"), handshake_timeout=0.3).start()
        with pytest.raises(EngineNotFound, match="cannot start"):
            await EngineProcess(["/nonexistent/engine"]).start()
        async with EngineProcess(bad("refuse")) as eng:
            with pytest.raises(EngineRefused, match="I play nothing"):
                await eng.new_game(p.new_game_of(_game(), 0))
            await eng.isready(timeout=5)  # (the refusal's readyok was taken with it)
        # an engine whose error comes instead of the readyok: declined within a second
        # or so, not after the wait's whole 10 s
        async with EngineProcess(bad("refuse-only")) as eng:
            began = time.monotonic()
            with pytest.raises(EngineRefused, match="I play nothing"):
                await eng.new_game(p.new_game_of(_game(), 0), timeout=10)
            assert time.monotonic() - began < 5
        script = "print('arenaok 7', flush=True); input()"
        with pytest.raises(EngineGarbled, match="arenaok 7"):
            await EngineProcess([sys.executable, "-c", script]).start()

    asyncio.run(main())


#: an engine whose answers to ``go`` come as the argument says: in two writes a moment
#: apart, as a line over the protocol's limit, or as a last line without its newline
_ODD_WRITER = """
import sys, time
mode = sys.argv[1]
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "arena":
        sys.stdout.write("id name odd\\narenaok 1\\n")
    elif word == "isready":
        sys.stdout.write("readyok\\n")
    elif word == "legal":
        move = line.split()[1]
    elif word == "go" and mode == "split":
        sys.stdout.write("best"); sys.stdout.flush(); time.sleep(0.05)
        sys.stdout.write("move " + move + "\\r\\n")
    elif word == "go" and mode == "long":
        sys.stdout.write("info string " + "x" * 70000 + "\\nbestmove " + move + "\\n")
    elif word == "go" and mode == "unended":
        sys.stdout.write("bestmove " + move); sys.stdout.flush(); sys.exit(0)
    sys.stdout.flush()
"""


def test_answers_are_read_as_lines_however_they_arrive():
    async def main() -> None:
        legal = _game().legal_moves()[0]
        async with EngineProcess([sys.executable, "-c", _ODD_WRITER, "split"]) as eng:
            assert (await _go(eng)).move == legal  # a line in two pieces, ended by \r\n
            assert (await _go(eng)).move == legal
        async with EngineProcess([sys.executable, "-c", _ODD_WRITER, "unended"]) as eng:
            assert (await _go(eng)).move == legal  # the last line, then the end
        async with EngineProcess([sys.executable, "-c", _ODD_WRITER, "long"]) as eng:
            # a line over the limit: the output is unusable, as if the engine had gone
            with pytest.raises(EngineCrashed, match="instead of answering bestmove"):
                await _go(eng)

    asyncio.run(main())


async def _begin(eng: EngineProcess, seen: list[str]):
    """A search begun as from a callback: the hook notes each answer it is given."""
    game = _game()
    await eng.new_game(p.new_game_of(game, 0))
    search = eng.begin_go(
        p.position_of(game),
        game.legal_moves(),
        p.Go(time=(1000, 1000)),
        on_move=lambda best: seen.append(best.move),
    )
    assert search is not None
    return search


def test_a_search_begun_at_once_gives_its_answer_to_the_hook(tmp_path):
    async def main() -> None:
        async with EngineProcess(bad("illegal")) as eng:
            seen: list[str] = []
            search = await _begin(eng, seen)
            with pytest.raises(EngineIllegalMove):  # (the hook's caller judges it too)
                await eng.finish_go(search, timeout=5)
            assert seen == ["999"]
        async with EngineProcess(example_argv("python", tmp_path)) as eng:
            seen = []
            search = await _begin(eng, seen)
            result = await eng.finish_go(search, timeout=5)
            assert seen == [result.move] and result.move in _game().legal_moves()
            await eng.send_line("go")  # (the same position again, with nothing disarming)
            again = await eng.finish_go(Search(None, 0.0), timeout=5)
            assert again.move in _game().legal_moves()
            assert seen == [result.move]  # disarmed once it had its answer
        assert eng.begin_go(p.position_of(_game())) is None  # (not running: go() says why)

    asyncio.run(main())


def test_a_late_answer_after_stop_is_not_given_to_the_hook():
    async def main() -> None:
        async with EngineProcess(bad("slow")) as eng:
            seen: list[str] = []
            search = await _begin(eng, seen)
            with pytest.raises(EngineTimeout) as err:
                await eng.finish_go(search, timeout=0.2)
            assert err.value.late_move == _game().legal_moves()[0] and seen == []

    asyncio.run(main())


def test_a_search_begun_at_once_and_cancelled_is_stopped_and_its_answer_dropped(tmp_path):
    async def main() -> None:
        game = _game()
        first, second = game.legal_moves()[:2]
        async with EngineProcess(thinker(1.5)) as eng:
            await eng.new_game(p.new_game_of(game, 0))
            seen: list[str] = []
            search = eng.begin_go(p.position_of(game), [first], on_move=seen.append)
            assert search is not None
            await eng.cancel_go()  # (its game ended): stop, the answer taken and dropped
            assert eng.running and seen == []
            answer = await eng.go(p.position_of(game), [second], timeout=10)
            assert answer.move == second  # not the cancelled search's
        async with EngineProcess(example_argv("python", tmp_path)) as eng:
            await eng.new_game(p.new_game_of(game, 0))
            answered = asyncio.Event()
            search = eng.begin_go(
                p.position_of(game), game.legal_moves(), on_move=lambda b: answered.set()
            )
            await asyncio.wait_for(answered.wait(), 10)
            await eng.cancel_go()  # answered already: no stop (it would wait for nothing)
            assert eng.running
            assert (await _go(eng)).move in game.legal_moves()
        slow = [sys.executable, str(ROOT / "bench" / "instant_engine.py"), "--think-ms", "5000"]
        async with EngineProcess(slow, stop_grace=0.2) as eng:
            await eng.new_game(p.new_game_of(game, 0))
            assert eng.begin_go(p.position_of(game), game.legal_moves()) is not None
            await eng.cancel_go()  # deaf to stop while it thinks: killed
            assert not eng.running

    asyncio.run(main())


def test_a_game_begun_at_once_calls_the_hook_at_readyok_and_not_after_a_refusal(tmp_path):
    async def main() -> None:
        game = _game()
        async with EngineProcess(example_argv("python", tmp_path)) as eng:
            seen: list[str] = []

            def ready() -> None:  # (as arena bot does: the first search begun from here)
                seen.append("ready")
                search = eng.begin_go(p.position_of(game), game.legal_moves(), p.Go())
                assert search is not None
                begun.append(search)

            begun: list[Search] = []
            assert eng.begin_new_game(p.new_game_of(game, 0), ready)
            await eng.finish_new_game(timeout=5)  # (its readyok, queued after the hook ran)
            assert seen == ["ready"] and len(begun) == 1
            assert (await eng.finish_go(begun[0], timeout=5)).move in game.legal_moves()
        # the refusal and its readyok in one write: both read in one callback, the hook
        # disarmed by the error line there (not by finish_new_game's end)
        async with EngineProcess([sys.executable, "-c", _REFUSER]) as eng:
            seen = []
            assert eng.begin_new_game(p.new_game_of(game, 0), lambda: seen.append("ready"))
            with pytest.raises(EngineRefused, match="I play nothing"):
                await eng.finish_new_game(timeout=5)
            await eng.isready()  # (the refusal's readyok, then this one's: in step)
            assert seen == []
        assert not eng.begin_new_game(p.new_game_of(game, 0), lambda: None)  # not running

    asyncio.run(main())


#: refuses every game, its error and readyok in one write; says arenaok only after 0.3 s
_REFUSER = """
import sys, time
refused = False
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "arena":
        time.sleep(0.3)
        sys.stdout.write("id name refuser\\narenaok 1\\n")
    elif word == "newgame":
        refused = True
    elif word == "isready":
        sys.stdout.write("error I play nothing\\nreadyok\\n" if refused else "readyok\\n")
        refused = False
    sys.stdout.flush()
"""


def test_nothing_is_begun_at_once_while_the_engine_starts():
    async def main() -> None:
        game = _game()
        eng = EngineProcess([sys.executable, "-c", _REFUSER])
        starting = asyncio.create_task(eng.start())
        for _ in range(500):  # (until the process runs: its handshake takes 0.3 s more)
            if eng.running:
                break
            await asyncio.sleep(0.01)
        assert eng.running and not starting.done()
        # the handshake first (ENGINE_PROTOCOL.md): no newgame, no go before arenaok
        assert not eng.begin_new_game(p.new_game_of(game, 0), lambda: None)
        assert eng.begin_go(p.position_of(game), game.legal_moves()) is None
        await starting
        assert eng.begin_new_game(p.new_game_of(game, 0), lambda: None)  # now it may
        await eng.quit()

    asyncio.run(main())
