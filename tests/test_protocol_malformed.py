"""Hostile input: every malformed frame gives a typed ProtocolError, nothing else escapes.

The property tests feed random bytes, random JSON-like values and mutations of valid
frames (bit flips, truncation, splices) through both decoders.
"""

from __future__ import annotations

import json
import struct

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import decode_client, decode_frame, decode_server, encode
from protocol.errors import ErrorCode, ProtocolError
from protocol.examples import client_examples, server_examples
from protocol.limits import DecodeLimits

VALID_FRAMES = [encode(m, b) for m in client_examples() for b in (True, False)]
SERVER_FRAMES = [encode(m, b) for m in server_examples() for b in (True, False)]


def _code(frame, decode=decode_client, **kw) -> str:
    with pytest.raises(ProtocolError) as info:
        decode(frame, **kw)
    return info.value.code


def test_oversized_frames_are_refused_before_parsing() -> None:
    small = DecodeLimits(max_frame_bytes=1024)
    chat = {"type": "chat", "room": "r1", "text": "x" * 1100}
    assert _code(msgpack.packb(chat), limits=small) == ErrorCode.FRAME_TOO_LARGE
    assert _code(json.dumps(chat), limits=small) == ErrorCode.FRAME_TOO_LARGE
    # 300 characters of 4-byte UTF-8 are 1200 bytes: measured in bytes, not characters.
    wide = '{"type":"chat","room":"r1","text":"' + "\U0001f600" * 300 + '"}'
    assert len(wide) < 1024
    assert _code(wide, limits=small) == ErrorCode.FRAME_TOO_LARGE
    with pytest.raises(ProtocolError) as info:
        decode_client(b"\x00" * (300 * 1024))
    assert info.value.code == ErrorCode.FRAME_TOO_LARGE
    assert not info.value.stays_open


def test_limits_on_strings_arrays_and_maps() -> None:
    limits = DecodeLimits(max_str_bytes=100, max_array_len=10, max_map_len=5)
    assert _code(msgpack.packb({"type": "ping", "x": "y" * 101}), limits=limits) == "bad_frame"
    assert _code(json.dumps({"type": "ping", "x": "y" * 101}), limits=limits) == "bad_frame"
    assert _code(msgpack.packb({"type": "ping", "x": list(range(11))}), limits=limits) == (
        "bad_frame"
    )
    assert _code(json.dumps({"type": "ping", "x": list(range(11))}), limits=limits) == ("bad_frame")
    many = {"type": "ping", **{f"k{i}": i for i in range(5)}}
    assert _code(msgpack.packb(many), limits=limits) == "bad_frame"
    assert _code(json.dumps(many), limits=limits) == "bad_frame"
    assert _code(json.dumps({"type": "ping", "y" * 101: 1}), limits=limits) == "bad_frame"


def test_deep_nesting_never_recurses_out_of_the_decoder() -> None:
    for depth in (17, 1000, 100_000):
        assert _code("[" * depth + "]" * depth) == ErrorCode.BAD_FRAME
        assert _code(b"\x91" * depth + b"\xc0") == ErrorCode.BAD_FRAME
    # Declared sizes far beyond the data are truncation, not allocation.
    assert _code(b"\xdd\xff\xff\xff\xff") == ErrorCode.BAD_FRAME
    assert _code(b"\xdf\xff\xff\xff\xff") == ErrorCode.BAD_FRAME
    assert _code(b"\xdb\xff\xff\xff\xff") == ErrorCode.BAD_FRAME


def test_huge_numbers() -> None:
    assert _code('{"type":"ping","x":' + "9" * 5000 + "}") == ErrorCode.BAD_FRAME
    assert _code('{"type":"ping","x":-9223372036854775809}') == ErrorCode.BAD_FRAME
    assert _code('{"type":"ping","x":Infinity}') == ErrorCode.BAD_FRAME
    assert _code(b"\x82\xa4type\xa4ping\xa1x\xcb" + struct.pack(">d", float("inf"))) == (
        "bad_frame"
    )
    # In range for the frame, out of range for the field: a schema error, not a crash.
    assert _code('{"type":"watch","room":"r","since_seq":18446744073709551615}') == ("bad_request")
    assert _code('{"type":"get_leaderboard","game":"collapsi","limit":1e300}') == "bad_request"


def test_wrong_frame_payload_types() -> None:
    for frame in (None, 42, ["type"], {"type": "ping"}):
        assert _code(frame) == ErrorCode.BAD_FRAME
    assert _code(b"") == ErrorCode.BAD_FRAME
    assert _code("") == ErrorCode.BAD_FRAME
    assert _code(bytearray(encode(client_examples()[0]))[:-2]) == ErrorCode.BAD_FRAME
    decode_client(memoryview(encode(client_examples()[0])))  # views of valid frames work


def test_invalid_utf8_and_surrogates() -> None:
    assert _code(b"\x82\xa4type\xa4ping\xa1x\xa1\xff") == ErrorCode.BAD_FRAME
    assert _code(b"\x82\xa4type\xa4ping\xa2\xed\xa0\xa1x") == ErrorCode.BAD_FRAME
    assert _code('{"type":"ping","x":"\udc80"}') == ErrorCode.BAD_FRAME
    assert _code('{"type":"ping","\\udfff":1}') == ErrorCode.BAD_FRAME


def test_json_text_that_is_valid_msgpack_is_still_judged_as_json() -> None:
    # The frame kind decides the encoding: a text frame holding msgpack-looking bytes is
    # bad JSON, and a binary frame holding JSON text is bad msgpack (a fixint then junk).
    assert _code("\x81\xa4type") == ErrorCode.BAD_FRAME
    assert _code(b'{"type":"ping"}') == ErrorCode.BAD_FRAME


def test_errors_never_leak_huge_inputs() -> None:
    err = None
    try:
        decode_client('{"type":"' + "t" * 10_000 + '"}')
    except ProtocolError as exc:
        err = exc
    assert err is not None and err.code == ErrorCode.UNKNOWN_TYPE
    assert len(err.message) < 200
    assert len(json.dumps(err.details)) < 200


# -- property tests ---------------------------------------------------------------------

json_leaf = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
message_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["hello", "login", "move", "create_room", "watch", "chat", "x"])},
    optional={
        "id": json_values,
        "room": json_values,
        "move": json_values,
        "name": json_values,
        "versions": json_values,
        "software": json_values,
        "game": json_values,
        "time_control": json_values,
        "text": json_values,
        "since_seq": json_values,
    },
)

PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _decodes_or_typed_error(frame, decode=decode_client) -> None:
    try:
        msg = decode(frame)
    except ProtocolError as exc:
        assert isinstance(exc.code, ErrorCode)
        reply = exc.to_message()
        assert decode_server(encode(reply)) == reply
    else:
        # Whatever was accepted re-encodes to a frame that decodes to the same message.
        assert decode(encode(msg)) == msg
        assert decode(encode(msg, binary=False)) == msg


@PROPERTY
@given(st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    _decodes_or_typed_error(data)
    _decodes_or_typed_error(data, decode_server)


@PROPERTY
@given(st.text(max_size=200))
def test_random_text(text: str) -> None:
    _decodes_or_typed_error(text)


@PROPERTY
@given(message_like)
def test_random_message_like_values_in_both_encodings(value: dict) -> None:
    try:
        packed = msgpack.packb(value, use_bin_type=True)
    except (OverflowError, ValueError):
        packed = None  # an integer msgpack cannot carry: nothing to send
    if packed is not None:
        _decodes_or_typed_error(packed)
    _decodes_or_typed_error(json.dumps(value))


@st.composite
def mutated(draw: st.DrawFn, frames: list) -> bytes | str:
    frame = draw(st.sampled_from(frames))
    data = bytearray(frame.encode("utf-8") if isinstance(frame, str) else frame)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "delete", "dup"]))
        i = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "cut":
            del data[i:]
        elif op == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete" and data:
            del data[i : i + draw(st.integers(1, 8))]
        elif op == "dup":
            data[i:i] = data[i : i + draw(st.integers(1, 16))]
    if isinstance(frame, str):
        return bytes(data).decode("utf-8", "replace")
    return bytes(data)


@PROPERTY
@given(mutated(VALID_FRAMES))
def test_mutated_client_frames(frame) -> None:
    _decodes_or_typed_error(frame)


@PROPERTY
@given(mutated(SERVER_FRAMES))
def test_mutated_server_frames(frame) -> None:
    _decodes_or_typed_error(frame, decode_server)


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_decode_frame_accepts_only_maps(value) -> None:
    try:
        data = decode_frame(json.dumps(value))
    except ProtocolError as exc:
        assert exc.code == ErrorCode.BAD_FRAME
    else:
        assert isinstance(data, dict)
