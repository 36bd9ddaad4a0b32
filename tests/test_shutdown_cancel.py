"""A node shuts down cleanly even when the cancellation of one of its loops is lost.

On Python 3.11 ``asyncio.wait_for`` (which redis-py sends every command through) can lose
a cancellation that arrives as its inner task completes; a background loop whose
cancellation was lost went round again, so the shutdown awaiting it never ended (CI:
test_a_node_shut_down_cleanly_hands_its_rooms_over_at_once hung; a node's sweep, its
outboxes and its matchmaker call redis-py from their loops). ``tests/lost_cancel_serve.py``
makes that race certain for the named task of a real ``arena serve`` on a real Redis;
without server.tasks each test's node hangs in its shutdown until its deadline (exit 70).
"""

from __future__ import annotations

import asyncio
import signal
import sys

import pytest
from arena_process import ROOT, Node, start_node, stop_node
from test_multinode import client, serve_argv

from server.shutdown_deadline import EXIT_STUCK


def losing_argv(redis_url: str, prefix: str, node: str) -> list[str]:
    """``arena serve`` through the wrapper; redis-py's socket timeout is long enough that
    the held write outlasts the way to the shutdown (the URL's option wins)."""
    argv = serve_argv(f"{redis_url}?socket_timeout=60", prefix, node)
    serve = argv.index("serve")
    wrapper = str(ROOT / "tests" / "lost_cancel_serve.py")
    return [sys.executable, wrapper, *argv[serve:], "--shutdown-timeout", "5"]


async def logged(node: Node, event: str, timeout: float = 15.0) -> None:
    async with asyncio.timeout(timeout):
        while not node.events(event):
            await asyncio.sleep(0.02)


async def shut_down(node: Node) -> int:
    await logged(node, "lost_cancel_armed")  # the task waits on its held write
    node.proc.send_signal(signal.SIGTERM)
    code = await asyncio.wait_for(node.proc.wait(), 20)
    await stop_node(node, clean=False)  # reads its log to the end
    return code


def assert_clean(node: Node, code: int) -> None:
    events = [e.get("event") for e in node.lines]
    assert "lost_cancel_fired" in events  # the race happened: its cancellation was lost
    stuck = node.events("shutdown_stuck")
    assert code == 0 and not stuck, f"exit {code} ({EXIT_STUCK}: its shutdown hung): {stuck}"
    assert "arena_stopped" in events


@pytest.mark.timeout(60)
async def test_a_matchmaker_whose_cancellation_is_lost_still_stops(
    redis_url: str, redis_prefix: str
) -> None:
    env = {"ARENA_LOSE_CANCEL": "matchmaker"}
    g1 = await start_node(losing_argv(redis_url, redis_prefix, "g1"), env=env, name="g1")
    try:
        ann = await client(g1.url, "ann")
        await ann.quick_match("collapsi", rated=False)  # the matchmaker reads the queue
        code = await shut_down(g1)
        await ann.close()
    finally:
        await stop_node(g1, clean=False)
    assert_clean(g1, code)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "task",
    [
        "node-sweep",  # a member on another node: g1's sweep checks that g2 is alive
        "outbox-g2",  # g1 answers bob's join through its outbox to g2, whose first write
        # is held until the shutdown
    ],
)
async def test_a_loop_of_two_nodes_whose_cancellation_is_lost_still_stops(
    redis_url: str, redis_prefix: str, task: str
) -> None:
    env = {"ARENA_LOSE_CANCEL": task}
    g1 = await start_node(losing_argv(redis_url, redis_prefix, "g1"), env=env, name="g1")
    g2 = await start_node(serve_argv(redis_url, redis_prefix, "g2"), name="g2")
    try:
        ann, bob = await client(g1.url, "ann"), await client(g2.url, "bob")
        state = await ann.create_room("collapsi", seat=0)
        joined = asyncio.create_task(bob.join(state.room))
        if task == "node-sweep":
            await joined
        code = await shut_down(g1)
        assert (await joined).room == state.room  # (outbox: the held answer went out)
        for c in (ann, bob):
            await c.close()
    finally:
        await stop_node(g1, clean=False)
        await stop_node(g2)
    assert_clean(g1, code)
