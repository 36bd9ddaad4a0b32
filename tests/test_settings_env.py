"""Every ``arena serve`` setting comes from the environment too: the README's table
lists exactly the options ``arena serve`` has, and a server started with nothing but
those variables (no flags) runs with each of them."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import redis
from arena_process import ROOT, start_node, stop_node
from redis_server import RedisServer, free_port

from clients.client import Client
from server import cli
from server.presence import PresenceError
from server.presence.redis import RedisPresence
from server.settings import env_name, from_environment, options

TABLE_HEAD = "| variable | flag | default | what it sets |"

#: values for the variables whose type alone does not give one (plain strings)
SAMPLES = {
    "ARENA_HOST": "::1",
    "ARENA_REDIS_PREFIX": "envtest:",
    "ARENA_RATE": "7/3",
    "ARENA_NODE": "node-from-env",
    "ARENA_LOG_FORMAT": "json",  # the test reads JSON lines
    "ARENA_ALLOW_ORIGIN": "https://play.example",
    "ARENA_METRICS_HOST": "::1",
    "ARENA_METRICS_PORT": 0,  # a free port
    "ARENA_ADDRESS_LIMITS_EXEMPT": "10.0.0.0/8",
    "ARENA_ADDRESS_LIMITS": "conns=9,puzzles=2/0.25",
    "ARENA_EVENT_LOOP": "asyncio",  # not the default, and there without uvloop too
}


def readme_table() -> dict[str, str]:
    """The README's settings table: variable -> flag."""
    text = (ROOT / "README.md").read_text()
    assert TABLE_HEAD in text, "the README has no settings table"
    rows = text.split(TABLE_HEAD, 1)[1].strip().splitlines()[1:]
    table = {}
    for row in rows:
        if not row.startswith("|"):
            break
        cells = [c.strip().strip("`") for c in row.strip("|").split("|")]
        table[cells[0]] = cells[1]
    return table


def serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return parser


def test_the_readme_table_lists_every_option_of_arena_serve() -> None:
    documented = readme_table()
    actual = {env_name(a): a.option_strings[-1] for a in options(serve_parser())}
    assert documented == actual


def sample(action: argparse.Action, name: str, tmp: Path) -> Any:
    """A value unlike the default for ``action`` (what the server must then run with)."""
    if name in SAMPLES:
        return SAMPLES[name]
    if action.choices:
        return next(c for c in action.choices if c != action.default)
    if action.dest.endswith("_dir"):
        return str(tmp / action.dest)
    if action.type is int:
        return int(action.default or 0) + 3
    if action.type is float:
        return float(action.default or 0) + 1.5
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        return not action.default
    raise AssertionError(f"tests/test_settings_env.py: add a sample value for ${name}")


async def test_a_server_started_from_the_environment_alone_runs_with_each_variable(
    tmp_path: Path,
) -> None:
    store = RedisServer(password="s3cret pass")  # a password URL, as a deployment has
    store.start()
    try:
        await _run_from_environment(tmp_path, store)
    finally:
        store.close()


async def _run_from_environment(tmp_path: Path, store: RedisServer) -> None:
    port = free_port()
    env: dict[str, str] = {}
    expected: dict[str, Any] = {}
    for action in options(serve_parser()):
        name = env_name(action)
        if name == "ARENA_REDIS_URL":
            value: Any = f"redis://:s3cret%20pass@127.0.0.1:{store.port}/2"
            expected[name] = f"redis://:***@127.0.0.1:{store.port}/2"  # logged without it
        elif name == "ARENA_ADMIN_TOKEN":
            value = "env-admin-token-0123456789"
            expected[name] = "***"  # a secret: never logged in clear
        elif name == "ARENA_PORT":
            value = expected[name] = port
        else:
            value = expected[name] = sample(action, name, tmp_path)
        env[name] = str(value).lower() if isinstance(value, bool) else str(value)
    node = await start_node([sys.executable, "-m", "clients.cli", "serve"], env, "env")
    try:
        settings = node.events("settings")[0]
        for name, value in expected.items():
            assert settings[name] == value, name
        assert node.url == f"ws://::1:{port}"
        assert node.events("listening")[0]["node"] == "node-from-env"
        assert node.events("listening")[0]["event_loop"] == "asyncio"  # $ARENA_EVENT_LOOP
        # the Redis of the password URL holds the room, under the prefix from the environment
        ann = Client(f"ws://[::1]:{port}")
        await ann.connect()
        try:
            await ann.login("ann")
            room = (await ann.create_room("collapsi")).room
            r = redis.Redis(port=store.port, password="s3cret pass", db=2)
            try:  # (before ann's clean close, which ends her session and the room)
                assert r.exists(f"envtest:room:{room}")
            finally:
                r.close()
        finally:
            await ann.close()
    finally:
        await stop_node(node)


def test_a_flag_wins_over_its_variable_and_a_bad_value_names_the_variable() -> None:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    from_environment(parser, {"ARENA_GRACE": "7", "ARENA_NODE": "from-env"})
    args = parser.parse_args(["--node", "from-flag"])
    assert (args.grace, args.node) == (7.0, "from-flag")
    done = subprocess.run(
        [sys.executable, "-m", "clients.cli", "serve"],
        env={"ARENA_PORT": "eighty", "PATH": ""},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "$ARENA_PORT wants an int, not 'eighty'" in done.stderr


@pytest.mark.parametrize("bad", ["loud", ""])
def test_a_choice_outside_the_list_is_refused(bad: str) -> None:
    parser = serve_parser()
    with pytest.raises(SystemExit):
        from_environment(parser, {"ARENA_LOG_LEVEL": bad})


async def test_a_redis_that_cannot_be_reached_is_named_without_its_password() -> None:
    presence = RedisPresence(f"redis://:topsecret@127.0.0.1:{free_port()}/0")
    try:
        with pytest.raises(PresenceError) as refused:
            await presence.start(wait=0.2)
    finally:
        await presence.close()
    assert "redis://:***@127.0.0.1" in str(refused.value)
    assert "topsecret" not in str(refused.value)
