"""protocol.fastread: the fast decoder gives what the generic one gives (an equal model,
with the same fields set and the same dump, or the same error) for many generated
frames: valid ``move_made`` and ``clock_update``, each broken in one field, with unknown
keys, with views the limits refuse, other types, and the golden vectors."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codec import decode_server
from protocol.errors import ProtocolError
from protocol.fastread import decode_server_fast
from protocol.limits import MAX_MOVES, MAX_MS, MAX_SEQ, DecodeLimits

EXAMPLES = settings(max_examples=300, deadline=None)
VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors" / "v1.json"

ids = st.from_regex(r"[A-Za-z0-9_.:-]{1,64}", fullmatch=True)
request_ids = st.integers(0, MAX_SEQ) | st.text(min_size=1, max_size=64)
seats = st.integers(0, 7)
moves = st.text(min_size=1, max_size=12)
scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=8)
views = st.recursive(
    scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4)
    ),
    max_leaves=12,
).map(lambda v: {"v": v})
clocks = st.fixed_dictionaries(
    {"remaining_ms": st.lists(st.integers(0, MAX_MS), max_size=4)},
    optional={"running": st.none() | seats},
)
envelope = {"room": ids, "seq": st.integers(0, MAX_SEQ)}
move_mades = st.fixed_dictionaries(
    {
        "type": st.just("move_made"),
        **envelope,
        "ply": st.integers(1, MAX_MOVES),
        "seat": seats,
        "move": moves,
        "position": st.text(min_size=1, max_size=30),
        "view": views,
        "legal_moves": st.lists(moves, max_size=6),
    },
    optional={"re": request_ids, "to_move": st.none() | seats, "clock": st.none() | clocks},
)
clock_updates = st.fixed_dictionaries(
    {"type": st.just("clock_update"), **envelope, "clock": clocks}, optional={"re": request_ids}
)
#: values that break a field one way or another (type, bounds, pattern, limits)
wrong = st.sampled_from(
    [
        None, True, 1.5, -1, 0, 8, 2**53, "", "x" * 300, "r 1", "r\n", [], {}, [1],
        ["x"] * 3, [""], {"remaining_ms": [1], "other": 1}, {"remaining_ms": [-1]},
        {"remaining_ms": [1] * 9}, {"remaining_ms": [MAX_MS + 1]}, {"remaining_ms": [True]},
        {"remaining_ms": [1], "running": 8}, {"v": math.nan}, {"v": math.inf}, {"v": b"x"},
        {"v": [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}, {"v": {"a": {"b": {"c": 1.0}}}}, b"bin",
    ]
)  # fmt: skip


def same(frame: bytes | str, limits: DecodeLimits | None = None) -> None:
    """Both decoders agree on ``frame``: equal models or equal errors."""
    args = () if limits is None else (limits,)
    try:
        want: Any = decode_server(frame, *args)
    except ProtocolError as exc:
        with pytest.raises(ProtocolError) as got:
            decode_server_fast(frame, *args)
        assert (got.value.code, str(got.value), got.value.details) == (
            exc.code,
            str(exc),
            exc.details,
        )
        return
    got_msg = decode_server_fast(frame, *args)
    assert type(got_msg) is type(want)
    assert got_msg == want
    assert got_msg.model_fields_set == want.model_fields_set
    assert repr(got_msg.model_dump(mode="json")) == repr(want.model_dump(mode="json"))
    assert got_msg.model_dump(exclude_unset=True) == want.model_dump(exclude_unset=True)


def pack(data: dict[str, Any]) -> bytes:
    return msgpack.packb(data, use_bin_type=True)


@EXAMPLES
@given(move_mades | clock_updates)
def test_valid_frames_decode_equal(data: dict[str, Any]) -> None:
    same(pack(data))
    same(json.dumps(data))  # (text frames go the generic way)


@EXAMPLES
@given(move_mades | clock_updates, st.data())
def test_a_broken_field_gives_the_same_error(data: dict[str, Any], draw: st.DataObject) -> None:
    key = draw.draw(st.sampled_from([*data, "extra", "re", "to_move", "clock"]))
    data[key] = draw.draw(wrong)
    same(pack(data))


@EXAMPLES
@given(move_mades, st.integers(1, 4))
def test_tight_limits_agree(data: dict[str, Any], depth: int) -> None:
    """Limits the walk enforces on the view (depth, string and array sizes) hold."""
    same(pack(data), DecodeLimits(max_depth=depth, max_str_bytes=4, max_array_len=3))


def test_golden_vectors_and_odd_frames() -> None:
    for vector in json.loads(VECTORS.read_text())["messages"]:
        if vector["direction"] == "server":
            same(bytes.fromhex(vector["msgpack"]))
    for frame in (b"", b"\xc1", pack([1]), pack({"type": ["move_made"]}), pack({"type": 1})):
        same(frame)
    with pytest.raises(ProtocolError):
        decode_server_fast(12)  # type: ignore[arg-type]


def test_the_fast_way_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """(So that the tests above compare the fast path with the generic one, not the
    generic one with itself.)"""
    mm = {
        "type": "move_made", "room": "r1", "seq": 3, "ply": 1, "seat": 0, "move": "7",
        "position": "p", "view": {"cards": ["1", "J"]}, "to_move": 1, "legal_moves": ["2"],
        "clock": {"remaining_ms": [1000, 2000], "running": 1},
    }  # fmt: skip
    cu = {"type": "clock_update", "room": "r1", "seq": 4, "clock": {"remaining_ms": [5, 0]}}
    want = [decode_server(pack(mm)), decode_server(pack(cu))]

    def generic(*args: Any) -> Any:
        raise AssertionError("the generic decoder was used")

    monkeypatch.setattr("protocol.fastread._slow", generic)
    monkeypatch.setattr("protocol.fastread.decode_server", generic)
    assert [decode_server_fast(pack(mm)), decode_server_fast(pack(cu))] == want
    with pytest.raises(AssertionError):
        decode_server_fast(pack({**cu, "type": "game_over"}))
