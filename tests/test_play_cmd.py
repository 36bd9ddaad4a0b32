"""``arena play`` (the line mode) as a real subprocess against a real server on loopback:
a quick match to the end, a flag fall at the prompt, chat on the opponent's turn, Ctrl-C
at the prompt, and the name free again right after a clean exit."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import pytest
from test_server_play_cmd import arena_play, read_line


async def until(proc: asyncio.subprocess.Process, out: list[str], prefix: str) -> str:
    """Read lines until one starts with ``prefix``; that line."""
    while not (line := await read_line(proc, out)).startswith(prefix):
        pass
    return line


def legal_of(line: str) -> list[str]:
    return line.removeprefix("your move; legal: ").split()


async def plays_first_legal(proc: asyncio.subprocess.Process, out: list[str]) -> str:
    """Answer every prompt with its first legal move until the game is over; that line."""
    while True:
        line = await read_line(proc, out)
        if line.startswith("your move; legal: "):
            proc.stdin.write(f"{legal_of(line)[0]}\n".encode())  # type: ignore[union-attr]
        elif line.startswith("game over: "):
            return line


async def ann_and_bob(arena: Any, *args: str) -> tuple[asyncio.subprocess.Process, Any, str]:
    """``arena play --name ann --create collapsi ARGS`` and bob (a library client) seated."""
    proc = await arena_play("--url", arena.url, "--name", "ann", "--create", "collapsi", *args)
    line = await read_line(proc, [])
    assert line.startswith("room "), line
    room = line.split()[1]
    bob = await arena.client("bob")
    await bob.join(room)
    await bob.take_seat(room, 1)
    await bob.ready(room)
    return proc, bob, room


@pytest.mark.timeout(60)
async def test_quick_match_is_played_to_the_end_by_two_terminals(arena: Any) -> None:
    """Both sides learn their seat (from matched / the snapshot) and get their prompts."""
    await arena.start()
    ann = await arena_play(
        "--url",
        arena.url,
        "--name",
        "ann",
        "--token",
        "ann-0123456789abcdef",
        "--quick",
        "collapsi",
    )
    a_out: list[str] = []
    await until(ann, a_out, "waiting for an opponent")
    bob = await arena_play(
        "--url",
        arena.url,
        "--name",
        "bob",
        "--token",
        "bob-0123456789abcdef",
        "--quick",
        "collapsi",
    )
    b_out: list[str] = []
    ends = await asyncio.gather(plays_first_legal(ann, a_out), plays_first_legal(bob, b_out))
    assert ends[0] == ends[1]
    assert "wins (no_moves)" in ends[0]
    for proc, out in ((ann, a_out), (bob, b_out)):
        rest, _ = await asyncio.wait_for(proc.communicate(), 20)
        out += rest.decode().splitlines()
        assert proc.returncode == 0
    assert any(x.startswith("you are ann (") for x in a_out)
    assert any(x.startswith("you are bob (") for x in b_out)
    moves = [x for x in a_out if " plays " in x]
    assert moves and moves == [x for x in b_out if " plays " in x]
    assert any(x.startswith("  ann: 1500 -> ") for x in a_out), a_out  # rated, shown


@pytest.mark.timeout(60)
async def test_a_flag_fall_at_the_prompt_is_reported_and_ends_the_run(arena: Any) -> None:
    await arena.start()
    proc, bob, room = await ann_and_bob(arena, "--clock", "fixed:3")
    out: list[str] = []
    started = await bob.next(type="game_started", room=room)
    if started.to_move == 1:
        await bob.move(room, started.legal_moves[0])
    line = await until(proc, out, "your move; legal: ")  # ann moves once (else: aborted)
    proc.stdin.write(f"{legal_of(line)[0]}\n".encode())  # type: ignore[union-attr]
    turn = await bob.next(type="move_made", room=room, where=lambda e: e.to_move == 1)
    await bob.move(room, turn.legal_moves[0])
    await until(proc, out, "your move; legal: ")  # ann says nothing: her flag falls
    line = await until(proc, out, "game over: ")
    assert line.startswith("game over: bob (") and "(timeout)" in line
    assert await asyncio.wait_for(proc.wait(), 20) == 0
    assert any(x.startswith("clock: ann (") for x in out)


@pytest.mark.timeout(60)
async def test_chat_on_the_opponents_turn_and_resign_at_any_time(arena: Any) -> None:
    await arena.start()
    proc, bob, room = await ann_and_bob(arena)
    out: list[str] = []
    started = await bob.next(type="game_started", room=room)
    if started.to_move == 0:
        line = await until(proc, out, "your move; legal: ")
        proc.stdin.write(f"{legal_of(line)[0]}\n".encode())  # type: ignore[union-attr]
        await bob.next(type="move_made", room=room)
    # bob to move: ann has no prompt and chats
    proc.stdin.write(b"say thinking hard?\n")  # type: ignore[union-attr]
    chat = await bob.next(type="chat_message", room=room)
    assert (chat.name, chat.text) == ("ann", "thinking hard?")
    proc.stdin.write(b"resign\n")  # type: ignore[union-attr]
    over = await bob.next(type="game_over", room=room)
    assert over.result.reason == "aborted"  # bob has not moved yet: no result
    assert (await until(proc, out, "game over: ")).startswith("game over: aborted")
    assert "<ann> thinking hard?" in out
    assert await asyncio.wait_for(proc.wait(), 20) == 0


@pytest.mark.timeout(60)
async def test_ctrl_c_at_the_prompt_leaves_at_once_and_frees_the_name(arena: Any) -> None:
    await arena.start()
    proc, bob, room = await ann_and_bob(arena)
    out: list[str] = []
    started = await bob.next(type="game_started", room=room)
    if started.to_move == 1:
        await bob.move(room, started.legal_moves[0])
    await until(proc, out, "your move; legal: ")
    proc.send_signal(signal.SIGINT)
    assert await asyncio.wait_for(proc.wait(), 20) == 130
    over = await bob.next(type="game_over", room=room)
    assert over.result.winner in (1, None)
    again = await arena.client()
    assert (await again.login("ann")).name == "ann"  # no name_taken for a grace period


@pytest.mark.timeout(60)
async def test_the_same_name_logs_in_again_right_after_a_clean_exit(arena: Any) -> None:
    await arena.start()
    proc, bob, room = await ann_and_bob(arena)
    out: list[str] = []
    await bob.next(type="game_started", room=room)
    await bob.resign(room)
    await until(proc, out, "game over: ")
    assert await asyncio.wait_for(proc.wait(), 20) == 0
    again = await arena_play("--url", arena.url, "--name", "ann", "--create", "collapsi")
    line = await read_line(again, [])
    assert line.startswith("room "), line
    again.stdin.close()  # type: ignore[union-attr]
    assert await asyncio.wait_for(again.wait(), 20) == 0


@pytest.mark.timeout(60)
async def test_guests_quick_match_as_the_server_banner_says(arena: Any) -> None:
    """``arena play --name NAME --quick collapsi`` with no token (what ``arena serve`` tells
    a new user to type) is a casual game: a guest cannot play rated ones."""
    await arena.start()
    ann = await arena_play("--url", arena.url, "--name", "ann", "--quick", "collapsi")
    a_out: list[str] = []
    await until(ann, a_out, "waiting for an opponent")
    bob = await arena_play("--url", arena.url, "--name", "bob", "--quick", "collapsi")
    b_out: list[str] = []
    ends = await asyncio.gather(plays_first_legal(ann, a_out), plays_first_legal(bob, b_out))
    assert ends[0] == ends[1] and "wins (no_moves)" in ends[0]
    for proc, out in ((ann, a_out), (bob, b_out)):
        rest, _ = await asyncio.wait_for(proc.communicate(), 20)
        out += rest.decode().splitlines()
        assert proc.returncode == 0
        assert not any(" -> " in x for x in out), out  # unrated: no rating changes


@pytest.mark.timeout(60)
async def test_a_refused_run_frees_the_name_at_once(arena: Any) -> None:
    await arena.start()
    refused = await arena_play(
        "--url", arena.url, "--name", "ann", "--create", "collapsi", "--rated"
    )
    _, err = await asyncio.wait_for(refused.communicate(), 20)
    assert refused.returncode == 2 and b"forbidden" in err
    again = await arena.client()
    assert (await again.login("ann")).name == "ann"  # no name_taken for a grace period
