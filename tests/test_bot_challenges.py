"""``arena bot --challenge``: the challenged bot's answer may be read before the
server's answer to the challenge itself (a loaded machine, in a clean clone's run: the
challenger then waited for a challenge already played, and its last game never began).

Two runners in this process on a real server; the challenger's client holds the
server's answer to ``challenge`` back until the runner has routed the challenged bot's
``matched`` or ``challenge_ended``, which makes that order certain.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import secrets
import shlex
import time
from typing import Any, get_args

import pytest
from engine_examples import bad

from clients.bot import challenges
from clients.bot.brains import EngineBrain, LevelBrain
from clients.bot.challenges import _FOR_GOOD
from clients.bot.config import BotConfig
from clients.bot.runner import BotRunner
from clients.client import Client
from protocol import messages as m
from protocol.client import DeclineReason

GAME_EVENTS = ("game_started", "move_made", "player_eliminated", "game_over")


class Runner(BotRunner):
    """A runner whose client answers ``challenge`` only after the challenge's end."""

    def __init__(self, url: str, name: str, level: str = "random", **play: Any) -> None:
        cfg = BotConfig(url=url, name=name, level=level, **play).check()
        super().__init__(cfg, lambda strike, log: LevelBrain(level, 1), io.StringIO())
        self.routed = asyncio.Event()  # a matched or challenge_ended was routed
        self.spoke = asyncio.Event()  # a line was said
        self.asked = 0  # challenges sent
        self.asking = asyncio.Event()  # one more was sent
        runner = self

        class Late(Client):
            async def challenge(self, *args: Any, **kwargs: Any) -> Any:
                runner.asked += 1
                runner.asking.set()
                sent = await super().challenge(*args, **kwargs)
                runner.routed.clear()
                async with asyncio.timeout(20):
                    await runner.routed.wait()
                return sent

        self.client = Late(url, keep_events=False, patient=True)

    def _route(self, msg: Any) -> None:
        super()._route(msg)
        if msg.type in ("matched", "challenge_ended"):
            self.routed.set()

    def say(self, text: str) -> None:
        super().say(text)
        self.spoke.set()

    def said(self) -> list[str]:
        return self.out.getvalue().splitlines()

    async def until_said(self, text: str, times: int) -> None:
        async with asyncio.timeout(30):
            while sum(text in ln for ln in self.said()) < times:
                self.spoke.clear()
                await self.spoke.wait()


@pytest.mark.timeout(90)
async def test_a_challenge_accepted_before_its_answer_is_read_is_not_waited_on(arena):
    """Both games are played: the second challenge is sent after the first game."""
    await arena.start()
    host = Runner(arena.url, "host", accept_challenges=True, games=2)
    challenger = Runner(arena.url, "challenger", challenge=["host", "collapsi"], games=2)
    assert await asyncio.wait_for(asyncio.gather(host.run(), challenger.run()), 60) == [0, 0]
    for r in (host, challenger):
        games = [ln for ln in r.said() if ln.startswith("game ")]
        assert len(games) == 2 and all("(no_moves)" in ln for ln in games), r.said()


async def decline_all(host: Client, reason: str | None) -> None:
    """Decline every challenge ``host`` receives, with ``reason``."""
    while True:
        got = await host.next(type="challenged", timeout=60)
        await host.decline_challenge(got.challenge, reason)


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    ("reason", "why"),
    [
        ("later", "busy: no room for another game now"),
        (None, "it may not play collecto, or take no challenges"),  # (a reason not given)
    ],
)
async def test_a_challenge_declined_before_its_answer_is_read_is_sent_again_later(
    arena, reason, why
):
    """A decline that may be taken back later (busy, or no reason): the challenger says
    so and challenges again, later after each decline in a row."""
    await arena.start()
    host = await arena.client("host", bot=True)
    challenger = Runner(arena.url, "challenger", challenge=["host", "collecto"], games=1)
    hosting = asyncio.create_task(decline_all(host, reason))
    asking = asyncio.create_task(challenger.run())
    try:
        await challenger.until_said("challenge to host declined", 2)
    finally:
        for t in (hosting, asking):
            t.cancel()
        await asyncio.gather(hosting, asking, return_exceptions=True)
    told = [ln for ln in challenger.said() if ln.startswith("challenge to host")]
    assert told[:2] == [
        f"challenge to host declined ({why}): challenging again in 1 s",
        f"challenge to host declined, 2 times in a row ({why}): challenging again in 2 s",
    ], challenger.said()


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    ("host_play", "why", "reason"),
    [
        # (mcts is a Collapsi level: it declines a Collecto challenge for good)
        ({"level": "mcts", "accept_challenges": True}, "does not play collecto", "game"),
        ({"quick_match": ["collapsi/shifting"]}, "takes no challenges", "no_challenges"),
        (
            {"accept_challenges": True, "accept_clocks": ["1+0"]},
            "does not play untimed games",
            "time_control",
        ),
    ],
)
async def test_a_challenge_declined_for_good_is_not_sent_again(arena, host_play, why, reason):
    """The run ends, and says why, after one challenge: it would be declined again."""
    await arena.start()
    host = Runner(arena.url, "host", games=1, **host_play)
    hosting = asyncio.create_task(host.run())
    challenger = Runner(arena.url, "challenger", challenge=["host", "collecto"], games=1)
    try:
        async with asyncio.timeout(30):
            while "logged in" not in "".join(host.said()):  # (online before the challenge)
                host.spoke.clear()
                await host.spoke.wait()
            assert await challenger.run() == 1
    finally:
        hosting.cancel()
        await asyncio.gather(hosting, return_exceptions=True)
    assert challenger.asked == 1
    gave_up = f"host {why}: not challenging host again"
    assert challenger.said()[1:] == [
        f"challenge to host declined: {gave_up}",
        f"stopped: {gave_up}",
    ], challenger.said()
    assert (
        f"challenge from challenger: collecto/base/standard, clock none, declined ({reason})"
        in host.said()
    )


@pytest.mark.timeout(90)
async def test_a_game_declined_for_good_is_left_out_of_the_challenges(arena):
    """``--challenge host collecto collapsi`` to a Collapsi level: both games are Collapsi."""
    await arena.start()
    host = Runner(arena.url, "host", "mcts", accept_challenges=True, games=2)
    spec = ["host", "collecto", "collapsi"]
    challenger = Runner(arena.url, "challenger", challenge=spec, games=2)
    assert await asyncio.wait_for(asyncio.gather(host.run(), challenger.run()), 60) == [0, 0]
    said = challenger.said()
    assert "challenge to host declined: host does not play collecto; challenging it to " \
        "collapsi" in said, said  # fmt: skip
    games = [ln for ln in said if ln.startswith("game ")]
    assert len(games) == 2 and all(" collapsi/base/" in ln for ln in games), said
    assert challenger.asked == 3, said  # (collecto once, then collapsi twice)


@pytest.mark.timeout(60)
async def test_challenging_a_player_who_is_not_online_says_so_once_and_asks_again(
    arena, monkeypatch
):
    """Asked again and again, each time later (doubled) up to ``OFFLINE_AT_MOST_S``."""
    monkeypatch.setattr(challenges, "AGAIN_AFTER_S", 0.05)
    monkeypatch.setattr(challenges, "OFFLINE_AT_MOST_S", 0.2)
    await arena.start()
    challenger = Runner(arena.url, "challenger", challenge=["ghost", "collapsi"], games=1)
    desk = challenger.challenges
    waits: list[float] = []  # the wait set after each challenge refused as not online
    sent_at: list[float] = []  # when each challenge went
    send = desk.send

    async def timed_send() -> None:
        sent_at.append(time.monotonic())
        await send()
        waits.append(desk._after - time.monotonic())

    desk.send = timed_send  # type: ignore[method-assign]
    asking = asyncio.create_task(challenger.run())
    try:
        async with asyncio.timeout(30):
            while challenger.asked < 5:
                challenger.asking.clear()
                await challenger.asking.wait()
    finally:
        asking.cancel()
        await asyncio.gather(asking, return_exceptions=True)
    assert challenger.said()[1:] == [
        "ghost is not online: challenging again until they are",
        "bot challenger: stopped as asked; 0 game(s) resigned",
    ], challenger.said()
    for wait, due in zip(waits, [0.05, 0.1, 0.2, 0.2], strict=False):
        assert due - 0.01 < wait <= due, waits
    # and the challenges went that far apart (not sooner)
    gaps = [b - a for a, b in itertools.pairwise(sent_at)]
    for gap, due in zip(gaps, [0.05, 0.1, 0.2, 0.2], strict=False):
        assert gap >= due - 0.01, gaps
    assert len(waits) >= 4, waits


def held_challenger(url: str, may_resume: asyncio.Event, **play: Any) -> BotRunner:
    """A bot (a random level) challenging ``host``, whose resume after a drop waits for
    ``may_resume``: the test acts while its connection is down."""

    class Held(BotRunner):
        async def _reconnect(self) -> None:
            await may_resume.wait()
            await super()._reconnect()

    cfg = BotConfig(url=url, name="challenger", level="random", challenge=["host"], **play)
    return Held(cfg.check(), lambda strike, log: LevelBrain("random", 1), io.StringIO())


async def play_out(host: Client, matched: Any) -> None:
    """``host`` plays its first legal move each turn, until the game is over."""
    while True:
        ev = await host.next(type=GAME_EVENTS, room=matched.room, timeout=30)
        if ev.type == "game_over":
            return
        if ev.to_move == matched.seat and ev.legal_moves:
            await host.move(matched.room, ev.legal_moves[0])


@pytest.mark.timeout(90)
async def test_a_decline_lost_in_a_drop_is_heard_again_after_the_resume(arena):
    """The server tells a connected session only: the host's decline, sent while the
    challenger's connection was down, is lost. Once resumed, the challenger takes its
    challenge back and asks again; before, it waited for that answer forever."""
    await arena.start()
    host = await arena.client("host", bot=True)
    may_resume = asyncio.Event()  # (after the host's decline)
    challenger = held_challenger(arena.url, may_resume)
    asking = asyncio.create_task(challenger.run())
    try:
        first = await host.next(type="challenged", timeout=30)
        challenger.client.abort()
        await host.decline_challenge(first.challenge, "rated")  # (for good: asked no more)
        may_resume.set()
        again = await host.next(type="challenged", timeout=30)
        await host.decline_challenge(again.challenge, "rated")
        assert await asyncio.wait_for(asking, 30) == 1
    finally:
        asking.cancel()
        await asyncio.gather(asking, return_exceptions=True)
    said = challenger.out.getvalue().splitlines()
    assert "reconnected: session resumed" in said, said
    assert said[-1] == "stopped: host plays no rated games: not challenging host again", said


def test_every_decline_reason_is_either_asked_again_or_for_good():
    """The protocol's reasons (PROTOCOL.md, "Decline reasons") and the bot's reading."""
    assert set(get_args(DeclineReason)) == {"generic", "later", *_FOR_GOOD}


@pytest.mark.timeout(90)
async def test_a_host_whose_last_game_has_begun_takes_no_more_challenges(arena):
    """Not "later": the host will not play another game (``--games 1``, under way)."""
    await arena.start()
    host = Runner(arena.url, "host", accept_challenges=True, games=1)
    hosting = asyncio.create_task(host.run())
    ann = await arena.client("ann")
    try:
        await ann.challenge("host", "collapsi")  # (accepted: ann never moves, so it lasts)
        await ann.next(type="matched", timeout=30)
        rival = Runner(arena.url, "rival", challenge=["host", "collapsi"], games=1)
        assert await asyncio.wait_for(rival.run(), 30) == 1
    finally:
        hosting.cancel()
        await asyncio.gather(hosting, return_exceptions=True)
    gave_up = "host takes no challenges: not challenging host again"
    assert rival.said()[-1] == f"stopped: {gave_up}", rival.said()
    assert (
        "challenge from rival: collapsi/base/standard, clock none, declined (no_challenges)"
        in host.said()
    )


@pytest.mark.timeout(90)
async def test_a_game_begun_during_a_drop_is_played_after_the_resume(arena):
    """The host accepts while the challenger's connection is down: the challenger's
    ``matched`` is lost, and the game comes with the resume's rooms. It is played;
    before, its snapshot was kept for a task never started, and the game stood still."""
    await arena.start()
    host = await arena.client("host", bot=True)
    may_resume = asyncio.Event()  # (after the host's accept)
    challenger = held_challenger(arena.url, may_resume, games=1)
    asking = asyncio.create_task(challenger.run())
    try:
        got = await host.next(type="challenged", timeout=30)
        challenger.client.abort()
        await host.accept_challenge(got.challenge)
        matched = await host.next(type="matched", timeout=30)
        may_resume.set()
        await play_out(host, matched)
        assert await asyncio.wait_for(asking, 30) == 0
    finally:
        asking.cancel()
        await asyncio.gather(asking, return_exceptions=True)
    said = challenger.out.getvalue().splitlines()
    assert "reconnected: session resumed" in said, said
    assert [ln for ln in said if ln.startswith(f"game {matched.room}: ")], said


@pytest.mark.timeout(90)
async def test_a_guest_bot_declines_rated_challenges(arena):
    """A bot without a token cannot play rated games (the server refuses its accept):
    it declines them, ``rated``, and the challenger asks no more."""
    await arena.start()
    host = Runner(arena.url, "host", accept_challenges=True, games=1)
    hosting = asyncio.create_task(host.run())
    try:
        await host.until_said("waiting for challenges", 1)
        rival = Runner(
            arena.url, "rival", token="rival-token-0123456789ab", rated=True,
            challenge=["host", "collapsi"], games=1,
        )  # fmt: skip
        assert await asyncio.wait_for(rival.run(), 30) == 1
    finally:
        hosting.cancel()
        await asyncio.gather(hosting, return_exceptions=True)
    assert rival.said()[-1] == "stopped: host plays no rated games: not challenging host again"
    told = "challenge from rival: collapsi/base/standard, clock none, rated, declined (rated)"
    assert told in host.said(), host.said()


def slow_seating(node: Any, seconds: float) -> None:
    """Seat a challenge's game ``seconds`` late, as a loaded node or one on Redis may:
    the accept's ack then comes well before the game's ``matched``."""
    seat = node.matchmaker._seat_matched

    async def later(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("challenge") is not None:
            await asyncio.sleep(seconds)
        return await seat(*args, **kwargs)

    node.matchmaker._seat_matched = later


@pytest.mark.timeout(90)
async def test_accepting_a_challenge_leaves_the_quick_match_queue(arena):
    """``--quick-match`` with ``--accept-challenges`` at ``--concurrency 1``: from the
    accept until its game is seated, and while it is on, the bot is out of the queue and
    takes no other challenge (before, a pairing came too, or a second challenge was
    accepted: two games at once)."""
    node = await arena.start()
    slow_seating(node, 0.3)
    host = Runner(arena.url, "host", quick_match=["collecto"], accept_challenges=True)
    hosting = asyncio.create_task(host.run())
    ann, bob, cat = [await arena.client(n) for n in ("ann", "bob", "cat")]
    try:
        await host.until_said("quick match: looking", 1)
        await ann.challenge("host", "collapsi")  # (ann never moves: the game lasts)
        await cat.challenge("host", "collapsi")  # (at once: while the first is seated)
        await ann.next(type="matched", timeout=30)
        ended = await cat.next(type="challenge_ended", timeout=30)
        assert ended.decline_reason == "later", ended
        queued = await bob.quick_match("collecto", rated=False)
        assert queued.waiting == 1, queued  # bob alone: the host left the queue
    finally:
        hosting.cancel()
        await asyncio.gather(hosting, return_exceptions=True)
    said = host.said()
    assert len([ln for ln in said if ", accepted" in ln]) == 1, said
    assert len([ln for ln in said if ln.startswith("quick match: looking")]) == 1, said


@pytest.mark.timeout(90)
async def test_an_accept_the_server_refuses_is_declined(arena):
    """``--concurrency 2`` on a server that lets a bot play one game at once: the second
    challenge's accept is refused (too_many_rooms), and the bot declines it, ``later``
    (before, it only said so, and the challenger waited for an answer forever)."""
    await arena.start(bot_max_games=1)
    host = Runner(arena.url, "host", accept_challenges=True, concurrency=2)
    hosting = asyncio.create_task(host.run())
    ann, bob = await arena.client("ann"), await arena.client("bob")
    try:
        await host.until_said("waiting for challenges", 1)
        await ann.challenge("host", "collapsi")  # (ann never moves: the game lasts)
        await ann.next(type="matched", timeout=30)
        await bob.challenge("host", "collapsi")
        ended = await bob.next(type="challenge_ended", timeout=30)
        assert (ended.reason, ended.decline_reason) == ("declined", "later"), ended
    finally:
        hosting.cancel()
        await asyncio.gather(hosting, return_exceptions=True)


@pytest.mark.timeout(60)
async def test_a_challenge_left_unanswered_is_taken_back_and_asked_again(arena, monkeypatch):
    """An answer can be lost (the server tells connected sessions only): after
    ``ANSWER_WAIT_S`` the challenger cancels its challenge and sends another."""
    monkeypatch.setattr(challenges, "ANSWER_WAIT_S", 0.5)
    await arena.start()
    host = await arena.client("host", bot=True)  # (it never answers)
    cfg = BotConfig(url=arena.url, name="challenger", level="random", challenge=["host"])
    out = io.StringIO()
    challenger = BotRunner(cfg.check(), lambda strike, log: LevelBrain("random", 1), out)
    asking = asyncio.create_task(challenger.run())
    try:
        first = await host.next(type="challenged", timeout=30)
        ended = await host.next(type="challenge_ended", timeout=30)
        assert (ended.challenge, ended.reason) == (first.challenge, "canceled"), ended
        again = await host.next(type="challenged", timeout=30)
        assert again.challenge != first.challenge
    finally:
        asking.cancel()
        await asyncio.gather(asking, return_exceptions=True)
    assert "challenge to host: no answer in 0.5 s, asking again" in out.getvalue(), out


@pytest.mark.timeout(120)
async def test_a_game_the_engine_refused_is_declined_when_challenged_again(arena):
    """An engine that refuses Collecto (an error after newgame): the first Collecto
    challenge is accepted and resigned, as ENGINE_PROTOCOL.md says; the next is declined
    (``game``), and the challenger asks no more (before: accepted and resigned again)."""
    await arena.start()
    engine = " ".join(shlex.quote(part) for part in bad("collapsi-only"))
    cfg = BotConfig(url=arena.url, name="host", engine=engine, accept_challenges=True)

    def brain(strike: Any, log: Any) -> EngineBrain:
        return EngineBrain(engine, {}, strike, log, 30.0)

    host = BotRunner(cfg.check(), brain, io.StringIO())
    hosting = asyncio.create_task(host.run())
    rival = Runner(arena.url, "rival", challenge=["host", "collecto"], games=3)
    try:
        assert await asyncio.wait_for(rival.run(), 60) == 1
    finally:
        hosting.cancel()
        await asyncio.gather(hosting, return_exceptions=True)
    said = rival.said()
    assert said[-1] == "stopped: host does not play collecto: not challenging host again", said
    assert len([ln for ln in said if ln.startswith("game ")]) == 1, said


@pytest.mark.timeout(90)
async def test_a_session_taken_over_by_the_login_keeps_its_games(arena):
    """The resume fails (its token lost) and the login with the name's token takes the
    dropped session over, rooms and all (PROTOCOL.md): the bot goes on with its game,
    as after a resume. Before, it closed its game tasks as if the session were gone."""
    await arena.start()
    host = await arena.client("host", bot=True)
    may_resume = asyncio.Event()  # (once the token is lost)
    challenger = held_challenger(arena.url, may_resume, token="challenger-token-0123", games=1)
    asking = asyncio.create_task(challenger.run())
    try:
        got = await host.next(type="challenged", timeout=30)
        await host.accept_challenge(got.challenge)
        matched = await host.next(type="matched", timeout=30)
        challenger.client.abort()
        challenger.client.resume_token = secrets.token_urlsafe(24)  # (unknown to the server)
        may_resume.set()
        await play_out(host, matched)
        assert await asyncio.wait_for(asking, 30) == 0
    finally:
        asking.cancel()
        await asyncio.gather(asking, return_exceptions=True)
    said = challenger.out.getvalue().splitlines()
    assert "reconnected: session taken over" in said, said
    assert [ln for ln in said if ln.startswith(f"game {matched.room}: ")], said
    assert "without a result" not in "".join(said), said


@pytest.mark.timeout(90)
async def test_a_host_accepts_only_the_games_clocks_and_modes_it_is_told(arena):
    """``--accept-games``, ``--accept-clocks``, ``--accept-modes``: anything else is
    declined with its reason, and what they allow is accepted."""
    await arena.start()
    host = Runner(
        arena.url, "host", token="host-token-0123456789ab", accept_challenges=True,
        accept_games=["collapsi/shifting"], accept_clocks=["1+0"], accept_modes=["rated"],
    )  # fmt: skip
    hosting = asyncio.create_task(host.run())
    ann = await arena.client("ann", token="ann-token-0123456789abcdef")
    one_minute = m.Fischer(base_ms=60_000)
    try:
        await host.until_said("waiting for challenges", 1)
        for why, game, variant, clock, rated in [
            ("game", "collecto", None, one_minute, True),
            ("game", "collapsi", "base", one_minute, True),
            ("time_control", "collapsi", "shifting", m.Fischer(base_ms=120_000), True),
            ("casual", "collapsi", "shifting", one_minute, False),
        ]:
            sent = await ann.challenge(
                "host", game, variant=variant, time_control=clock, rated=rated
            )
            ended = await ann.next(type="challenge_ended", timeout=30)
            assert (ended.challenge, ended.decline_reason) == (sent.challenge, why), ended
        await ann.challenge("host", "collapsi", variant="shifting", time_control=one_minute,
                            rated=True)  # fmt: skip
        await ann.next(type="matched", timeout=30)
    finally:
        hosting.cancel()
        await asyncio.gather(hosting, return_exceptions=True)
