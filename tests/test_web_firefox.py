"""The web page in Firefox (Debian's firefox-esr over WebDriver BiDi: tests/firefox_bidi.py)
against a real server on loopback: a game watched to its end with the board read back
from the page after every move, on a desktop and a phone-sized screen; a game played by
clicking the page's cells against `arena bot` as a real process."""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from firefox_bidi import FIREFOX, Firefox
from test_web import READ_BOARD, board_matches, screenshot_dir

from clients.web import STATIC
from protocol import messages as m

pytestmark = pytest.mark.skipif(
    FIREFOX is None,
    reason="Firefox tests need Debian's firefox-esr (.ci/run installs it: apt-get install "
    "firefox-esr)",
)

ONLINE = "document.querySelector('#status')?.dataset.status === 'online'"


async def wait_board(ff: Firefox, view: dict[str, Any], timeout: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    dom = None
    while loop.time() < deadline:
        dom = await ff.eval(f"({READ_BOARD})()")
        if board_matches(dom, view):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"Firefox's board never showed {view.get('position')}: {dom}")


async def test_firefox_watches_a_game_to_its_end_on_a_desktop_and_a_phone(
    arena: Any, tmp_path: Path
) -> None:
    await arena.start(web_dir=str(STATIC))
    base = f"http://127.0.0.1:{arena.arena.config.port}"
    ann, bob = await arena.client("ann", bot=True), await arena.client("bob", bot=True)
    room = (await ann.create_room("collapsi", seat=0)).room
    await bob.join(room)
    await bob.take_seat(room)
    async with Firefox() as ff:
        await ff.goto(f"{base}/game/{room}")
        await ff.wait_for(ONLINE)
        await ann.ready(room)
        await bob.ready(room)
        ev = await ann.next("game_started", room=room)
        await wait_board(ff, ev.view)
        rng = random.Random(7)
        players = {0: ann, 1: bob}
        moves = 0
        while ev.type != "game_over" and ev.to_move is not None:
            await players[ev.to_move].move(room, rng.choice(ev.legal_moves))
            ev = await ann.next(("move_made",), room=room)
            await wait_board(ff, ev.view)
            moves += 1
            if moves == 2:  # a phone-sized screen, mid-game: the same board, no sideways scroll
                await ff.viewport(390, 844)
                await wait_board(ff, ev.view)
                fits = "document.documentElement.scrollWidth <= window.innerWidth + 1"
                assert await ff.eval(fits)
                await ff.screenshot(screenshot_dir(tmp_path) / "web-collapsi-firefox-phone.png")
                await ff.viewport(1100, 800)
        await ff.wait_for("!document.querySelector('#banner').hidden")
        banner = await ff.eval("document.querySelector('#banner').textContent")
        assert "ann" in banner or "bob" in banner, banner
        assert moves >= 2


async def test_firefox_plays_a_game_by_clicking_against_arena_bot(arena: Any) -> None:
    await arena.start(web_dir=str(STATIC))
    base = f"http://127.0.0.1:{arena.arena.config.port}"
    async with Firefox() as ff:
        await ff.goto(base + "/")
        await ff.wait_for(ONLINE)
        await ff.eval(
            "(() => { document.querySelector('#login-name').value = 'erin';"
            " document.querySelector('#login-submit').click(); return true; })()"
        )
        await ff.wait_for("document.querySelector('#me')?.textContent.includes('erin')")
        await ff.eval("(() => { document.querySelector('#create-submit').click(); return 1; })()")
        room = await ff.wait_for(
            "location.pathname.startsWith('/game/') && location.pathname.split('/')[2]"
        )
        bot = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "clients.cli", "bot", "--url", arena.url, "--name", "frank",
            "--level", "random", "--join", "collapsi", "--games", "1",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        try:
            await ff.wait_for("document.querySelector('#players')?.textContent.includes('frank')")
            await ff.eval("(() => { document.querySelector('#ready').click(); return 1; })()")
            clicks = 0
            while True:
                state = await ff.wait_for(
                    "document.querySelector('#board g.cell.legal') ? 'turn'"
                    " : (!document.querySelector('#banner').hidden ? 'over' : '')",
                    timeout=30,
                )
                if state == "over":
                    break
                seq = await ff.eval("Number(document.querySelector('#board').dataset.seq)")
                await ff.eval(
                    "(() => { document.querySelector('#board g.cell.legal')"
                    ".dispatchEvent(new MouseEvent('click', {bubbles: true})); return 1; })()"
                )
                clicks += 1
                await ff.wait_for(f"Number(document.querySelector('#board').dataset.seq) > {seq}")
            out, _ = await asyncio.wait_for(bot.communicate(), 60)
            assert bot.returncode == 0, out
        finally:
            if bot.returncode is None:
                bot.kill()
                await bot.wait()
        href = await ff.wait_for(
            "document.querySelector(\"a[href^='/record/']\")?.getAttribute('href')"
        )
    assert clicks >= 1
    reader = await arena.client()
    rec = await reader.request(m.GetRecord(record=href.rsplit("/", 1)[1]))
    assert rec.data.players == ["erin", "frank"]
    assert rec.data.result is not None and rec.data.result.reason == "no_moves"
    assert room
