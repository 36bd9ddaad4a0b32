"""Codec basics: both encodings decode to the same message; errors are typed."""

from __future__ import annotations

import pytest

from protocol import ErrorCode, ProtocolError, choose_version, decode_client, encode
from protocol.client import Hello, JoinRoom, Login, MakeMove
from protocol.codec import decode_server
from protocol.errors import ERROR_INFO, CloseCode, is_error_code
from protocol.server import Error


@pytest.mark.parametrize("binary", [True, False])
def test_client_message_round_trips(binary: bool) -> None:
    msg = MakeMove(id=7, room="r-1", move="c3")
    frame = encode(msg, binary)
    assert isinstance(frame, bytes if binary else str)
    assert decode_client(frame) == msg


def test_server_error_round_trips_and_omits_absent_fields() -> None:
    err = ProtocolError(ErrorCode.NOT_YOUR_TURN, "wait for blue", re="a1").to_message()
    text = encode(err, binary=False)
    assert text == '{"type":"error","re":"a1","code":"not_your_turn","message":"wait for blue"}'
    assert decode_server(text) == err
    assert isinstance(decode_server(encode(err)), Error)


def test_strict_types_are_not_coerced() -> None:
    with pytest.raises(ProtocolError) as info:
        decode_client('{"type":"login","id":4,"name":"ann","bot":"true"}')
    assert info.value.code == ErrorCode.BAD_REQUEST
    assert info.value.re == 4
    assert info.value.details["errors"][0]["loc"] == "bot"


def test_unknown_fields_are_ignored() -> None:
    msg = decode_client('{"type":"login","name":"ann","future":{"x":[1,2]}}')
    assert msg == Login(name="ann")


def test_unknown_type_is_a_typed_error_that_keeps_the_connection() -> None:
    with pytest.raises(ProtocolError) as info:
        decode_client('{"type":"teleport","id":"q"}')
    assert info.value.code == ErrorCode.UNKNOWN_TYPE
    assert info.value.re == "q"
    assert info.value.stays_open


def test_join_room_needs_exactly_one_target() -> None:
    assert decode_client('{"type":"join_room","invite":"K7QX"}') == JoinRoom(invite="K7QX")
    for text in ('{"type":"join_room"}', '{"type":"join_room","room":"a","invite":"b"}'):
        with pytest.raises(ProtocolError) as info:
            decode_client(text)
        assert info.value.code == ErrorCode.BAD_REQUEST


def test_version_negotiation() -> None:
    assert choose_version([1]) == 1
    assert choose_version([3, 2, 1], server_versions=[1, 2]) == 2
    with pytest.raises(ProtocolError) as info:
        choose_version([2, 3])
    assert info.value.code == ErrorCode.UNSUPPORTED_VERSION
    assert info.value.close_code == CloseCode.UNSUPPORTED_VERSION
    assert not info.value.stays_open
    assert info.value.to_message().details == {"versions": [1]}


def test_every_error_code_is_described() -> None:
    assert set(ERROR_INFO) == set(ErrorCode)
    for info in ERROR_INFO.values():
        assert info.stays_open == (info.close_code is None)


def test_hello_frame_kind_is_kept() -> None:
    hello = Hello(versions=[1], software="test/1")
    assert decode_client(encode(hello, binary=True)) == hello
    assert decode_client(encode(hello, binary=False)) == hello


def test_is_error_code_knows_exactly_the_codes() -> None:
    """What a server may pass on as an error code (anything else is ``internal``)."""
    assert all(is_error_code(c.value) and is_error_code(c) for c in ErrorCode)
    for other in ("no_such_code", "", None, 3, "INTERNAL", b"internal"):
        assert not is_error_code(other)
