"""PROTOCOL.md stays true: its examples decode, it covers every message, code and limit,
and its worked example is a real game the engine replays move by move."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from protocol import limits
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
    for direction, msg in frames:
        if direction == "client":
            pending.append(msg.id)
            continue
        if msg.type == "room_state":
            last_seq = msg.seq
        if msg.type in ROOM_EVENT_TYPES:
            assert msg.seq == last_seq + 1, "room events are gap-free"
            last_seq = msg.seq
            assert msg.re is None
        elif msg.type == "goodbye":
            assert msg.re is None
        else:
            assert msg.re in pending, f"{msg.type} answers no open request"
            pending.remove(msg.re)
    assert pending == [], "every request got exactly one reply"
    assert [m.type for _, m in frames[-3:]] == ["logout", "ack", "goodbye"]


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
