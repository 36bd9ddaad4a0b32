"""A data dir as a busy single node leaves it: N finished games' records, M games in progress.

Real logs, cloned: a real ``arena serve`` (SQLite store) plays one rated game to its
end and starts another (Fischer clock) for a few moves, then stops. That game's room
(settings, members, event log) and its players' sessions are copied M times under new
room ids, session ids and player names, and its finished record N times under new
game ids, through :class:`server.presence.sqlite.SqlitePresence` itself. A server
started on the result restores M games by replaying M real logs through the engine.

    .venv/bin/python bench/populate.py DATA_DIR [--records 10000] [--games 500]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from arena_process import serve_command, start_node  # noqa: E402

from clients.client import Client  # noqa: E402
from protocol import messages as m  # noqa: E402
from server.presence.sqlite import SqlitePresence  # noqa: E402


async def _play_template(data_dir: Path) -> None:
    """One finished rated game and one in progress (ann vs bob), on a real server."""
    node = await start_node(serve_command("--data-dir", str(data_dir)))
    try:
        ann, bob = Client(node.url), Client(node.url)
        for c, name in ((ann, "ann"), (bob, "bob")):
            await c.connect()
            await c.login(name, token=secrets.token_urlsafe(24))
        for rated in (True, False):
            tc = m.Fischer(base_ms=600_000, increment_ms=2_000)
            state = await ann.create_room("collapsi", seat=0, rated=rated, time_control=tc)
            await bob.join(state.room)
            await bob.take_seat(state.room, 1)
            await ann.ready(state.room)
            await bob.ready(state.room)
            ev = await ann.next(type="game_started", room=state.room)
            for ply in range(1, 5):
                seat = ev.to_move
                await [ann, bob][seat].move(state.room, ev.legal_moves[0])
                ev = await ann.next(
                    type="move_made", room=state.room, where=lambda e, p=ply: e.ply == p
                )
            if rated:
                await ann.resign(state.room)
                await ann.next(type="game_over", room=state.room)
                await ann.leave(state.room)
                await bob.leave(state.room)
        ann.abort()
        bob.abort()
    finally:
        node.kill9()
        await node.proc.wait()
        if node.drainer is not None:
            await node.drainer


def _renamed(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every string that is a key of ``names`` replaced."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {names.get(k, k): _renamed(v, names) for k, v in value.items()}
    return value


async def populate(data_dir: Path, records: int, games: int) -> None:
    template = Path(tempfile.mkdtemp(prefix="arena-template-"))
    try:
        await _play_template(template)
        src = SqlitePresence(template)
        await src.start()
        try:
            (room_id,) = await src.room_ids()
            meta = await src.rooms.get(room_id)
            events = await src.rooms.read_events(room_id)
            sessions = dict(await src.live_sessions())
            (record_entry,) = await src.records.latest()
        finally:
            await src.close()
    finally:
        shutil.rmtree(template, ignore_errors=True)
    assert meta is not None
    dst = SqlitePresence(data_dir)
    await dst.start()
    try:
        writes = []
        for i in range(games):
            new_room = f"r{i:05d}{secrets.token_hex(2)}"
            names = {room_id: new_room, "ann": f"ann{i}", "bob": f"bob{i}"}
            names.update({sid: f"s{secrets.token_hex(8)}" for sid in sessions})
            writes.append(dst.rooms.put(new_room, _renamed(meta, names)))
            for sid, data in sessions.items():
                data = {**_renamed(data, names), "rooms": [new_room]}
                token = secrets.token_urlsafe(24)
                writes.append(dst.sessions.create(names[sid], token, data, 86400))
            logged = [(_renamed(ev, names), b"") for ev in events]
            writes.append(dst.rooms.append(new_room, logged, 1))
            for who in ("ann", "bob"):
                writes.append(dst.names.claim(names[who], secrets.token_hex(8)))
        for j in range(records):
            game_id = f"g{j:06d}"
            writes.append(dst.records.put(game_id, record_entry["record"]))
        await asyncio.gather(*writes)  # one loop step: a few group commits
    finally:
        await dst.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--records", type=int, default=10_000, help="finished games (10000)")
    parser.add_argument("--games", type=int, default=500, help="games in progress (500)")
    args = parser.parse_args(argv)
    asyncio.run(populate(args.data_dir, args.records, args.games))
    print(f"{args.data_dir}: {args.records} records, {args.games} games in progress")
    return 0


if __name__ == "__main__":
    sys.exit(main())
