"""The JSON Schema of every protocol v1 message, exported to ``protocol/schema/v1.json``.

Regenerate after changing a model (a test fails until the committed file matches)::

    .venv/bin/python -m protocol.schema --write

``python -m protocol.schema`` without ``--write`` prints the schema; ``--check`` exits 1
when the committed file is out of date.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from protocol._generated import generated_file_main
from protocol.client import ClientMessage
from protocol.server import RoomEvent, ServerMessage
from protocol.versions import CURRENT_VERSION

SCHEMA_PATH = Path(__file__).parent / "schema" / f"v{CURRENT_VERSION}.json"
_REF = "#/$defs/{model}"


def _union_schema(adapter: TypeAdapter[Any], name: str, defs: dict[str, Any]) -> None:
    schema = adapter.json_schema(ref_template=_REF, mode="validation")
    defs.update(schema.pop("$defs", {}))
    defs[name] = schema


def build_schema() -> dict[str, Any]:
    """The whole schema document: client, server and room-event unions over shared defs.

    ``type`` is marked required in every message (the models give it a default only so
    Python code can build messages without repeating it).
    """
    defs: dict[str, Any] = {}
    _union_schema(TypeAdapter(ClientMessage), "ClientMessage", defs)
    _union_schema(TypeAdapter(ServerMessage), "ServerMessage", defs)
    _union_schema(TypeAdapter(RoomEvent), "RoomEvent", defs)
    for definition in defs.values():
        props = definition.get("properties", {})
        for tag in ("type", "kind"):
            if "const" in props.get(tag, {}):
                required = definition.setdefault("required", [])
                if tag not in required:
                    required.insert(0, tag)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://collapsi-arena.invalid/protocol/v{CURRENT_VERSION}.json",
        "title": f"Collapsi Arena protocol v{CURRENT_VERSION}",
        "description": (
            "Every message of the protocol, in both directions. A frame holds one message: "
            "msgpack in binary WebSocket frames, JSON in text frames. Unknown fields must be "
            "ignored by receivers. Generated from protocol/*.py by "
            "`python -m protocol.schema --write`; see protocol/PROTOCOL.md."
        ),
        "anyOf": [
            {"$ref": "#/$defs/ClientMessage"},
            {"$ref": "#/$defs/ServerMessage"},
        ],
        "$defs": dict(sorted(defs.items())),
    }


def render() -> str:
    return json.dumps(build_schema(), indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return generated_file_main("protocol.schema", SCHEMA_PATH, render, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
