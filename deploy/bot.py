"""A casual Collapsi bot for ``docker-compose.yml``: it keeps a public room open on
its node and plays whoever sits down, from any node (random legal moves).

    python deploy/bot.py --url ws://node1:8765 --name house-bot

It retries the connection while the server starts, and prints one JSON line per
room it opens and per game it finishes. (A stand-in until a real bot runner
exists; it uses only the client library.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys

from clients.client import TURN_EVENTS, Client, ConnectionLost


async def connect(url: str, name: str, wait_s: float) -> Client:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while True:
        client = Client(url)
        try:
            await client.connect()
            await client.login(name, bot=True)
            return client
        except (OSError, ConnectionLost, TimeoutError):
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.5)


async def play_one(client: Client, rng: random.Random) -> dict[str, object]:
    """Open a room, wait for an opponent, play the game to its end, leave."""
    state = await client.create_room("collapsi", seat=0)
    room = state.room
    print(json.dumps({"event": "bot_room", "room": room}), flush=True)
    await client.ready(room)
    while True:
        ev = await client.next(type=(*TURN_EVENTS, "game_over"), room=room, timeout=None)
        if ev.type == "game_over":
            await client.leave(room)
            # the finishing order (ruling 3): winner first, a stuck player last
            order = list(ev.result.order)
            return {"event": "bot_game_over", "room": room, "record": ev.record, "order": order}
        if ev.to_move == 0 and ev.legal_moves:
            await client.move(room, rng.choice(ev.legal_moves))


async def main_async(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    client = await connect(args.url, args.name, args.connect_wait)
    try:
        played = 0
        while args.games == 0 or played < args.games:
            print(json.dumps(await play_one(client, rng)), flush=True)
            played += 1
    finally:
        await client.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="ws://127.0.0.1:8765", help="the node to connect to")
    parser.add_argument("--name", default="house-bot", help="display name (marked as a bot)")
    parser.add_argument("--games", type=int, default=0, help="stop after so many games (0: never)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the random moves")
    parser.add_argument("--connect-wait", type=float, default=60.0, help="seconds to keep retrying")
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
