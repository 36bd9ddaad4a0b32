"""``arena admin backup/restore/export`` as a user runs them, on a real server's data dir
(its tournaments, kept in their own database, included)."""

from __future__ import annotations

import json
from pathlib import Path

from arena_process import run_arena, serve_command, start_node
from test_server_process import finished_game

from clients.client import Client
from protocol import messages as m

ADMIN = "admin-cli-test-admin-token-0123"


async def test_backup_while_serving_export_and_restore_elsewhere(tmp_path: Path) -> None:
    data, copy, backup = tmp_path / "data", tmp_path / "copy", tmp_path / "backup.db"
    node = await start_node(serve_command("--data-dir", str(data), "--admin-token", ADMIN))
    try:
        record_id, moves, ann = await finished_game(node.url)
        await ann.close()
        async with Client(node.url) as operator:
            made = await operator.request(
                m.CreateTournament(
                    admin_token=ADMIN, name="Kept", game="collapsi", format="swiss", rounds=2
                )
            )
            tid = made.tournament.tournament
        done = run_arena("admin", "--data-dir", str(data), "backup", str(backup))  # online
        assert done.returncode == 0, done.stderr
        exported = run_arena("admin", "--data-dir", str(data), "export")
        assert exported.returncode == 0, exported.stderr
        lines = [json.loads(line) for line in exported.stdout.splitlines()]
        assert [x["game_id"] for x in lines] == [record_id]
        assert lines[0]["record"]["data"]["moves"] == moves
        refused = run_arena("admin", "--data-dir", str(data), "restore", str(backup))
        assert refused.returncode == 2
        assert "is in use by another arena server" in refused.stderr
    finally:
        node.kill9()
        await node.proc.wait()
    done = run_arena("admin", "--data-dir", str(copy), "restore", str(backup))
    assert done.returncode == 0, done.stderr
    node = await start_node(serve_command("--data-dir", str(copy)))
    try:
        async with Client(node.url) as reader:
            rec = await reader.get_record(record_id)
            assert rec.data.moves == moves
            assert [e.name for e in await reader.leaderboard("collapsi")] == ["ann", "bob"]
            listed = await reader.request(m.ListTournaments())
            assert [(t.tournament, t.name) for t in listed.tournaments] == [(tid, "Kept")]
    finally:
        node.kill9()
        await node.proc.wait()
    bad = run_arena("admin", "--data-dir", str(copy), "restore", str(tmp_path / "none.db"))
    assert (bad.returncode, bad.stderr.strip()) == (
        2,
        f"arena admin: error: {tmp_path / 'none.db'}: no such database",
    )
