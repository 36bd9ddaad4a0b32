"""Golden vectors: every example message with its exact msgpack bytes and JSON text, and
malformed frames with the error code they must produce.

Other-language implementations check their codecs against ``protocol/vectors/v1.json``:
decoding ``msgpack`` (hex) and ``json`` must give the same value; our encoder produces
exactly these bytes and text (keys in schema order, smallest integer encodings, floats as
float64, top-level nulls omitted). Regenerate after changing a model or an example::

    .venv/bin/python -m protocol.vectors --write
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgpack

from protocol._generated import generated_file_main
from protocol.codec import encode
from protocol.examples import client_examples, server_examples
from protocol.limits import MAX_DEPTH
from protocol.versions import CURRENT_VERSION

VECTORS_PATH = Path(__file__).parent / "vectors" / f"v{CURRENT_VERSION}.json"


def _pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def _nested(depth: int) -> dict[str, Any]:
    """A ping whose ``x`` field nests arrays so the whole frame is ``depth`` deep."""
    inner: Any = 0
    for _ in range(depth - 1):
        inner = [inner]
    return {"type": "ping", "x": inner}


def _invalid() -> list[dict[str, Any]]:
    """Malformed client frames and the error code each must produce (``re`` when echoed)."""
    hello = _pack({"type": "hello", "versions": [1], "software": "x"})
    cases: list[tuple[str, bytes | str, str, Any]] = [
        ("msgpack truncated", hello[:-1], "bad_frame", None),
        ("msgpack trailing bytes", hello + b"\xc0", "bad_frame", None),
        ("msgpack reserved byte 0xc1", b"\xc1", "bad_frame", None),
        ("msgpack top level is an array", _pack(["hello"]), "bad_frame", None),
        ("msgpack top level is a string", _pack("hello"), "bad_frame", None),
        (
            "msgpack extension type",
            b"\x82\xa4type\xa4ping\xa1x" + msgpack.packb(msgpack.ExtType(5, b"abcd")),
            "bad_frame",
            None,
        ),
        (
            "msgpack timestamp extension",
            b"\x82\xa4type\xa4ping\xa1x\xd6\xff\x00\x00\x00\x01",
            "bad_frame",
            None,
        ),
        ("msgpack binary value", _pack({"type": "ping", "x": b"\x00\x01"}), "bad_frame", None),
        ("msgpack invalid UTF-8", b"\x82\xa4type\xa4ping\xa1x\xa2\xc3\x28", "bad_frame", None),
        ("msgpack integer map key", b"\x82\xa4type\xa4ping\x01\x02", "bad_frame", None),
        (
            "msgpack NaN",
            b"\x82\xa4type\xa4ping\xa1x\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00",
            "bad_frame",
            None,
        ),
        (
            f"msgpack nested deeper than {MAX_DEPTH}",
            _pack(_nested(MAX_DEPTH + 1)),
            "bad_frame",
            None,
        ),
        (f"msgpack nested {MAX_DEPTH} deep is fine", _pack(_nested(MAX_DEPTH)), "", None),
        ("json syntax error", '{"type":"ping",', "bad_frame", None),
        ("json NaN", '{"type":"ping","x":NaN}', "bad_frame", None),
        ("json number overflows a double", '{"type":"ping","x":1e400}', "bad_frame", None),
        (
            "json integer beyond 64 bits",
            '{"type":"ping","x":18446744073709551616}',
            "bad_frame",
            None,
        ),
        ("json lone surrogate", '{"type":"ping","x":"\\ud800"}', "bad_frame", None),
        ("json top level is an array", '[{"type":"ping"}]', "bad_frame", None),
        (
            f"json nested deeper than {MAX_DEPTH}",
            '{"type":"ping","x":' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}",
            "bad_frame",
            None,
        ),
        ("missing type", '{"id":3,"room":"r1"}', "bad_request", 3),
        ("type is not a string", '{"id":3,"type":7}', "bad_request", 3),
        ("unknown type", '{"id":"q1","type":"teleport"}', "unknown_type", "q1"),
        ("missing field", '{"id":4,"type":"move","room":"r1"}', "bad_request", 4),
        (
            "string where a bool belongs",
            '{"id":5,"type":"login","name":"ann","bot":"true"}',
            "bad_request",
            5,
        ),
        (
            "bool where an int belongs",
            '{"id":6,"type":"take_seat","room":"r1","seat":true}',
            "bad_request",
            6,
        ),
        (
            "float where an int belongs",
            '{"id":7,"type":"watch","room":"r1","since_seq":1.0}',
            "bad_request",
            7,
        ),
        (
            "string where an int belongs",
            '{"id":8,"type":"take_seat","room":"r1","seat":"1"}',
            "bad_request",
            8,
        ),
        ("seat out of range", '{"id":9,"type":"take_seat","room":"r1","seat":8}', "bad_request", 9),
        (
            "name longer than 32",
            '{"id":10,"type":"login","name":"' + "n" * 33 + '"}',
            "bad_request",
            10,
        ),
        (
            "chat longer than 500",
            '{"id":11,"type":"chat","room":"r1","text":"' + "c" * 501 + '"}',
            "bad_request",
            11,
        ),
        (
            "control character in a name",
            '{"id":12,"type":"login","name":"a\\u0007b"}',
            "bad_request",
            12,
        ),
        ("unusable id is not echoed", '{"id":[1],"type":"ping"}', "bad_request", None),
        ("negative id is not echoed", '{"id":-1,"type":"ping"}', "bad_request", None),
        (
            "join_room with room and invite",
            '{"type":"join_room","room":"a","invite":"b"}',
            "bad_request",
            None,
        ),
        (
            "unknown time control",
            '{"type":"quick_match","game":"collapsi","time_control":{"kind":"hourglass"}}',
            "bad_request",
            None,
        ),
    ]
    out = []
    for name, frame, error, re in cases:
        entry: dict[str, Any] = {"name": name}
        if isinstance(frame, bytes):
            entry["frame"] = "binary"
            entry["msgpack"] = frame.hex()
        else:
            entry["frame"] = "text"
            entry["json"] = frame
        entry["error"] = error or None
        entry["re"] = re
        out.append(entry)
    return out


def build_vectors() -> dict[str, Any]:
    valid = []
    counts: dict[str, int] = {}
    for direction, messages in (("client", client_examples()), ("server", server_examples())):
        for msg in messages:
            n = counts[msg.type] = counts.get(msg.type, 0) + 1
            valid.append(
                {
                    "name": f"{direction}/{msg.type}/{n}",
                    "direction": direction,
                    "type": msg.type,
                    "json": encode(msg, binary=False),
                    "msgpack": encode(msg, binary=True).hex(),  # type: ignore[union-attr]
                }
            )
    return {
        "version": CURRENT_VERSION,
        "description": (
            "Golden vectors of protocol v1. 'messages': valid messages; decoding 'msgpack' "
            "(hex of a binary frame) and 'json' (a text frame) gives equal values, and the "
            "reference encoder produces exactly these. 'malformed': client frames a server "
            "must refuse with 'error' (null = must be accepted), echoing 're' when not null. "
            "Regenerate: python -m protocol.vectors --write"
        ),
        "messages": valid,
        "malformed": _invalid(),
    }


def render() -> str:
    return json.dumps(build_vectors(), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return generated_file_main("protocol.vectors", VECTORS_PATH, render, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
