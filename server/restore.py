"""A durable single node starting again: its previous run's sessions and rooms come back.

After a clean shutdown or a crash (``kill -9``), the store (:mod:`server.presence.sqlite`)
still holds every session, every room's settings and members and every room's log.
The node is a cluster of one whose previous incarnation died: each room is restored by
:meth:`server.cluster.Cluster.take_over`, the very code that takes over a dead node's
room in Redis mode (one restore path): its log is replayed through ``Match``, and the
clocks resume from the last logged event, so the time the server was down is charged
to nobody (server.cluster, on clocks).

Each logged-in session comes back without a connection, as if it had just dropped:
its player has the grace period to resume with the session's resume token, or to log
in again with the name's token (which takes the session over, server.app), before
losing by abandonment. Its seats show ``player_disconnected`` until then.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import structlog

from server import room_calls as rc
from server.host import Host
from server.presence.base import name_key

log = structlog.get_logger("arena.restore")


async def restore_previous_run(arena: Host) -> dict[str, Any]:
    """Bring back the sessions and rooms the store kept; what was restored."""
    from server.sessions import Session

    t0 = time.perf_counter()
    presence: Any = arena.presence
    loop = asyncio.get_running_loop()
    sessions = 0
    for sid, data in await presence.live_sessions():
        player = data.get("player")
        if not player:  # never logged in: nothing to resume (PROTOCOL.md, Sessions)
            await presence.sessions.end(sid)
            continue
        # the resume token is kept only hashed: the resume brings it (server.app)
        s = Session(sid, "", arena.node)
        s.player = player
        s.rooms = set(data.get("rooms") or [])
        arena.sessions[sid] = s
        arena.online_names[name_key(player["name"])] = sid
        s.expiry = loop.call_later(arena.config.grace, arena.session_service.expire, s)
        sessions += 1
    arena.metrics.sessions.set(len(arena.sessions))
    # they are this node's now (the previous run's node name is gone), in one commit
    await presence.sessions.update_many({sid: s.data() for sid, s in arena.sessions.items()})
    rooms = games = 0
    for room_id in await presence.room_ids():
        room = await arena.cluster.take_over(room_id, quiet=True)
        if room is None:
            continue
        rooms += 1
        games += room.playing
        for sid in list(room.members):
            s = arena.sessions.get(sid)
            if s is None or s.conn is None:
                room.tell(rc.Disconnected(sid))
    summary = {
        "sessions": sessions,
        "rooms": rooms,
        "games": games,
        "restore_ms": round((time.perf_counter() - t0) * 1000, 1),
    }
    if sessions or rooms:
        log.info("previous_run_restored", node=arena.node, **summary)
    return summary
