"""``docker-compose.yml`` as an operator runs it, checked without Docker.

The file itself: a balancer (the one published port) in front of two nodes and a
Redis with a password and an append-only file, health checks on every service,
nodes and Redis on an internal network, pinned images, a non-root image with a
``HEALTHCHECK``. Then the same topology as local processes: Debian's haproxy with
``deploy/haproxy.cfg`` (its ``bind`` and ``server`` lines pointed at loopback
ports), two ``arena serve`` with the compose environments (service names become
loopback addresses; the lease is shortened to 1 s to keep the test short) and the
compose Redis command. Games are played through the balancer while the node
hosting one of them is killed (-9): its players reconnect through the balancer,
which sends them to the live node, the games finish and no acknowledged move is lost.
The compose health checks run for real against these processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from arena_process import Node, start_node, stop_node
from redis_server import RedisServer, free_port
from test_multinode import assert_gap_free, moves_in_log, play, start_game

from clients.client import ArenaError, Client
from server.presence.redis import RedisPresence

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
NODES = ("node1", "node2")


def load_compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def substitute(value: str, variables: dict[str, str]) -> str:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?error}``."""

    def one(match: re.Match[str]) -> str:
        name, op, rest = match.group(1), match.group(2), match.group(3)
        if name in variables:
            return variables[name]
        assert op != ":?", f"compose needs ${name}: {rest}"
        return rest if op == ":-" else ""

    return re.sub(r"\$\{(\w+)(?:(:[-?])([^}]*))?\}", one, value)


def test_compose_file_is_a_production_topology() -> None:
    compose = load_compose()
    services = compose["services"]
    assert {"redis", "node1", "node2", "balancer"} <= set(services)
    for name, svc in services.items():
        assert svc.get("healthcheck", {}).get("test"), f"{name} has no health check"
        assert svc.get("restart") == "unless-stopped", name
        image = svc.get("image", "")
        assert re.search(r":\d+\.\d+\.\d+", image), f"{name}: image {image!r} is not pinned"
        for dep in svc.get("depends_on", {}).values():
            assert dep == {"condition": "service_healthy"}, name  # waits, not just orders
    published = {n: s["ports"] for n, s in services.items() if s.get("ports")}
    assert list(published) == ["balancer"] and len(published["balancer"]) == 1
    assert services["balancer"]["image"].startswith("haproxy:")
    assert compose["networks"]["internal"]["internal"] is True
    for name in ("redis", *NODES):
        assert services[name]["networks"] == ["internal"], name
    redis_cmd = services["redis"]["command"]
    assert redis_cmd[redis_cmd.index("--appendonly") + 1] == "yes"
    # no acknowledged move may be lost, even when the host crashes
    assert redis_cmd[redis_cmd.index("--appendfsync") + 1] == "always"
    assert redis_cmd[redis_cmd.index("--requirepass") + 1].startswith("${REDIS_PASSWORD:?")
    assert any(v.endswith(":/data") for v in services["redis"]["volumes"])
    envs = [services[n]["environment"] for n in NODES]
    assert len({e["ARENA_NODE"] for e in envs}) == 2
    assert {e["ARENA_REDIS_URL"] for e in envs} == {"redis://:${REDIS_PASSWORD}@redis:6379/0"}
    assert "demo" in services["bot"]["profiles"]  # the bot only on request


def test_dockerfile_is_pinned_unprivileged_and_health_checked() -> None:
    lines = [line.strip() for line in (ROOT / "Dockerfile").read_text().splitlines()]
    base = next(line for line in lines if line.startswith("FROM "))
    assert re.fullmatch(r"FROM python:\d+\.\d+\.\d+-slim-\w+", base), base
    user = next(line for line in lines if line.startswith("USER "))
    assert user.split()[1] not in ("root", "0")
    assert any(line.startswith("HEALTHCHECK") for line in lines)
    for folder in ("engine", "protocol", "server", "clients", "deploy"):
        assert f"COPY {folder} {folder}" in lines
    assert "RUN pip install --no-deps -r deploy/requirements.txt" in lines
    # every pin is exact, and the pins cover what the project needs at run time
    import importlib.metadata as md

    pins = {}
    for line in (ROOT / "deploy" / "requirements.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert re.fullmatch(r"\d+(\.\d+)*", version), line
            pins[name.lower().replace("_", "-")] = version
    needed: set[str] = set()
    todo = ["collapsi-arena"]
    while todo:
        for req in md.requires(todo.pop()) or []:
            if ";" in req:
                continue  # an extra's (dev, ocsp...), or an older Python's than the image's
            name = re.split(r"[ <>=!~(\[]", req, maxsplit=1)[0].lower().replace("_", "-")
            if name not in needed:
                needed.add(name)
                todo.append(name)
    assert needed <= set(pins), needed - set(pins)


def local_haproxy_cfg(lb_port: int, ports: dict[str, int]) -> str:
    """deploy/haproxy.cfg with its public bind and its servers on loopback."""
    text = (ROOT / "deploy" / "haproxy.cfg").read_text()
    text, binds = re.subn(r"(?m)^(\s*bind )\S*:8080\b", rf"\g<1>127.0.0.1:{lb_port}", text)
    assert binds == 1
    for name, port in ports.items():
        text, n = re.subn(rf"(?m)^(\s*server {name} ){name}:8765", rf"\g<1>127.0.0.1:{port}", text)
        assert n == 1, name
    return text


def healthcheck(test: list[str], env: dict[str, str], rewrite: dict[str, str]) -> int:
    """A compose health check run here: its exit status."""
    kind, *argv = test
    argv = [rewrite.get(a, a) for a in argv]
    if kind == "CMD-SHELL":
        cmd = argv[0]
        for old, new in rewrite.items():
            cmd = cmd.replace(old, new)
        argv = ["sh", "-c", cmd]
    done = subprocess.run(argv, env={**os.environ, **env}, cwd=ROOT, timeout=30, check=False)
    return done.returncode


@contextlib.asynccontextmanager
async def topology(tmp_path: Path) -> AsyncIterator[tuple[str, dict[str, Node], RedisServer]]:
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
    if haproxy is None:
        pytest.skip("haproxy is not installed (.ci/run installs Debian's haproxy)")
    services = load_compose()["services"]
    password = secrets.token_hex(12)
    variables = {"REDIS_PASSWORD": password}
    redis_cmd = [substitute(str(a), variables) for a in services["redis"]["command"]]
    assert redis_cmd[0] == "redis-server"
    store = RedisServer(password=password, extra=tuple(redis_cmd[1:]))
    store.start()
    cli = str(Path(store.binary).with_name("redis-cli"))
    redis_env = {k: substitute(v, variables) for k, v in services["redis"]["environment"].items()}
    redis_check = services["redis"]["healthcheck"]["test"]
    assert healthcheck(redis_check, redis_env, {"redis-cli": f"{cli} -p {store.port}"}) == 0
    ports = {n: free_port() for n in NODES}
    metrics = {n: free_port() for n in NODES}
    lb_port = free_port()
    nodes: dict[str, Node] = {}
    lb = None
    try:
        for name in NODES:
            env = {
                k: substitute(str(v), variables) for k, v in services[name]["environment"].items()
            }
            env["ARENA_REDIS_URL"] = env["ARENA_REDIS_URL"].replace(
                "@redis:6379", f"@127.0.0.1:{store.port}"
            )
            # the image's settings (Dockerfile ENV) on loopback, and a short lease
            env.update(ARENA_HOST="127.0.0.1", ARENA_PORT=str(ports[name]))
            # the compose metrics listener (all interfaces of the internal network) here
            assert env["ARENA_METRICS_HOST"] == "0.0.0.0"
            env.update(ARENA_METRICS_HOST="127.0.0.1", ARENA_METRICS_PORT=str(metrics[name]))
            env.update(ARENA_LOG_FORMAT="json", ARENA_LEASE_TTL="1")
            assert services[name]["command"] == ["arena", "serve"]
            argv = [sys.executable, "-m", "clients.cli", "serve"]
            nodes[name] = await start_node(argv, env, name)
            check = services[name]["healthcheck"]["test"]
            assert (
                healthcheck(check, {"ARENA_PORT": str(ports[name])}, {"python": sys.executable})
                == 0
            )
        cfg = tmp_path / "haproxy.cfg"
        cfg.write_text(local_haproxy_cfg(lb_port, ports))
        lb = await asyncio.create_subprocess_exec(
            haproxy, "-db", "-f", str(cfg), stdout=asyncio.subprocess.DEVNULL
        )
        url = f"http://127.0.0.1:{lb_port}"
        for _ in range(100):
            if await asyncio.to_thread(_status, url + "/lb-healthz") == 200:
                break
            assert lb.returncode is None, "haproxy exited"
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("haproxy does not answer")
        for name in NODES:  # the operator's Prometheus scrapes each node's metrics port
            scrape = f"http://127.0.0.1:{metrics[name]}/metrics"
            assert await asyncio.to_thread(_status, scrape) == 200, name
        yield f"ws://127.0.0.1:{lb_port}", nodes, store
    finally:
        if lb is not None and lb.returncode is None:
            lb.terminate()
            await lb.wait()
        await asyncio.gather(*(stop_node(n, clean=False) for n in nodes.values()))
        store.close()


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=3) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


async def connect(url: str, name: str) -> Client:
    c = Client(url)
    await c.connect()
    await c.login(name)
    return c


async def reconnect(c: Client, timeout: float = 20.0) -> None:
    """Reconnect through the balancer until it resumes (a node may still be starting
    to be marked down)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            await c.reconnect()
            return
        except (ArenaError, OSError) as exc:
            if loop.time() > deadline:
                raise AssertionError(f"{c.player}: no resume through the balancer") from exc
        await asyncio.sleep(0.1)


def node_of(c: Client, nodes: dict[str, Node]) -> str:
    """The node ``c`` logged in on (its login line carries the session)."""
    return next(n for n, node in nodes.items() if node_has_login(node, c.session))


def node_has_login(node: Node, session: str | None) -> bool:
    return any(e.get("session") == session for e in node.events("login"))


async def test_games_through_the_balancer_survive_a_node_killed(tmp_path: Path) -> None:
    async with topology(tmp_path) as (url, nodes, store):
        assert await asyncio.to_thread(_status, url.replace("ws:", "http:") + "/healthz") == 200
        # the nodes' metrics are not public
        assert await asyncio.to_thread(_status, url.replace("ws:", "http:") + "/metrics") == 404
        pairs = [(await connect(url, f"a{i}"), await connect(url, f"b{i}")) for i in range(3)]
        clients = [c for pair in pairs for c in pair]
        presence = RedisPresence(store.url, prefix="arena:")
        await presence.start()
        try:
            where = {c.session: node_of(c, nodes) for c in clients}
            assert set(where.values()) == set(NODES)  # the balancer spreads connections
            rooms = [await start_game(a, b) for a, b in pairs]
            acked: dict[str, list[str]] = {room: [] for room in rooms}
            for (a, b), room in zip(pairs, rooms, strict=True):
                assert not await play({0: a, 1: b}, room, acked[room], 2)
            owners = {room: await presence.leases.owner(room) for room in rooms}
            victim = owners[rooms[0]]
            assert victim in NODES
            survivor = next(n for n in NODES if n != victim)

            nodes[victim].kill9()
            await nodes[victim].proc.wait()
            cut = [c for c in clients if where[c.session] == victim]
            for c in cut:  # the balancer's connection to the dead node broke: so did theirs
                await asyncio.wait_for(c.closed.wait(), 15)
                await reconnect(c)
            newcomer = await connect(url, "late")  # sent to the live node
            assert node_of(newcomer, nodes) == survivor
            await newcomer.close()
            for (a, b), room in zip(pairs, rooms, strict=True):
                assert await play({0: a, 1: b}, room, acked[room], 200)
            for (a, b), room in zip(pairs, rooms, strict=True):
                assert moves_in_log(await presence.rooms.read_events(room)) == acked[room]
                for c in (a, b):
                    assert_gap_free(c, room)
                    assert [e.move for e in c.events(room) if e.type == "move_made"] == acked[room]
            taken = {e["room"] for e in nodes[survivor].events("room_taken_over")}
            assert {r for r in rooms if owners[r] == victim} <= taken
        finally:
            await presence.close()
            for c in clients:
                await c.close()
