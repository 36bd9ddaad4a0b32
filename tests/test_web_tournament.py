"""The web page's tournament view in a real browser (Debian's chromium, Playwright)
against a real server on loopback: a round robin of three players, entered and started
by the protocol's operator requests, watched on `/tournament/ID` from its entries to its
end. The standings are read back from the page and compared with the server's, the live
games link to their rooms while they run and to their records once over; a player who
enters from the page is taken to each of its games."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

from conftest import strong
from test_web import browser, needs_browser, open_page, screenshot_dir  # noqa: F401 - fixture

from clients.web import STATIC
from protocol import messages as m

ADMIN = "web-tournament-admin-0123456789"

READ_STANDINGS = """() => [...document.querySelectorAll('#standings tr[data-name]')].map(tr =>
  [tr.dataset.name, Number(tr.querySelector('td.points').textContent)])"""


async def play_tournament_games(client: Any, name: str, seed: int) -> None:
    """A player of the tournament: plays each game it is paired in (a random move after
    a short pause, so the games can be seen live), then leaves its room."""
    rng = random.Random(seed)
    while True:
        matched = await client.next("matched", timeout=120)
        room, seat = matched.room, None
        while True:
            kinds = ("game_started", "move_made", "game_over")
            ev = await client.next(kinds, room=room, timeout=60)
            if ev.type == "game_over":
                break
            if ev.type == "game_started":
                seat = next(s.seat for s in ev.seats if s.player and s.player.name == name)
            if ev.to_move == seat and ev.legal_moves:
                await asyncio.sleep(0.08)
                await client.move(room, rng.choice(ev.legal_moves))
        await client.leave(room)


@needs_browser
async def test_a_round_robin_watched_on_its_page_from_entries_to_the_end(
    arena: Any,
    browser: Any,  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    await arena.start(web_dir=str(STATIC), admin_token=ADMIN)
    base = f"http://127.0.0.1:{arena.arena.config.port}"
    operator = await arena.client()
    created = await operator.request(
        m.CreateTournament(
            admin_token=ADMIN, name="Friday cup", game="collapsi", format="round_robin"
        )
    )
    tid = created.tournament.tournament
    page = await open_page(browser, f"{base}/tournament/{tid}")
    await page.locator("#tournament-head").filter(has_text="Friday cup").wait_for()
    names = ["ivy", "jon", "kim"]
    players = [await arena.client(n, token=strong(f"tok-{n}")) for n in names]
    for c in players:
        await c.request(m.JoinTournament(tournament=tid))
    for n in names:  # each entry shows up live
        await page.locator(f"#standings tr[data-name='{n}']").wait_for()
    tasks = [
        asyncio.create_task(play_tournament_games(c, n, i))
        for i, (c, n) in enumerate(zip(players, names, strict=True))
    ]
    try:
        await operator.request(m.StartTournament(admin_token=ADMIN, tournament=tid))
        live = page.locator("#tournament-games tr[data-status=playing] a[href^='/game/']")
        await live.first.wait_for(timeout=30_000)  # a game in progress links to its room
        href = await live.first.get_attribute("href")
        assert href is not None and href.removeprefix("/game/") in arena.arena.rooms
        await page.locator("#tournament-head[data-status=finished]").wait_for(timeout=90_000)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    final = await operator.request(m.GetStandings(tournament=tid))
    assert final.status == "finished" and len(final.games) == 3
    shown = await page.evaluate(READ_STANDINGS)
    assert shown == [[r.name, r.points] for r in final.rows]
    assert sum(r.points for r in final.rows) == 3  # three games, each worth a point
    replays = page.locator("#tournament-games a[href^='/record/']")
    assert await replays.count() == 3
    await page.screenshot(path=str(screenshot_dir(tmp_path) / "web-tournament.png"))
    assert page.errors == []  # type: ignore[attr-defined]


@needs_browser
async def test_a_player_enters_from_the_page_and_is_taken_to_its_game(
    arena: Any,
    browser: Any,  # noqa: F811 - the fixture
) -> None:
    await arena.start(web_dir=str(STATIC), admin_token=ADMIN)
    base = f"http://127.0.0.1:{arena.arena.config.port}"
    operator = await arena.client()
    created = await operator.request(
        m.CreateTournament(admin_token=ADMIN, name="Open", game="collapsi", format="round_robin")
    )
    tid = created.tournament.tournament
    page = await open_page(browser, f"{base}/tournament/{tid}")
    await page.locator("#tournament-actions").filter(has_text="sign in").wait_for()
    await page.fill("#login-name", "lea")
    await page.fill("#login-token", strong("tok-lea") or "")
    await page.click("#login-submit")
    await page.locator("#me").filter(has_text="lea").wait_for()
    await page.click("#tournament-join")  # (the page is drawn again for the player)
    await page.locator("#standings tr[data-name='lea']").wait_for()
    max_ = await arena.client("max", token=strong("tok-max"))
    await max_.request(m.JoinTournament(tournament=tid))
    await operator.request(m.StartTournament(admin_token=ADMIN, tournament=tid))
    matched = await max_.next("matched", timeout=30)
    await page.wait_for_url(f"**/game/{matched.room}", timeout=15_000)
    await page.locator("#players").filter(has_text="max").wait_for()
    assert page.errors == []  # type: ignore[attr-defined]
