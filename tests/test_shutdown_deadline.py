"""A shutdown that hangs still ends the process within ``--shutdown-timeout``, and its log
says where it hung; a second signal ends it at once.

The hang is real: the node talks to a real Redis through a proxy that stops forwarding,
so the node's last writes (releasing its rooms' leases) wait for answers that never come.
"""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import AsyncIterator

import pytest
from arena_process import Node, start_node, stop_node
from redis_proxy import RedisProxy
from test_multinode import serve_argv

from clients.client import Client
from server.shutdown_deadline import EXIT_STUCK


async def node_with_a_room(proxy: RedisProxy, prefix: str, *extra: str) -> Node:
    node = await start_node([*serve_argv(proxy.url, prefix, "d1"), *extra], name="d1")
    async with Client(node.url) as ann:
        await ann.login("ann")
        await ann.create_room("collapsi", seat=0)  # a room, so a lease to release at the end
    return node


@pytest.fixture
async def proxy(redis_url: str) -> AsyncIterator[RedisProxy]:
    port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    async with RedisProxy(port) as p:
        yield p


async def exit_code(node: Node, within: float) -> int:
    try:
        return await asyncio.wait_for(node.proc.wait(), within)
    finally:
        await stop_node(node, clean=False)


@pytest.mark.timeout(60)
async def test_a_shutdown_stuck_on_redis_ends_at_its_deadline_and_logs_where(
    proxy: RedisProxy, redis_prefix: str
) -> None:
    node = await node_with_a_room(proxy, redis_prefix, "--shutdown-timeout", "0.5")
    proxy.hang()
    node.proc.send_signal(signal.SIGTERM)
    assert await exit_code(node, within=15) == EXIT_STUCK
    [stuck] = node.events("shutdown_stuck")
    assert stuck["level"] == "error" and stuck["seconds"] == 0.5
    stacks = [t["stack"] for t in stuck["tasks"]]
    # where it waited: the shutdown (for a room's last write or its lease) on Redis
    assert any("Arena.shutdown" in s for s in stacks), stacks
    # (in the Redis store's facade or one of its parts: redis.py, redis_rooms.py, ...,
    # waiting on either of its clients: how far the shutdown got depends on the load)
    on_redis = re.compile(r"server/presence/redis\w*\.py:\d+ in ")
    waiting = ("RespClient.execute", "Redis.execute_command")
    assert any(on_redis.search(s) and any(w in s for w in waiting) for s in stacks), stacks
    assert "arena_stopped" not in [e["event"] for e in node.lines]


@pytest.mark.timeout(60)
async def test_a_second_signal_ends_a_stuck_shutdown_at_once(
    proxy: RedisProxy, redis_prefix: str
) -> None:
    node = await node_with_a_room(proxy, redis_prefix, "--shutdown-timeout", "600")
    proxy.hang()
    node.proc.send_signal(signal.SIGTERM)
    while "arena_stopping" not in [e["event"] for e in node.lines]:
        await asyncio.sleep(0.02)
    node.proc.send_signal(signal.SIGINT)
    assert await exit_code(node, within=15) == EXIT_STUCK
    assert node.events("shutdown_stuck")


@pytest.mark.timeout(60)
async def test_a_shutdown_that_finishes_in_time_exits_cleanly(
    proxy: RedisProxy, redis_prefix: str
) -> None:
    node = await node_with_a_room(proxy, redis_prefix, "--shutdown-timeout", "30")
    node.proc.send_signal(signal.SIGTERM)
    assert await exit_code(node, within=25) == 0
    assert not node.events("shutdown_stuck")
    assert "arena_stopped" in [e["event"] for e in node.lines]
