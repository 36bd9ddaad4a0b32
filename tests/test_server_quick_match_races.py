"""Quick match against a player who leaves while the pair is seated: no traceback, no
unsolicited error, the one still here stays queued (or plays). Real server and
clients on loopback; several tries, each racing a logout with the pairing."""

from __future__ import annotations

import asyncio
from typing import Any

from structlog.testing import capture_logs

from protocol import messages as m

TRIES = 5


async def test_a_player_leaving_while_matched_hurts_nobody(arena: Any) -> None:
    with capture_logs() as logs:
        a = await arena.start()
        for i in range(TRIES):
            ann = await arena.client(f"ann{i}")
            bob = await arena.client(f"bob{i}")
            await ann.quick_match("collapsi", rated=False)
            await bob.send(m.QuickMatch(game="collapsi", rated=False))
            await bob.send(m.Logout())  # at once: the pairing races it
            await asyncio.wait_for(bob.closed.wait(), 10)
            # ann is either seated in a game with bob (who then left it) or still queued
            for _ in range(100):
                s = a.sessions[ann.session]
                if s.queue is None or await a.presence.queues.waiting(s.queue):
                    break
                await asyncio.sleep(0.01)
            assert not [msg for msg in ann.received if msg.type == "error"], i
            await ann.cancel_quick_match()
    bad = [e for e in logs if e["log_level"] in ("error", "critical") or "exc_info" in e]
    assert not bad, bad[:3]
