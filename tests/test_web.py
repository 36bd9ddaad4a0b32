"""The web page, in a real browser (Debian's chromium driven by Playwright) against a real
server on loopback: watching from the lobby, playing by clicking, replaying a record,
names and chat shown as text. The board is read back from the page's SVG (each cell
and pawn says what it shows) and compared with the server's view after every move.

Set ARENA_SCREENSHOTS=DIR to keep the screenshots (the README's pictures come from it).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clients.web import HEADLESS_CHROMIUM_ARGS, STATIC
from engine.base import GameRecord, replay
from protocol import messages as m

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
try:
    from playwright.async_api import Browser, Page, async_playwright
except ImportError:  # pragma: no cover - the dev install has it
    async_playwright = None  # type: ignore[assignment]

needs_browser = pytest.mark.skipif(
    CHROMIUM is None or async_playwright is None,
    reason="browser tests need Debian's chromium (.ci/run installs it: apt-get install chromium) "
    "and the playwright package (in the dev extras)",
)


READ_BOARD = """() => {
  const svg = document.querySelector('#board svg');
  if (!svg) return null;
  return {
    seq: Number(document.querySelector('#board').dataset.seq || -1),
    cells: [...svg.querySelectorAll('g.cell')].map(g => [Number(g.dataset.cell), g.dataset.card,
                                                         g.dataset.collapsed === '1']),
    pawns: [...svg.querySelectorAll('circle.pawn')].map(c => [Number(c.dataset.seat),
                                                              Number(c.dataset.cell)]),
    balls: [...svg.querySelectorAll('g.ball-cell')].map(g => Number(g.dataset.ball)),
  };
}"""


def screenshot_dir(tmp_path: Path) -> Path:
    out = Path(os.environ.get("ARENA_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    assert async_playwright is not None and CHROMIUM is not None
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, args=HEADLESS_CHROMIUM_ARGS)
        try:
            yield b
        finally:
            await b.close()


async def open_page(browser: Browser, url: str, width: int = 1100) -> Page:
    page = await browser.new_page(viewport={"width": width, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors  # type: ignore[attr-defined]
    await page.goto(url)
    await page.wait_for_selector("#status[data-status=online]", timeout=15_000)
    return page


def board_matches(dom: dict[str, Any] | None, view: dict[str, Any]) -> bool:
    """The board read from the page shows exactly the server's view."""
    if dom is None:
        return False
    if view["game"] == "collecto":
        return dom["balls"] == [int(c) for c in view["board"]]
    cells = [[i, card, i in set(view["collapsed"])] for i, card in enumerate(view["cards"])]
    pawns = sorted([seat, cell] for seat, cell in enumerate(view["pawns"]) if cell is not None)
    return dom["cells"] == cells and sorted(dom["pawns"]) == pawns


async def wait_board(page: Page, view: dict[str, Any], timeout: float = 10.0) -> None:
    """Wait until the page's board shows ``view`` (read back from the SVG)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    dom = None
    while loop.time() < deadline:
        dom = await page.evaluate(READ_BOARD)
        if board_matches(dom, view):
            return
        await page.wait_for_timeout(20)
    raise AssertionError(f"the page's board never showed {view.get('position')}: {dom}")


async def bot_plays(client: Any, room: str, name: str, seed: int) -> None:
    """A random player: moves whenever its seat is to move, until the game is over."""
    rng = random.Random(seed)
    seat = None
    while True:
        ev = await client.next(("game_started", "move_made", "game_over"), room=room, timeout=30)
        if ev.type == "game_over":
            return
        if ev.type == "game_started":
            seat = next(s.seat for s in ev.seats if s.player and s.player.name == name)
        if ev.to_move == seat and ev.legal_moves:
            await client.move(room, rng.choice(ev.legal_moves))


async def click_until_over(page: Page, stop_after: int | None = None) -> int:
    """Click the first legal destination on each of the page's turns until the game-over
    banner shows (or ``stop_after`` clicks); returns how many moves were clicked."""
    clicks = 0
    while stop_after is None or clicks < stop_after:
        await page.wait_for_function(
            "() => document.querySelector('#board g.cell.legal')"
            " || !document.querySelector('#banner').hidden",
            timeout=20_000,
        )
        if await page.locator("#banner:not([hidden])").count():
            break
        seq = int(await page.locator("#board").get_attribute("data-seq") or 0)
        await page.locator("#board g.cell.legal").first.click()
        clicks += 1
        await page.wait_for_function(  # the page saw its own move
            "seq => Number(document.querySelector('#board').dataset.seq) > seq",
            arg=seq,
            timeout=20_000,
        )
    return clicks


class Relay:
    """A TCP relay on loopback between the browser and the server; :meth:`cut` drops
    every connection through it at once (a network failure), new ones still pass."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.writers: set[asyncio.StreamWriter] = set()
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> Relay:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        self.cut()

    @property
    def base(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    def cut(self) -> None:
        for w in list(self.writers):
            w.transport.abort()
        self.writers.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writers |= {writer, up_writer}
        await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer))

    @staticmethod
    async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.transport.abort()


async def test_the_page_and_its_files_are_served_with_a_strict_policy(arena: Any) -> None:
    await arena.start(web_dir=str(STATIC))
    base = f"http://127.0.0.1:{arena.arena.config.port}"

    def get(path: str) -> tuple[int, dict[str, str], bytes]:
        try:
            with urllib.request.urlopen(base + path, timeout=10) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()

    for path in ("/", "/game/r-abc12", "/record/g-1-1", "/tournament/t-x"):
        status, headers, body = await asyncio.to_thread(get, path)
        assert status == 200 and b'<main id="main">' in body, path
        assert "default-src 'self'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"
    status, headers, body = await asyncio.to_thread(get, "/static/app.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert body == (STATIC / "app.js").read_bytes()
    for path in ("/static/../server/app.py", "/static/nope.js", "/game/a/b", "/etc/passwd"):
        assert (await asyncio.to_thread(get, path))[0] == 404, path


async def test_get_record_views_step_through_the_game_as_the_engine_replays_it(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann")
    bob = await arena.client("bob")
    room = (await ann.create_room("collapsi", seat=0)).room
    await bob.join(room)
    await bob.take_seat(room)
    await ann.ready(room)
    await bob.ready(room)
    await asyncio.gather(bot_plays(ann, room, "ann", 1), bot_plays(bob, room, "bob", 2))
    over = next(e for e in ann.events(room) if e.type == "game_over")
    plain = await ann.request(m.GetRecord(record=over.record))
    assert plain.views is None
    rec = await ann.request(m.GetRecord(record=over.record, views=True))
    data = rec.data.model_dump()
    assert len(rec.views) == len(data["moves"]) + 1
    assert rec.views[0]["history"] == [] and rec.views[0]["position"].endswith(" 0")
    final = replay(GameRecord.from_dict(data)).view()
    assert rec.views[-1] == final
    for i, view in enumerate(rec.views):
        assert view["history"] == data["moves"][:i]


@needs_browser
async def test_watch_a_bot_game_from_the_lobby_to_game_over(
    arena: Any, browser: Browser, tmp_path: Path
) -> None:
    await arena.start(web_dir=str(STATIC))
    base = f"http://127.0.0.1:{arena.arena.config.port}"
    ann = await arena.client("ann", bot=True)
    bob = await arena.client("bob", bot=True)
    page = await open_page(browser, base + "/")
    clock = m.Fischer(base_ms=300_000, increment_ms=0)
    room = (await ann.create_room("collapsi", seat=0, time_control=clock)).room
    link = page.locator(f"tr[data-room='{room}'] a")
    await link.wait_for(timeout=10_000)  # the lobby updates live
    await page.screenshot(path=str(screenshot_dir(tmp_path) / "web-lobby.png"))
    await link.click()
    await page.wait_for_url(f"**/game/{room}")
    await page.locator("#room-info").filter(has_text=room).wait_for()
    await bob.join(room)
    await bob.take_seat(room)
    await ann.ready(room)
    await bob.ready(room)
    started = await ann.next("game_started", room=room)
    await wait_board(page, started.view)
    rng = random.Random(7)
    seats = {0: ann, 1: bob}
    ev: Any = started
    shown = 0
    while ev.type != "game_over":
        if ev.to_move is not None:
            await seats[ev.to_move].move(room, rng.choice(ev.legal_moves))
        ev = await ann.next(("move_made", "game_over"), room=room)
        if ev.type == "move_made":
            await wait_board(page, ev.view)  # after every move
            shown += 1
            if shown == 3:
                await page.screenshot(path=str(screenshot_dir(tmp_path) / "web-collapsi.png"))
    assert shown >= 2
    banner = page.locator("#banner")
    await banner.filter(has_text="Game over").wait_for(timeout=10_000)
    winner = ev.result.winner
    assert ["ann", "bob"][winner] in await banner.inner_text()
    assert await page.locator("#spectators").inner_text() == "1 watching"
    viewer = await arena.client()
    await viewer.watch(room)  # the count is live (the spectators notice)
    await page.locator("#spectators").filter(has_text="2 watching").wait_for(timeout=10_000)
    assert page.errors == []  # type: ignore[attr-defined]


@needs_browser
async def test_play_a_game_by_clicking_then_replay_its_record(arena: Any, browser: Browser) -> None:
    await arena.start(web_dir=str(STATIC))
    base = f"http://127.0.0.1:{arena.arena.config.port}"
    page = await open_page(browser, base + "/")
    await page.fill("#login-name", "carol")
    await page.click("#login-submit")
    await page.locator("#me").filter(has_text="carol").wait_for()
    await page.select_option("#create-game", "collapsi")
    await page.click("#create-submit")
    await page.wait_for_url("**/game/*")
    room = page.url.rsplit("/", 1)[1]
    await page.locator("#room-info").filter(has_text=room).wait_for()
    # the opponent: `arena bot` as a real process, sitting down in the open room
    bot = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clients.cli",
        "bot",
        "--url",
        arena.url,
        "--name",
        "dave",
        "--level",
        "random",
        "--join",
        "collapsi",
        "--games",
        "1",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        await page.locator("#players").filter(has_text="dave").wait_for(timeout=30_000)
        await page.click("#ready")
        clicks = await click_until_over(page)
        out, _ = await asyncio.wait_for(bot.communicate(), 60)
        assert bot.returncode == 0, out
    finally:
        if bot.returncode is None:
            bot.kill()
            await bot.wait()
    assert clicks >= 1
    href = await page.locator("a[href^='/record/']").get_attribute("href")
    assert href is not None
    record = href.rsplit("/", 1)[1]
    reader = await arena.client()
    rec = await reader.request(m.GetRecord(record=record, views=True))
    assert rec.data.result is not None and rec.data.result.reason == "no_moves"
    # the record: step through it and compare every ply with the server's views
    await page.click("text=replay this game")
    await page.wait_for_url(f"**/record/{record}")
    assert rec.data.players == ["carol", "dave"]
    await page.locator("#ply").filter(has_text="move 0 of").wait_for()
    await wait_board(page, rec.views[0])
    for view in rec.views[1:]:
        await page.click("#next")
        await wait_board(page, view)
    last = len(rec.views) - 1
    assert await page.locator("#ply").inner_text() == f"move {last} of {last}"
    assert page.errors == []  # type: ignore[attr-defined]


@needs_browser
async def test_names_and_chat_with_markup_show_as_text(arena: Any, browser: Browser) -> None:
    await arena.start(web_dir=str(STATIC))
    base = f"http://127.0.0.1:{arena.arena.config.port}"
    evil = "<img src=x onerror=alert(1)>"
    mallory = await arena.client(evil)
    room = (await mallory.create_room("collapsi", seat=0)).room
    page = await open_page(browser, base + "/")
    dialogs: list[str] = []
    page.on("dialog", lambda d: dialogs.append(d.message))
    row = page.locator(f"tr[data-room='{room}']")
    await row.filter(has_text=evil).wait_for(timeout=10_000)
    await page.goto(f"{base}/game/{room}")
    await page.wait_for_selector("#status[data-status=online]")
    await page.locator("#players").filter(has_text=evil).wait_for()
    await mallory.chat(room, "<script>alert(2)</script><b>bold</b>")
    await page.locator("#chat").filter(has_text="<script>alert(2)</script><b>bold</b>").wait_for()
    assert await page.locator("main img, main script, #chat b:not(:first-child)").count() == 0
    assert await page.locator("#chat li b").inner_text() == evil  # the speaker's name, as text
    assert dialogs == []


@needs_browser
async def test_a_collecto_game_and_a_phone_sized_screen(
    arena: Any, browser: Browser, tmp_path: Path
) -> None:
    await arena.start(web_dir=str(STATIC))
    base = f"http://127.0.0.1:{arena.arena.config.port}"
    ann = await arena.client("ann", bot=True)
    bob = await arena.client("bob", bot=True)
    room = (await ann.create_room("collecto", seat=0)).room
    await bob.join(room)
    await bob.take_seat(room)
    page = await open_page(browser, f"{base}/game/{room}", width=390)
    await ann.ready(room)
    await bob.ready(room)
    started = await ann.next("game_started", room=room)
    await wait_board(page, started.view)
    first = started.legal_moves[0]
    await ann.move(room, first)
    ev = await ann.next("move_made", room=room)
    await wait_board(page, ev.view)
    pushes = await page.locator("#board g.push").count()
    assert pushes == 28
    fits = "() => document.documentElement.scrollWidth <= window.innerWidth + 1"
    assert await page.evaluate(fits)  # no sideways scrolling on a phone
    await page.screenshot(path=str(screenshot_dir(tmp_path) / "web-collecto-phone.png"))
    page2 = await open_page(browser, f"{base}/game/{room}")
    await wait_board(page2, ev.view)
    await page2.screenshot(path=str(screenshot_dir(tmp_path) / "web-collecto.png"))


@needs_browser
async def test_a_dropped_connection_reconnects_resumes_and_the_game_goes_on(
    arena: Any, browser: Browser
) -> None:
    await arena.start(web_dir=str(STATIC))
    async with Relay(arena.arena.config.port) as relay:
        page = await open_page(browser, relay.base + "/")
        await page.fill("#login-name", "erin")
        await page.fill("#login-token", "a-strong-token-for-erin-0123456789")
        await page.click("#login-submit")
        await page.locator("#me").filter(has_text="erin").wait_for()
        await page.click("#create-submit")
        await page.wait_for_url("**/game/*")
        room = page.url.rsplit("/", 1)[1]
        fred = await arena.client("fred", bot=True)
        await fred.join(room)
        await fred.take_seat(room)
        await fred.ready(room)
        bot = asyncio.create_task(bot_plays(fred, room, "fred", 5))
        await page.click("#ready")
        try:
            assert await click_until_over(page, stop_after=1) == 1
            relay.cut()  # the network drops; fred moves meanwhile
            await page.locator("#status[data-status=reconnecting]").wait_for(timeout=10_000)
            await page.locator("#status[data-status=online]").wait_for(timeout=15_000)
            dropped = [e.type for e in fred.events(room)]
            assert "player_disconnected" in dropped
            await page.locator("#players").filter(has_text="fred").wait_for()
            clicks = await click_until_over(page)  # the same seat plays on to the end
            await asyncio.wait_for(bot, 20)
        finally:
            bot.cancel()
    over = next(e for e in fred.events(room) if e.type == "game_over")
    assert over.result.reason == "no_moves" and clicks >= 1
    assert "player_reconnected" in [e.type for e in fred.events(room)]
    assert page.errors == []  # type: ignore[attr-defined]


@needs_browser
async def test_a_page_from_another_origin_cannot_open_the_arena_websocket(
    arena: Any, browser: Browser
) -> None:
    """A page elsewhere (here: http://localhost:OTHER) that opens the arena's websocket is
    refused at the handshake, so it cannot drive a signed-in user's session; the arena's
    own page, on the same host, connects (the other tests)."""
    await arena.start(web_dir=str(STATIC))
    port = arena.arena.config.port
    html = (
        "<!doctype html><title>waiting</title><script>"
        f"const ws = new WebSocket('ws://127.0.0.1:{port}/');"
        "ws.onopen = () => { document.title = 'opened'; };"
        "ws.onclose = () => { if (document.title !== 'opened') document.title = 'refused'; };"
        "</script>"
    ).encode()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(html)}\r\n"
        writer.write(head.encode() + b"Connection: close\r\n\r\n" + html)
        await writer.drain()
        writer.close()

    elsewhere = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        other = elsewhere.sockets[0].getsockname()[1]
        page = await browser.new_page()
        await page.goto(f"http://localhost:{other}/")
        await page.wait_for_function("() => document.title !== 'waiting'", timeout=10_000)
        assert await page.title() == "refused"
    finally:
        elsewhere.close()
