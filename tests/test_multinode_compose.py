"""``docker-compose.yml`` run without Docker: the same commands and environments as
local processes, so the file cannot drift from what works.

Service host names become loopback addresses (``redis:6379`` the test's own
``redis-server``, ``node1:8765`` node1's free port...), ``--host 0.0.0.0``
becomes ``127.0.0.1``, ``arena`` and ``python`` this interpreter. Then a player
on node2 finds the bot's room (on node1) in the lobby, plays it to the end
through node2, and the game's record is there.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import yaml
from arena_process import Node, start_node, stop_node
from redis_server import free_port, redis_server_binary

from clients.client import Client

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"


def load_compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_file_has_redis_two_nodes_and_a_bot() -> None:
    services = load_compose()["services"]
    redis = services["redis"]
    assert "--appendonly" in redis["command"]
    assert redis["command"][redis["command"].index("--appendonly") + 1] == "yes"
    # no acknowledged move may be lost, even when the host crashes
    assert redis["command"][redis["command"].index("--appendfsync") + 1] == "always"
    assert any(v.endswith(":/data") for v in redis["volumes"])
    nodes = [s for s in services.values() if s.get("command", [])[:2] == ["arena", "serve"]]
    assert len(nodes) == 2
    assert len({n["environment"]["ARENA_NODE"] for n in nodes}) == 2
    assert {n["environment"]["ARENA_REDIS_URL"] for n in nodes} == {"redis://redis:6379/0"}
    assert "bot" in services
    docker = (ROOT / "Dockerfile").read_text()
    for folder in ("engine", "protocol", "server", "clients", "deploy"):
        assert f"COPY {folder} {folder}" in docker


def local_argv(command: list[str], addresses: dict[str, str], port: int | None) -> list[str]:
    """A compose command as a local one (see the module docstring)."""
    argv: list[str] = []
    for i, arg in enumerate(command):
        if i == 0 and arg == "arena":
            argv += [sys.executable, "-m", "clients.cli"]
            continue
        if i == 0 and arg == "python":
            argv.append(sys.executable)
            continue
        if i > 0 and command[i - 1] == "--port" and port is not None:
            arg = str(port)
        elif i > 0 and command[i - 1] == "--host":
            arg = "127.0.0.1"
        argv.append(rewrite(arg, addresses))
    return argv


def rewrite(value: str, addresses: dict[str, str]) -> str:
    for service, local in addresses.items():
        value = value.replace(f"//{service}/", f"//{local}/").replace(f"//{service}", f"//{local}")
    return value


async def test_compose_services_as_local_processes(tmp_path: Path) -> None:
    services = load_compose()["services"]
    redis_port = free_port()
    ports = {name: free_port() for name in ("node1", "node2")}
    addresses = {"redis:6379": f"127.0.0.1:{redis_port}"}
    addresses.update({f"{n}:8765": f"127.0.0.1:{p}" for n, p in ports.items()})

    redis_cmd = services["redis"]["command"]
    assert redis_cmd[0] == "redis-server"
    redis = await asyncio.create_subprocess_exec(
        redis_server_binary(),
        *redis_cmd[1:],
        *("--port", str(redis_port), "--bind", "127.0.0.1", "--dir", str(tmp_path)),
        stdout=asyncio.subprocess.DEVNULL,
    )
    nodes: list[Node] = []
    bot = None
    try:
        for name in ("node1", "node2"):
            svc = services[name]
            env = {k: rewrite(str(v), addresses) for k, v in svc["environment"].items()}
            argv = local_argv(svc["command"], addresses, ports[name])
            for attempt in range(50):  # redis-server may still be starting
                try:
                    nodes.append(await start_node(argv, env, name))
                    break
                except AssertionError:
                    if attempt == 49:
                        raise
                    await asyncio.sleep(0.1)
        assert [n.url for n in nodes] == [f"ws://127.0.0.1:{ports[n]}" for n in ("node1", "node2")]

        bot_argv = local_argv(services["bot"]["command"], addresses, None)
        bot = await asyncio.create_subprocess_exec(
            *bot_argv, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
        )
        assert bot.stdout is not None
        line = json.loads(await asyncio.wait_for(bot.stdout.readline(), 30))
        assert line["event"] == "bot_room"
        room = line["room"]

        ann = Client(nodes[1].url)  # on node2; the bot's room lives on node1
        await ann.connect()
        try:
            await ann.login("ann")
            assert room in [r.room for r in await ann.list_rooms()]
            await ann.join(room)
            await ann.take_seat(room, 1)
            await ann.ready(room)
            rng = random.Random(7)
            while True:
                ev = await ann.next(type=("game_started", "move_made", "game_over"), room=room)
                if ev.type == "game_over":
                    break
                if ev.to_move == 1 and ev.legal_moves:
                    await ann.move(room, rng.choice(ev.legal_moves))
            record = await ann.get_record(ev.record)
            assert record.data.moves == [e.move for e in ann.events(room) if e.type == "move_made"]
        finally:
            await ann.close()
        done = json.loads(await asyncio.wait_for(bot.stdout.readline(), 10))
        assert done == {"event": "bot_game_over", "room": room, "record": ev.record}
    finally:
        if bot is not None and bot.returncode is None:
            bot.kill()
            await bot.wait()
        await asyncio.gather(*(stop_node(n) for n in nodes))
        with contextlib.suppress(ProcessLookupError):
            redis.kill()
        await redis.wait()
