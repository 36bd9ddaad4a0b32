"""The committed golden vectors and JSON Schema match the models, and every vector holds."""

from __future__ import annotations

import json

import msgpack
import pytest

from protocol import schema, vectors
from protocol.client import CLIENT_TYPES
from protocol.codec import decode_client, decode_server, encode
from protocol.errors import ErrorCode, ProtocolError
from protocol.server import SERVER_TYPES

VECTORS = json.loads(vectors.VECTORS_PATH.read_text(encoding="utf-8"))


def test_vectors_file_is_up_to_date() -> None:
    assert vectors.VECTORS_PATH.read_text(encoding="utf-8") == vectors.render(), (
        "protocol/vectors/v1.json is stale: run .venv/bin/python -m protocol.vectors --write"
    )


def test_schema_file_is_up_to_date() -> None:
    committed = json.loads(schema.SCHEMA_PATH.read_text(encoding="utf-8"))
    assert committed == schema.build_schema(), (
        "protocol/schema/v1.json disagrees with the models: "
        "run .venv/bin/python -m protocol.schema --write"
    )


def test_schema_names_every_message_type() -> None:
    defs = json.loads(schema.SCHEMA_PATH.read_text(encoding="utf-8"))["$defs"]
    client = set(defs["ClientMessage"]["discriminator"]["mapping"])
    server = set(defs["ServerMessage"]["discriminator"]["mapping"])
    assert client == set(CLIENT_TYPES)
    assert server == set(SERVER_TYPES)
    for name in ("Hello", "MoveMade", "Error"):
        assert defs[name]["required"][0] == "type"


def test_vectors_cover_every_message_type() -> None:
    seen = {(v["direction"], v["type"]) for v in VECTORS["messages"]}
    assert {("client", t) for t in CLIENT_TYPES} <= seen
    assert {("server", t) for t in SERVER_TYPES} <= seen


@pytest.mark.parametrize("vector", VECTORS["messages"], ids=lambda v: v["name"])
def test_message_vector(vector: dict) -> None:
    decode = decode_client if vector["direction"] == "client" else decode_server
    raw = bytes.fromhex(vector["msgpack"])
    from_msgpack = decode(raw)
    from_json = decode(vector["json"])
    assert from_msgpack == from_json
    assert from_msgpack.type == vector["type"]
    # Both encodings carry the same data, and our encoder reproduces them exactly.
    assert msgpack.unpackb(raw, raw=False) == json.loads(vector["json"])
    assert encode(from_json, binary=True) == raw
    assert encode(from_msgpack, binary=False) == vector["json"]


@pytest.mark.parametrize("vector", VECTORS["malformed"], ids=lambda v: v["name"])
def test_malformed_vector(vector: dict) -> None:
    frame = bytes.fromhex(vector["msgpack"]) if vector["frame"] == "binary" else vector["json"]
    if vector["error"] is None:
        decode_client(frame)
        return
    with pytest.raises(ProtocolError) as info:
        decode_client(frame)
    assert info.value.code == ErrorCode(vector["error"])
    assert info.value.re == vector["re"]
    # The refusal itself is a valid server message in both encodings.
    reply = info.value.to_message()
    assert decode_server(encode(reply)) == reply
    assert decode_server(encode(reply, binary=False)) == reply


# -- the schema file works for other languages' validators ------------------------------

jsonschema = pytest.importorskip("jsonschema")
_SCHEMA = json.loads(schema.SCHEMA_PATH.read_text(encoding="utf-8"))
_VALIDATOR = jsonschema.Draft202012Validator(_SCHEMA)
# JSON Schema counts 1.0 as an integer; the protocol does not (PROTOCOL.md says so), so
# that one case is refused by the decoder but not by a schema validator.
_SCHEMA_BLIND = {"float where an int belongs"}


def test_schema_itself_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(_SCHEMA)


@pytest.mark.parametrize("vector", VECTORS["messages"], ids=lambda v: v["name"])
def test_schema_accepts_every_message_vector(vector: dict) -> None:
    _VALIDATOR.validate(json.loads(vector["json"]))
    direction = "ClientMessage" if vector["direction"] == "client" else "ServerMessage"
    sub = jsonschema.Draft202012Validator(
        {"$ref": f"#/$defs/{direction}", "$defs": _SCHEMA["$defs"]}
    )
    sub.validate(json.loads(vector["json"]))


@pytest.mark.parametrize(
    "vector",
    [
        v
        for v in VECTORS["malformed"]
        if v["error"] in ("bad_request", "unknown_type") and v["name"] not in _SCHEMA_BLIND
    ],
    ids=lambda v: v["name"],
)
def test_schema_rejects_what_the_decoder_refuses(vector: dict) -> None:
    client_schema = {"$ref": "#/$defs/ClientMessage", "$defs": _SCHEMA["$defs"]}
    value = json.loads(vector["json"])
    assert not jsonschema.Draft202012Validator(client_schema).is_valid(value)
