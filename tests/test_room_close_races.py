"""Requests that race the close of their room (issue 13: a join queued before its room
closed was answered ``internal``, a ``SeqConflict``, with a traceback): each is answered
as if it came before the close (it goes through) or after it (``unknown_room``),
nothing else, and nothing is logged at error level. One node, and two nodes in this
process on a real Redis (the joiner on the other node). Several tries, each sending
the last player's ``leave_room`` and the other requests at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from structlog.testing import capture_logs

from clients.client import ArenaError
from protocol import messages as m

TRIES = 6


@pytest.mark.parametrize("nodes", [1, 2])
async def test_requests_racing_the_rooms_close_are_answered_as_documented(
    arena: Any, nodes: int, request: pytest.FixtureRequest
) -> None:
    with capture_logs() as logs:
        common: dict[str, Any] = {"rate_burst": 10**4, "rate_per_second": 10**4}
        if nodes == 2:
            common |= {
                "presence_url": request.getfixturevalue("redis_url"),
                "prefix": request.getfixturevalue("redis_prefix"),
                "lease_ttl": 30.0,
            }
        await arena.start(node="ra", **common)
        ann = await arena.client("ann")  # the room's node
        if nodes == 2:
            await arena.start(node="rb", **common)
        bob, carl = await arena.client("bob"), await arena.client("carl")
        outcomes: set[str] = set()
        for _ in range(TRIES):
            room = (await ann.create_room("collapsi", seat=0)).room
            if nodes == 2:
                await carl.watch(room)  # (a member on the other node too)
            await ann.send(m.LeaveRoom(room=room))  # its last player: it closes
            answers = await asyncio.gather(
                _answer(bob.join(room)),
                _answer(carl.chat(room, "hi")),
                _answer(carl.watch(room)),
                _answer(bob.join(room, role="spectator")),
            )
            assert set(answers) <= {"ok", "unknown_room"}, answers
            outcomes |= set(answers)
            for c in (bob, carl):  # leave whatever was joined: the next try starts clean
                if room in c.rooms:
                    await _answer(c.leave(room))
        assert "unknown_room" in outcomes  # (the race was run: some came after the close)
    bad = [e for e in logs if e["log_level"] in ("error", "critical") or "exc_info" in e]
    assert not bad, bad[:3]


async def _answer(request: Any) -> str:
    try:
        await asyncio.wait_for(request, 15)
    except ArenaError as exc:
        return f"{exc.code}: {exc.message}" if exc.code == "unavailable" else exc.code
    return "ok"
