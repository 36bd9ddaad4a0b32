"""Tournaments hosted by the server (issue 17 part B), the way people run them: a real
``arena serve``, the operator's ``arena tournament create/start``, real ``arena bot``
processes entered with ``--tournament``; a spectator on the protocol.

Games are short: an engine that plays the first legal move (tests/engines/bad_engine.py
``pause``: 0.15 s a move, so a spectator can join a game while it runs) on 4x4 boards.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from arena_process import ROOT, Node, serve_command, start_node, stop_node
from conftest import strong
from redis_server import free_port
from test_bot_cmd import Bot, arena_bot
from test_multinode import serve_argv

from clients.client import ArenaError, Client
from protocol import messages as m
from tests.engine_examples import bad

ADMIN = "tourney-admin-token-0123456789"
PAUSE_ENGINE = shlex.join(bad("pause"))
NAMES = ["ava", "ben", "cat", "dan"]


async def arena_cmd(*args: str) -> str:
    """``arena ARGS`` as a subprocess; its output (it must succeed)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clients.cli",
        *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, (args, out.decode(), err.decode())
    return out.decode()


async def create(url: str, *args: str) -> str:
    """``arena tournament create``: the new tournament's id (its first line)."""
    out = await arena_cmd(
        "tournament", "create", "--url", url, "--admin-token", ADMIN, "--name", "t", *args
    )
    return out.splitlines()[0]


async def enter(url: str, name: str, tid: str) -> Bot:
    bot = await arena_bot(
        url, name, "--token", strong(f"tok-{name}"), "--engine", PAUSE_ENGINE, "--tournament", tid
    )
    await bot.wait_for(f"tournament {tid}: entered")
    return bot


@contextlib.asynccontextmanager
async def entered(urls: list[str], tid: str) -> AsyncIterator[list[Bot]]:
    """Four bots entered in ``tid`` (bot i on ``urls[i % len(urls)]``); killed on the way out."""
    started = await asyncio.gather(
        *(enter(urls[i % len(urls)], n, tid) for i, n in enumerate(NAMES))
    )
    try:
        yield list(started)
    finally:
        for b in started:
            if b.proc.returncode is None:
                b.proc.kill()
                await b.proc.wait()


async def finish_all(bots: list[Bot], timeout: float = 120) -> None:
    """Every bot ends by itself (the tournament is over), with status 0."""
    for b in bots:
        code, lines, err = await b.finish(timeout, others=tuple(bots))
        assert code == 0, (lines, err)
        assert any("over: rank" in ln for ln in lines), lines


async def anonymous(url: str) -> Client:
    c = Client(url)
    await c.connect()
    return c


async def check_against_records(url: str, tid: str, rounds_of: int | None = 1) -> m.Standings:
    """The finished tournament's table is the sum of its games, each game's points are its
    record's result, and (a round robin) every two players met ``rounds_of`` times."""
    c = await anonymous(url)
    try:
        table = await c.standings(tid)
        assert table.status == "finished"
        assert table.games
        points: Counter[str] = Counter()
        games: Counter[str] = Counter()
        met: Counter[frozenset[str]] = Counter()
        for g in table.games:
            assert g.status == "finished", g
            if g.reason == "aborted":  # played again in a new room (PROTOCOL.md)
                continue
            assert g.record is not None, g
            rec = await c.get_record(g.record)
            assert rec.data.players == g.players
            assert rec.rated == bool(table.summary and table.summary.rated)
            assert rec.data.result.reason == g.reason
            w = rec.data.result.winner
            assert g.points == ([0.5, 0.5] if w is None else [float(i == w) for i in range(2)])
            for name, p in zip(g.players, g.points, strict=True):
                points[name] += p
                games[name] += 1
            met[frozenset(g.players)] += 1
        assert {r.name for r in table.rows} == set(NAMES)
        for r in table.rows:
            assert r.points == points[r.name], (r, points)
            assert r.games == games[r.name] == r.wins + r.draws + r.losses
        ranked = [r.points for r in table.rows]
        assert ranked == sorted(ranked, reverse=True)
        if rounds_of is not None:
            pairs = {frozenset((a, b)) for a in NAMES for b in NAMES if a != b}
            assert set(met) == pairs and set(met.values()) == {rounds_of}
        return table
    finally:
        await c.close()


async def first_live_game(spectator: Client, tid: str) -> tuple[str, m.RoomState]:
    """Follow the standings until a game runs, and watch it: its room and snapshot."""
    table = await spectator.subscribe_tournament(tid)
    tried: set[str] = set()
    while True:
        for g in table.games or []:
            if g.status == "playing" and g.room not in tried:
                tried.add(g.room)
                with contextlib.suppress(ArenaError):  # over and closed meanwhile
                    state = await spectator.watch(g.room)
                    if state.status == "playing":
                        return g.room, state
        table = await spectator.next("standings", timeout=60)


@pytest.mark.timeout(120)
async def test_four_arena_bots_play_a_hosted_round_robin_that_a_spectator_watches(
    tmp_path: Path,
) -> None:
    node = await start_node(
        serve_command("--data-dir", str(tmp_path / "data"), "--admin-token", ADMIN)
    )
    try:
        tid = await create(node.url, "--clock", "fixed:5", "--format", "round-robin", "--rated")
        listed = await arena_cmd("tournament", "list", "--url", node.url)
        assert tid in listed and "open" in listed
        spectator = await anonymous(node.url)
        async with entered([node.url], tid) as bots:
            assert "started" in await arena_cmd(
                "tournament", "start", tid, "--url", node.url, "--admin-token", ADMIN
            )
            room, state = await first_live_game(spectator, tid)
            over = await spectator.next("game_over", room=room, timeout=60)
            await finish_all(bots)
        table = await check_against_records(node.url, tid)
        (game,) = [g for g in table.games or [] if g.room == room]
        assert over.record == game.record and state.seats[0].player.name == game.players[0]
        assert over.ratings, "a rated tournament's games are rated as usual"
        board = await spectator.leaderboard("collapsi")
        assert {e.name for e in board} == set(NAMES)
        assert all(e.games == 3 for e in board)
        await spectator.close()
        shown = await arena_cmd("tournament", "standings", tid, "--url", node.url)
        assert "finished" in shown and all(n in shown for n in NAMES)
    finally:
        await stop_node(node)


async def test_operators_need_the_admin_token_and_players_a_claimed_name(
    tmp_path: Path,
) -> None:
    node = await start_node(serve_command("--store", "memory", "--admin-token", ADMIN))
    try:
        c = await anonymous(node.url)
        for token in ("not-the-admin-token-at-all", ADMIN[:-1]):
            with pytest.raises(ArenaError) as refused:
                await c.request(
                    m.CreateTournament(
                        admin_token=token, name="x", game="collapsi", format="round_robin"
                    )
                )
            assert refused.value.code == "forbidden"
        with pytest.raises(ArenaError) as bad_format:
            await c.request(
                m.CreateTournament(admin_token=ADMIN, name="x", game="collapsi", format="ko")
            )
        assert bad_format.value.code == "bad_request"
        with pytest.raises(ArenaError) as unknown:
            await c.standings("t-nope")
        assert unknown.value.code == "unknown_tournament"
        tid = await create(node.url, "--format", "swiss", "--rounds", "2")
        await c.login("guesty")
        with pytest.raises(ArenaError) as guest:
            await c.join_tournament(tid)
        assert guest.value.code == "forbidden"
        with pytest.raises(ArenaError) as early:  # nobody entered yet
            await c.request(m.StartTournament(admin_token=ADMIN, tournament=tid))
        assert early.value.code == "forbidden"
        await c.request(m.CancelTournament(admin_token=ADMIN, tournament=tid))
        (summary,) = [t for t in await c.list_tournaments() if t.tournament == tid]
        assert summary.status == "finished" and summary.cancelled
        await c.close()
    finally:
        await stop_node(node)


async def wait_games(c: Client, tid: str, finished: int) -> m.Standings:
    """Standings (subscribed on ``c``) once ``finished`` games are over."""
    table = await c.subscribe_tournament(tid)
    while sum(g.status == "finished" for g in table.games or []) < finished:
        table = await c.next("standings", timeout=60)
    return table


@pytest.mark.timeout(150)
async def test_a_one_node_sqlite_server_restarted_mid_tournament_finishes_it(
    tmp_path: Path,
) -> None:
    """``kill -9`` of the only node after the first games, then ``arena serve`` again on
    the same data dir and port: the bots come back, nothing played is lost."""
    port = free_port()
    argv = serve_command(
        "--data-dir", str(tmp_path / "data"), "--admin-token", ADMIN, "--grace", "60"
    )
    argv[argv.index("--port") + 1] = str(port)
    node = await start_node(argv)
    url = node.url
    tid = await create(url, "--clock", "fixed:5", "--format", "swiss", "--rounds", "3")
    try:
        async with entered([url], tid) as bots:
            await arena_cmd("tournament", "start", tid, "--url", url, "--admin-token", ADMIN)
            watcher = await anonymous(url)
            before = await wait_games(watcher, tid, 2)
            node.kill9()
            await node.proc.wait()
            node = await start_node(argv)
            await finish_all(bots)
        c = await anonymous(url)
        table = await c.standings(tid)
        await c.close()
        assert table.status == "finished" and table.round == 3
        kept = {g.room: g for g in table.games or []}
        for g in before.games or []:
            if g.status == "finished":
                assert kept[g.room] == g, "a result from before the kill changed or went"
        scored = [g for g in table.games or [] if g.reason != "aborted"]
        assert len(scored) == 6  # 3 rounds of 2 games
        assert sum(r.points for r in table.rows) == 6
    finally:
        await stop_node(node, clean=False)


@pytest.mark.timeout(150)
async def test_with_redis_kill_9_of_the_directing_node_loses_no_result(
    redis_url: str, redis_prefix: str
) -> None:
    """Two nodes on one Redis; the node directing the tournament (and hosting its rooms)
    is killed after the first game ends: the other takes over, the games go on, the
    tournament finishes with every result."""
    a = await start_node([*serve_argv(redis_url, redis_prefix, "ta"), "--admin-token", ADMIN])
    b: Node | None = None
    try:
        tid = await create(a.url, "--clock", "fixed:5", "--format", "round-robin")
        await wait_lease(redis_url, redis_prefix, tid, "ta")
        b = await start_node(
            [*serve_argv(redis_url, redis_prefix, "tb"), "--admin-token", ADMIN], name="tb"
        )
        async with entered([b.url], tid) as bots:  # players on b, the director on a
            await arena_cmd("tournament", "start", tid, "--url", b.url, "--admin-token", ADMIN)
            watcher = await anonymous(b.url)
            before = await wait_games(watcher, tid, 1)
            a.kill9()
            await finish_all(bots)
            await watcher.close()
        table = await check_against_records(b.url, tid)
        kept = {g.room: g for g in table.games or []}
        for g in before.games or []:
            if g.status == "finished":
                assert kept[g.room] == g
    finally:
        await stop_node(a, clean=False)
        if b is not None:
            await stop_node(b)


async def wait_lease(url: str, prefix: str, tid: str, node: str) -> None:
    import redis.asyncio as aioredis

    r: Any = aioredis.Redis.from_url(url, decode_responses=True)
    try:
        async with asyncio.timeout(10):
            while await r.get(f"{prefix}tournament-lease:{tid}") != node:
                await asyncio.sleep(0.05)
    finally:
        await r.aclose()


@pytest.mark.timeout(150)
async def test_a_player_who_dropped_is_not_paired_until_back(tmp_path: Path) -> None:
    """A bot killed (its connection dropped, its session in the grace period) before the
    start: the others' games of the first round are played, its own wait; the bot
    started again under its name is paired and the round robin ends."""
    node = await start_node(
        serve_command("--data-dir", str(tmp_path / "data"), "--admin-token", ADMIN)
    )
    try:
        tid = await create(node.url, "--clock", "fixed:5", "--format", "round-robin")
        async with entered([node.url], tid) as bots:
            gone = NAMES[0]
            bots[0].proc.kill()  # dropped, not logged out
            await bots[0].proc.wait()
            await arena_cmd("tournament", "start", tid, "--url", node.url, "--admin-token", ADMIN)
            watcher = await anonymous(node.url)
            table = await wait_games(watcher, tid, 1)
            await asyncio.sleep(1.0)  # (several director ticks: nothing may pair it)
            table = await watcher.standings(tid)
            assert table.round == 1
            assert all(gone not in g.players for g in table.games or []), table.games
            back = await enter(node.url, gone, tid)
            bots.append(back)
            await finish_all([back, *bots[1:]])
            await watcher.close()
        await check_against_records(node.url, tid)
    finally:
        await stop_node(node)


@pytest.mark.timeout(120)
async def test_an_arena_pairs_whoever_is_free_until_its_time_is_up(tmp_path: Path) -> None:
    node = await start_node(serve_command("--store", "memory", "--admin-token", ADMIN))
    try:
        tid = await create(node.url, "--clock", "fixed:5", "--format", "arena", "--duration", "6")
        async with entered([node.url], tid) as bots:
            await arena_cmd("tournament", "start", tid, "--url", node.url, "--admin-token", ADMIN)
            await finish_all(bots)
        table = await check_against_records(node.url, tid, rounds_of=None)
        assert table.summary is not None and table.summary.ends_at is not None
        games = table.games or []
        assert len(games) >= 4  # two waves at least in 6 s of 1-2 s games
        last: dict[str, str] = {}
        for g in games:  # never the same opponent twice in a row
            a, b = g.players
            assert last.get(a) != b or g.reason == "aborted", games
            last[a], last[b] = b, a
    finally:
        await stop_node(node)


@pytest.mark.timeout(120)
async def test_a_player_who_leaves_loses_the_rest_by_forfeit_and_the_others_finish(
    tmp_path: Path,
) -> None:
    """A round robin of two bots and a player on the protocol who withdraws after the
    start: her unplayed games are forfeits (no room, no record), any game she was
    already matched into she leaves, and the bots' own game decides the rest."""
    node = await start_node(serve_command("--store", "memory", "--admin-token", ADMIN))
    try:
        tid = await create(node.url, "--clock", "fixed:5", "--format", "round-robin")
        eve = Client(node.url)
        await eve.connect()
        await eve.login("eve", token=strong("tok-eve"))
        await eve.join_tournament(tid)
        bots = [await enter(node.url, n, tid) for n in NAMES[:2]]
        try:
            await arena_cmd("tournament", "start", tid, "--url", node.url, "--admin-token", ADMIN)
            await eve.leave_tournament(tid)
            with contextlib.suppress(TimeoutError):  # matched before she left: she walks out
                matched = await eve.next("matched", timeout=1.0)
                await eve.leave(matched.room)
            for b in bots:
                code, lines, err = await b.finish(90, others=tuple(bots))
                assert code == 0, (lines, err)
        finally:
            for b in bots:
                if b.proc.returncode is None:
                    b.proc.kill()
                    await b.proc.wait()
        table = await eve.standings(tid)
        await eve.close()
        assert table.status == "finished"
        rows = {r.name: r for r in table.rows}
        assert rows["eve"].withdrawn and rows["eve"].points == 0
        assert rows["ava"].points + rows["ben"].points == 3  # two wins over eve, one game
        forfeits = [g for g in table.games or [] if g.reason == "forfeit"]
        assert forfeits and all(g.record is None and "eve" in g.players for g in forfeits)
        (played,) = [g for g in table.games or [] if set(g.players) == {"ava", "ben"}]
        assert played.record is not None
    finally:
        await stop_node(node)
