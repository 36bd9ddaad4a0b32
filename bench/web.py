"""The web page in a real browser: how fast a game page first shows its board, and
whether it keeps up with two instant bots.

A server runs in this process on loopback; Debian's chromium, driven by Playwright,
opens ``/game/ROOM`` of a game in progress. First render: milliseconds from the start of
the navigation to the first board on screen (the page's ``performance.now()``, which
counts from the navigation), over fresh pages. Keeping up: two bots that answer at once
play whole games in one room (rematches) while the page watches; at the end the events
the page drew are compared with the events the server sent (none may be missing), and
the page's lag behind the last event is measured.

    .venv/bin/python bench/web.py [--renders 15] [--games 10] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clients.client import Client  # noqa: E402
from clients.web import HEADLESS_CHROMIUM_ARGS, STATIC  # noqa: E402
from server.app import Config, running  # noqa: E402
from server.logs import configure  # noqa: E402


async def bot_game(ann: Client, bob: Client, room: str, rng: random.Random) -> None:
    """One game at full speed: whoever is to move answers at once with a random move."""
    clients = {0: ann, 1: bob}
    ev = await ann.next("game_started", room=room, timeout=30)
    seat_of = {s.player.name: s.seat for s in ev.seats if s.player}
    by_seat = {seat_of["ann"]: clients[0], seat_of["bob"]: clients[1]}
    while ev.type != "game_over":
        if ev.to_move is not None:
            await by_seat[ev.to_move].move(room, rng.choice(ev.legal_moves))
        ev = await ann.next(("move_made", "game_over"), room=room, timeout=30)


async def run(renders: int, games: int) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("bench/web.py needs Debian's chromium (apt-get install chromium)")
    async with running(Config(port=0, web_dir=str(STATIC), rate_burst=10_000)) as arena:
        url = f"ws://127.0.0.1:{arena.config.port}"
        base = f"http://127.0.0.1:{arena.config.port}"
        ann, bob = Client(url), Client(url)
        await ann.connect()
        await bob.connect()
        await ann.login("ann", bot=True)
        await bob.login("bob", bot=True)
        room = (await ann.create_room("collapsi", seat=0)).room
        await bob.join(room)
        await bob.take_seat(room)
        await ann.ready(room)
        await bob.ready(room)
        rng = random.Random(1)
        first = await ann.next("game_started", room=room)
        await ann.move(room, rng.choice(first.legal_moves))  # a game in progress
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=chromium, args=HEADLESS_CHROMIUM_ARGS)
            firsts = []
            for _ in range(renders):
                page = await browser.new_page()
                await page.goto(f"{base}/game/{room}")
                await page.wait_for_function("() => window.arenaStats.firstBoardAt !== null")
                firsts.append(await page.evaluate("() => window.arenaStats.firstBoardAt"))
                await page.close()
            # keeping up: the page watches while the bots finish this game and play more
            page = await browser.new_page()
            await page.goto(f"{base}/game/{room}")
            await page.wait_for_function("() => window.arenaStats.firstBoardAt !== null")
            drawn0 = await page.evaluate("() => window.arenaStats.eventsDrawn")
            seq0 = int(await page.locator("#board").get_attribute("data-seq") or 0)
            t0 = time.perf_counter()
            await bot_game_rest(ann, bob, room, rng)
            for _ in range(games - 1):
                await ann.offer_rematch(room)
                await bob.accept_rematch(room)
                await bot_game(ann, bob, room, rng)
            played = time.perf_counter() - t0
            last_seq = max(e.seq for e in ann.events(room) if hasattr(e, "seq"))
            t1 = time.perf_counter()
            await page.wait_for_function(
                "seq => Number(document.querySelector('#board').dataset.seq) >= seq",
                arg=last_seq,
                timeout=30_000,
            )
            lag_ms = (time.perf_counter() - t1) * 1000
            drawn = await page.evaluate("() => window.arenaStats.eventsDrawn") - drawn0
            await browser.close()
        await ann.close()
        await bob.close()
    sent = last_seq - seq0
    return {
        "first_render_ms": {
            "median": statistics.median(firsts),
            "p90": sorted(firsts)[int(0.9 * (len(firsts) - 1))],
            "max": max(firsts),
            "n": len(firsts),
        },
        "keep_up": {
            "games": games,
            "events_sent": sent,
            "events_drawn": drawn,
            "dropped": sent - drawn,
            "events_per_s": sent / played,
            "lag_after_last_event_ms": lag_ms,
        },
    }


async def bot_game_rest(ann: Client, bob: Client, room: str, rng: random.Random) -> None:
    """Finish the game in progress at full speed."""
    state = await ann.watch(room)
    names = {s.seat: s.player.name for s in state.seats if s.player}
    clients = {"ann": ann, "bob": bob}
    to_move, legal, seq = state.to_move, state.legal_moves, state.seq
    while to_move is not None:
        await clients[names[to_move]].move(room, rng.choice(legal))
        ev = await ann.next(
            ("move_made", "game_over"),
            room=room,
            where=lambda e, after=seq: e.seq > after,
            timeout=30,
        )
        if ev.type == "game_over":
            return
        to_move, legal, seq = ev.to_move, ev.legal_moves, ev.seq


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--renders", type=int, default=15, help="fresh page loads timed (15)")
    ap.add_argument("--games", type=int, default=10, help="games the page watches (10)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    configure("warning")
    out = asyncio.run(run(args.renders, args.games))
    fr, ku = out["first_render_ms"], out["keep_up"]
    print("| measure | value |")
    print("| --- | ---: |")
    print(f"| first render, median (ms, {fr['n']} loads) | {fr['median']:.0f} |")
    print(f"| first render, p90 / max (ms) | {fr['p90']:.0f} / {fr['max']:.0f} |")
    print(f"| instant-bot games watched | {ku['games']} |")
    counts = f"{ku['events_sent']} / {ku['events_drawn']} / {ku['dropped']}"
    print(f"| room events sent / drawn / dropped | {counts} |")
    print(f"| events per second | {ku['events_per_s']:.0f} |")
    print(f"| page behind the last event (ms) | {ku['lag_after_last_event_ms']:.0f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
