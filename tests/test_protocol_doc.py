"""PROTOCOL.md stays true: its examples decode, it covers every message, code and limit,
and its worked example is a real game the engine replays move by move."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from protocol import limits, vectors
from protocol.client import CLIENT_TYPES
from protocol.codec import decode_client, decode_server
from protocol.errors import ERROR_INFO, CloseCode, ErrorCode, ProtocolError
from protocol.server import ROOM_EVENT_TYPES, SERVER_TYPES

DOC = (Path(__file__).parent.parent / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC, flags=re.S)


def _decode_either(text: str):
    try:
        return "client", decode_client(text)
    except ProtocolError as exc:
        assert exc.code == ErrorCode.UNKNOWN_TYPE, f"{exc!r} in {text[:80]}"
    return "server", decode_server(text)


def test_every_json_example_is_a_valid_message() -> None:
    blocks = _blocks("json")
    assert len(blocks) > 60
    for block in blocks:
        _decode_either(block)


def _canonical(value: Any) -> str:
    """JSON text that tells ``1500`` from ``1500.0`` and ``true`` from ``1`` (``==`` does not)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def test_every_json_example_is_a_golden_vector() -> None:
    """The message reference and the golden vectors hold the same messages (both come from
    ``protocol/examples.py``): an example edited in one place only, or left stale, fails."""
    golden = json.loads(vectors.VECTORS_PATH.read_text(encoding="utf-8"))["messages"]
    wanted = {_canonical(json.loads(v["json"])) for v in golden}
    shown = {_canonical(json.loads(block)) for block in _blocks("json")}
    assert not shown - wanted, "examples that are not golden vectors (stale?)"
    assert not wanted - shown, "golden vectors without an example in the document"


def test_every_message_type_has_an_example() -> None:
    seen: dict[str, set[str]] = {"client": set(), "server": set()}
    for block in _blocks("json"):
        direction, msg = _decode_either(block)
        seen[direction].add(msg.type)
    assert seen["client"] == set(CLIENT_TYPES)
    assert seen["server"] == set(SERVER_TYPES)
    for t in [*CLIENT_TYPES, *SERVER_TYPES]:
        assert f"#### {t}\n" in DOC, f"no reference section for {t}"


def test_error_and_close_codes_are_documented() -> None:
    for code, info in ERROR_INFO.items():
        stay = "yes" if info.stays_open else f"no, closes with {int(info.close_code)}"
        assert f"| `{code.value}` | {stay} |" in DOC, code
    for close in CloseCode:
        assert re.search(rf"^\| {int(close)} \| ", DOC, flags=re.M), close


def test_limits_table_matches_the_code() -> None:
    assert f"| {limits.MAX_DEPTH} |" in DOC
    assert f"| {limits.MAX_STR_BYTES} |" in DOC
    assert f"| {limits.MAX_ARRAY_LEN} elements |" in DOC
    assert f"| {limits.MAX_MAP_LEN} keys |" in DOC
    assert f"default is {limits.MAX_FRAME_BYTES}" in DOC
    assert f"1-{limits.NAME_MAX} characters" in DOC
    assert f"1-{limits.CHAT_MAX} characters" in DOC
    for event in ROOM_EVENT_TYPES:
        assert f"`{event}`" in DOC


# -- the worked example ---------------------------------------------------------------


def _transcript() -> list[tuple[str, object]]:
    (block,) = _blocks("transcript")
    frames = []
    for line in block.strip().splitlines():
        arrow, text = line[:2], line[2:]
        assert arrow in ("> ", "< "), line
        json.loads(text)  # one JSON text frame per line
        if arrow == "> ":
            frames.append(("client", decode_client(text)))
        else:
            frames.append(("server", decode_server(text)))
    return frames


def test_worked_example_replies_and_seqs() -> None:
    frames = _transcript()
    assert frames[0][1].type == "hello"
    assert frames[1][1].type == "welcome"
    pending: list = []
    last_seq = None
    early: list[int] = []  # events before the room's first snapshot (it includes them)
    for direction, msg in frames:
        if direction == "client":
            pending.append(msg.id)
            continue
        if msg.type == "room_state":
            assert early == list(range(1, msg.seq + 1)), "the snapshot covers what came first"
            last_seq = msg.seq
        if msg.type in ROOM_EVENT_TYPES:
            assert msg.re is None
            if last_seq is None:
                early.append(msg.seq)
                continue
            assert msg.seq == last_seq + 1, "room events are gap-free"
            last_seq = msg.seq
        elif msg.type == "goodbye":
            assert msg.re is None
        else:
            assert msg.re in pending, f"{msg.type} answers no open request"
            pending.remove(msg.re)
    assert pending == [], "every request got exactly one reply"
    tail = ["logout", "seat_freed", "player_left", "ack", "goodbye"]
    assert [m.type for _, m in frames[-5:]] == tail


def test_worked_example_is_a_real_game() -> None:
    from engine.base import game_class

    frames = [msg for _, msg in _transcript()]
    started = next(m for m in frames if m.type == "game_started")
    state = next(m for m in frames if m.type == "room_state")
    game = game_class(state.game).from_setup(
        started.setup, rules=state.rules, variant=state.variant, players=len(started.seats)
    )
    assert game.position() == started.position
    assert game.legal_moves() == started.legal_moves
    moves = [m for m in frames if m.type == "move_made"]
    for made in moves:
        assert made.seat == game.to_move()
        game.play(made.move)
        assert made.position == game.position()
        assert made.to_move == game.to_move()
        assert made.legal_moves == game.legal_moves()
    over = next(m for m in frames if m.type == "game_over")
    assert over.result.model_dump() == game.result().to_dict()
    record = next(m for m in frames if m.type == "record")
    assert record.data.moves == [m.move for m in moves]
    assert record.data.setup == started.setup
    refused = [m for m in frames if m.type == "error"]
    assert [e.code for e in refused] == ["not_your_turn"]


@pytest.mark.parametrize("needle", ["server-defined", "additive", "Unknown fields are ignored"])
def test_doc_states_the_contract_words(needle: str) -> None:
    assert needle in DOC


# -- the worked example against the reference server -----------------------------------


def _shape(direction: str, msg: Any) -> str:
    """What the comparison keeps of a frame: its direction, type, and whether it has ``re``."""
    arrow = ">" if direction == "client" else "<"
    return f"{arrow} {msg.type}{' re' if getattr(msg, 're', None) is not None else ''}"


def _segments(shapes: list[str]) -> list[tuple[str, list[str]]]:
    """Each client frame with the server frames that follow it, in sorted order: the
    protocol does not fix the order between a reply and the events its request caused."""
    out: list[tuple[str, list[str]]] = []
    for shape in shapes:
        if shape.startswith(">"):
            out.append((shape, []))
        else:
            out[-1][1].append(shape)
    return [(c, sorted(after)) for c, after in out]


class _Conn:
    """A raw JSON-text-frame connection that records every frame it sends and gets."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.log: list[tuple[str, Any]] = []
        self.ids = 0

    async def send(self, **fields: Any) -> int:
        self.ids += 1
        text = json.dumps({**fields, "id": self.ids})
        self.log.append(("client", decode_client(text)))
        await self.ws.send(text)
        return self.ids

    async def until(self, *wanted: Callable[[Any], bool]) -> list[Any]:
        """Read until every predicate has matched some frame; returns the frames read."""
        left = list(wanted)
        got = []
        while left:
            msg = decode_server(await asyncio.wait_for(self.ws.recv(), 10))
            self.log.append(("server", msg))
            got.append(msg)
            left = [p for p in left if not p(msg)]
        return got

    async def first(self, wanted: Callable[[Any], bool]) -> Any:
        """The first frame received that matches, reading on if none has yet."""
        for direction, msg in self.log:
            if direction == "server" and wanted(msg):
                return msg
        return (await self.until(wanted))[-1]

    async def request(self, *also: Callable[[Any], bool], **fields: Any) -> list[Any]:
        rid = await self.send(**fields)
        return await self.until(lambda m: getattr(m, "re", None) == rid, *also)


def _is(kind: str) -> Callable[[Any], bool]:
    return lambda m: m.type == kind


async def test_worked_example_frames_match_the_reference_server(arena: Any) -> None:
    """Ann's side of the worked example, replayed on a real server (raw JSON text frames):
    the frames around the game (connect, room, ready, start; chat, record, logout) have
    the transcript's types, order and replies. The deal is the server's, so the game
    itself is compared by its rules only: move_made and ack per move, not_your_turn."""
    from websockets.asyncio.client import connect

    await arena.start()
    async with connect(arena.url) as ann_ws, connect(arena.url) as bot_ws:
        ann, bot = _Conn(ann_ws), _Conn(bot_ws)
        hello = {"type": "hello", "versions": [1], "software": "doc-test/1"}
        await ann.request(**hello)
        await ann.request(type="login", name="ann", token="s3cret-player-token", bot=False)
        tc = {"kind": "fischer", "base_ms": 180000, "increment_ms": 2000}
        (state,) = [
            m
            for m in await ann.request(
                type="create_room",
                game="collapsi",
                rules="standard",
                variant="base",
                options={},
                seats=2,
                time_control=tc,
                rated=True,
                private=False,
                seat=0,
            )
            if m.type == "room_state"
        ]
        room = state.room
        await bot.request(**hello)
        await bot.request(
            type="login", name="kestrel-bot", token="kestrel-bot-token-9f2c", bot=True
        )
        await bot.request(type="join_room", room=room, role="player")
        await bot.request(type="take_seat", room=room, seat=1)
        await bot.request(type="ready", room=room, ready=True)
        await ann.until(lambda m: m.type == "ready_changed" and m.seat == 1)
        started = await ann.request(_is("game_started"), type="ready", room=room, ready=True)
        game = next(m for m in started if m.type == "game_started")
        to_move, legal, ply, refused = game.to_move, game.legal_moves, 0, None
        while to_move is not None:
            ply += 1
            made = lambda m, p=ply: getattr(m, "ply", 0) == p  # noqa: E731
            if to_move == 0:  # Ann's move: its move_made and her reply, in either order
                got = await ann.request(made, type="move", room=room, move=legal[0])
            else:
                await bot.send(type="move", room=room, move=legal[0])
                got = await ann.until(made)
            last = next(m for m in got if made(m))
            to_move, legal = last.to_move, last.legal_moves
            if ply == 1:  # out of turn, as Ann tries in the transcript
                refused = (await ann.request(type="move", room=room, move=legal[0]))[-1]
        over = await ann.first(_is("game_over"))
        await bot.first(_is("game_over"))
        await ann.request(_is("chat_message"), type="chat", room=room, text="gg")
        await ann.request(type="get_record", record=over.record)
        await ann.request(_is("goodbye"), type="logout")
    assert refused is not None and refused.code == "not_your_turn"
    real = _segments([_shape(d, m) for d, m in ann.log])
    doc = _segments([_shape(d, m) for d, m in _transcript()])
    first_move = [c for c, _ in doc].index("> move")
    assert real[:first_move] == doc[:first_move]
    chat = [c for c, _ in doc].index("> chat")
    real_chat = [c for c, _ in real].index("> chat")
    assert real[real_chat:] == doc[chat:]
    assert "< game_over" in real[real_chat - 1][1] and "< game_over" in doc[chat - 1][1]
    # each of Ann's moves was answered once: an ack, or the error for the out-of-turn one
    sent = [m.id for d, m in ann.log if d == "client" and m.type == "move"]
    replies = [m.type for d, m in ann.log if d == "server" and getattr(m, "re", None) in sent]
    assert sorted(replies) == ["ack"] * (len(sent) - 1) + ["error"]
    assert [m.ply for _, m in ann.log if m.type == "move_made"] == list(range(1, ply + 1))
