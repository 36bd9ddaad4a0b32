"""What an operator scrapes from ``/metrics`` of real ``arena serve`` nodes on Redis:
process figures, Redis round trips and failures, takeovers, quick-match queues,
spectators and rooms per node; and no ``_created`` lines."""

from __future__ import annotations

import asyncio
import json
import re
import signal
from pathlib import Path
from urllib.parse import urlsplit

from redis_server import RedisServer
from test_multinode import client, cluster, start_game
from test_server_process import _http_get

from clients.client import ArenaError, Client

DASHBOARD = Path(__file__).resolve().parent.parent / "deploy" / "grafana-dashboard.json"


async def metrics_text(url: str) -> str:
    status, _, body = await _http_get(urlsplit(url).port or 0, "/metrics")
    assert status == 200
    return body


async def scrape(url: str) -> dict[str, float]:
    """``/metrics`` of the node at ``url`` (its game port), series -> value."""
    body = await metrics_text(url)
    lines = [line for line in body.splitlines() if line and not line.startswith("#")]
    assert not [line for line in lines if "_created" in line.split(" ")[0]]
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in lines}


def series(metrics: dict[str, float], name: str) -> dict[str, float]:
    return {k: v for k, v in metrics.items() if k == name or k.startswith(name + "{")}


async def test_metrics_an_operator_needs(redis_server: RedisServer) -> None:
    async with cluster(redis_server.url, "ops:", ["g1", "g2"]) as (g1, g2):
        ann, bob = await client(g1.url, "ann"), await client(g2.url, "bob")
        eve, cat = await client(g1.url, "eve"), await client(g2.url, "cat")
        try:
            room = await start_game(ann, bob)  # created by ann: g1 hosts it
            await eve.watch(room)
            await cat.quick_match("collapsi", rated=False)
            m1 = await scrape(g1.url)
            m2 = await scrape(g2.url)
            for name in ("process_cpu_seconds_total", "process_resident_memory_bytes"):
                assert m1[name] > 0
            assert m1["process_open_fds"] >= 3
            assert m1['arena_node{node="g1"}'] == 1
            assert m1['arena_node_rooms{node="g1",state="playing"}'] == 1
            assert m2['arena_node_rooms{node="g2",state="playing"}'] == 0
            assert m1["arena_spectators"] == 1
            assert m2["arena_spectators"] == 0
            waiting = series(m2, "arena_quick_match_waiting")
            assert list(waiting.values()) == [1] and "collapsi" in next(iter(waiting))
            assert series(m1, "arena_quick_match_waiting") == {}
            # the room's writes are scripts on the lean connection, timed per command
            assert m1['arena_redis_seconds_count{op="EVALSHA"}'] >= 3
            assert m1['arena_redis_seconds_bucket{le="2.0",op="EVALSHA"}'] >= 3
            assert m2['arena_redis_seconds_count{op="create_session"}'] >= 1
            assert series(m1, "arena_redis_errors_total") == {}
            assert m2["arena_takeovers_total"] == 0

            g1.proc.send_signal(signal.SIGTERM)  # hands the room over: g2 takes it
            assert await asyncio.wait_for(g1.proc.wait(), 30) == 0
            await eve.close()
            await ann.close()
            for _ in range(150):  # g2's sweep finds the released lease of bob's room
                m2 = await scrape(g2.url)
                if m2["arena_takeovers_total"]:
                    break
                await asyncio.sleep(0.1)
            assert m2["arena_takeovers_total"] == 1
            assert m2["arena_takeover_seconds_count"] == 1
            assert m2['arena_node_rooms{node="g2",state="playing"}'] == 1

            redis_server.stop()  # a Redis outage: answered unavailable, counted
            await _refused(bob)
            errors = series(await scrape(g2.url), "arena_redis_errors_total")
            assert sum(errors.values()) >= 1 and all('error="' in k for k in errors)
            # every series the Grafana dashboard plots exists
            exposed = re.findall(r"(?m)^(\w+)[{ ]", await metrics_text(g2.url))
            exprs = [
                t["expr"] for p in json.loads(DASHBOARD.read_text())["panels"] for t in p["targets"]
            ]
            used = set(re.findall(r"\b((?:arena|process)_\w+)", " ".join(exprs)))
            assert len(used) >= 10 and used <= set(exposed), used - set(exposed)
            redis_server.start()
        finally:
            for c in (ann, bob, eve, cat):
                await c.close()


async def _refused(c: Client) -> None:
    for _ in range(50):
        try:
            await c.list_rooms()
        except ArenaError as exc:
            assert exc.code == "unavailable"
            return
        await asyncio.sleep(0.1)
    raise AssertionError("no request failed while Redis was down")
