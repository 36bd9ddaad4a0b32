"""Every message type round-trips in both encodings; the connection state machine."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import TypeAdapter, ValidationError

from protocol.client import CLIENT_TYPES
from protocol.codec import decode_client, decode_server, encode, to_wire
from protocol.errors import CloseCode, ErrorCode, ProtocolError
from protocol.examples import client_examples, server_examples
from protocol.server import ROOM_EVENT_TYPES, SERVER_TYPES, RoomEventBase
from protocol.session import ANONYMOUS_TYPES, Phase, admit, next_phase

CLIENT = client_examples()
SERVER = server_examples()


def test_examples_cover_every_type() -> None:
    assert {m.type for m in CLIENT} == set(CLIENT_TYPES)
    assert {m.type for m in SERVER} == set(SERVER_TYPES)


@pytest.mark.parametrize("binary", [True, False], ids=["msgpack", "json"])
@pytest.mark.parametrize("msg", CLIENT, ids=lambda m: m.type)
def test_client_round_trip(msg, binary: bool) -> None:
    frame = encode(msg, binary)
    back = decode_client(frame)
    assert back == msg
    assert type(back) is CLIENT_TYPES[msg.type]
    assert to_wire(back) == to_wire(msg)


@pytest.mark.parametrize("binary", [True, False], ids=["msgpack", "json"])
@pytest.mark.parametrize("msg", SERVER, ids=lambda m: m.type)
def test_server_round_trip(msg, binary: bool) -> None:
    back = decode_server(encode(msg, binary))
    assert back == msg
    assert type(back) is SERVER_TYPES[msg.type]


def test_type_comes_first_and_absent_envelope_fields_are_omitted() -> None:
    for msg in [*CLIENT, *SERVER]:
        wire = to_wire(msg)
        assert next(iter(wire)) == "type"
        assert None not in wire.values()
    assert "re" not in to_wire(next(m for m in SERVER if m.type == "move_made"))


def test_room_events_carry_room_and_seq() -> None:
    for t in ROOM_EVENT_TYPES:
        cls = SERVER_TYPES[t]
        assert issubclass(cls, RoomEventBase)
        assert cls.model_fields["seq"].is_required()
    assert "room_state" not in ROOM_EVENT_TYPES  # a snapshot, not a logged event


def test_directions_do_not_share_type_names() -> None:
    assert not set(CLIENT_TYPES) & set(SERVER_TYPES)


def test_client_cannot_send_server_messages() -> None:
    frame = encode(next(m for m in SERVER if m.type == "welcome"))
    with pytest.raises(ProtocolError) as info:
        decode_client(frame)
    assert info.value.code == ErrorCode.UNKNOWN_TYPE


# -- connection state machine -----------------------------------------------------------


def test_first_message_must_be_hello() -> None:
    admit(Phase.AWAIT_HELLO, "hello")
    with pytest.raises(ProtocolError) as info:
        admit(Phase.AWAIT_HELLO, "login", re=1)
    assert info.value.code == ErrorCode.HELLO_REQUIRED
    assert info.value.close_code == CloseCode.PROTOCOL_ERROR
    assert info.value.re == 1
    with pytest.raises(ProtocolError):
        admit(Phase.AUTHENTICATED, "hello")


@pytest.mark.parametrize("msg_type", sorted(set(CLIENT_TYPES) - {"hello"}))
def test_anonymous_phase(msg_type: str) -> None:
    if msg_type in ANONYMOUS_TYPES:
        admit(Phase.ANONYMOUS, msg_type)
    else:
        with pytest.raises(ProtocolError) as info:
            admit(Phase.ANONYMOUS, msg_type)
        assert info.value.code == ErrorCode.NOT_AUTHENTICATED
        assert info.value.stays_open


def test_authenticated_phase() -> None:
    for msg_type in set(CLIENT_TYPES) - {"hello", "login", "resume"}:
        admit(Phase.AUTHENTICATED, msg_type)
    for msg_type in ("login", "resume"):
        with pytest.raises(ProtocolError) as info:
            admit(Phase.AUTHENTICATED, msg_type)
        assert info.value.code == ErrorCode.ALREADY_AUTHENTICATED


def test_phase_transitions() -> None:
    phase = next_phase(Phase.AWAIT_HELLO, "welcome")
    assert phase is Phase.ANONYMOUS
    assert next_phase(phase, "error") is Phase.ANONYMOUS
    phase = next_phase(phase, "logged_in")
    assert phase is Phase.AUTHENTICATED
    assert next_phase(phase, "goodbye") is Phase.CLOSED
    with pytest.raises(ProtocolError):
        admit(Phase.CLOSED, "ping")


def test_unknown_error_codes_from_a_newer_server_are_kept() -> None:
    err = ProtocolError("some_future_code", "hmm")
    assert err.code == "some_future_code"
    assert err.stays_open
    assert err.close_code is None
    assert decode_server(encode(err.to_message())).code == "some_future_code"


def test_events_inside_catch_up_omit_null_envelope_fields() -> None:
    catch_up = next(m for m in SERVER if m.type == "catch_up")
    for event in to_wire(catch_up)["events"]:
        assert "re" not in event
        assert event["seq"] >= 1


def test_no_required_field_can_be_null() -> None:
    """to_wire drops top-level nulls, so a required nullable field would not decode."""
    nullable = []
    for cls in [*CLIENT_TYPES.values(), *SERVER_TYPES.values()]:
        for name, field in cls.model_fields.items():
            annotation = field.annotation
            if field.metadata:
                annotation = Annotated[(annotation, *field.metadata)]
            adapter = TypeAdapter(annotation)
            try:
                adapter.validate_python(None)
            except ValidationError:
                continue
            nullable.append((cls.__name__, name))
            assert not field.is_required(), f"{cls.__name__}.{name} is required but nullable"
    assert ("MoveMade", "to_move") in nullable  # the check does see nullable fields


def test_final_move_made_with_no_one_to_move_round_trips() -> None:
    last = next(m for m in SERVER if m.type == "move_made").model_copy(
        update={"to_move": None, "legal_moves": [], "clock": None}
    )
    assert "to_move" not in to_wire(last)
    for binary in (True, False):
        assert decode_server(encode(last, binary)) == last
