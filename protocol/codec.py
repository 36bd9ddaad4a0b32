"""Frames <-> messages: msgpack in binary frames, the same schema as JSON in text frames.

Sans-I/O: the functions take and return frame payloads (``bytes`` for a binary
WebSocket frame, ``str`` for a text frame) and never touch a socket. Decoding is
hardened for hostile input: the frame size, nesting depth, string/array/map sizes and
integer range are bounded, msgpack extension types and binary data are refused, and
every failure is a :class:`~protocol.errors.ProtocolError` with a code; no other
exception escapes the decoders.
"""

from __future__ import annotations

import json
import math
from typing import Any

import msgpack
from pydantic import BaseModel, TypeAdapter, ValidationError

from protocol.client import CLIENT_TYPES, ClientMessage
from protocol.errors import ErrorCode, ProtocolError
from protocol.limits import DEFAULT_LIMITS, INT_MAX, INT_MIN, MAX_SEQ, DecodeLimits
from protocol.server import SERVER_TYPES, ServerMessage

Frame = bytes | bytearray | memoryview | str

CLIENT_ADAPTER: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
SERVER_ADAPTER: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)

_MAX_ERROR_DETAILS = 8


# -- encoding ----------------------------------------------------------------------------


def to_wire(msg: BaseModel) -> dict[str, Any]:
    """The message as plain data, fields in declaration order, ``type`` first.

    Top-level fields whose value is ``null`` are left out (``id``/``re`` when absent,
    optional fields not set), and so are those of the events inside a ``catch_up``;
    other nested ``null`` values are kept.
    """
    data = msg.model_dump(mode="json")
    events = data.get("events")
    if data.get("type") == "catch_up" and isinstance(events, list):
        data["events"] = [_drop_nulls(event) for event in events]
    return _drop_nulls(data)


def _drop_nulls(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


def encode(msg: BaseModel, binary: bool = True) -> bytes | str:
    """Encode a message: msgpack ``bytes`` for a binary frame, JSON ``str`` for a text frame.

    JSON is compact (no spaces) and keeps non-ASCII text as is (frames are UTF-8).
    """
    return encode_wire(to_wire(msg), binary)


def encode_wire(data: dict[str, Any], binary: bool = True) -> bytes | str:
    """Encode wire data (what :func:`to_wire` or a :mod:`protocol.fastwire` builder makes)."""
    if binary:
        return msgpack.packb(data, use_bin_type=True)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# -- decoding ----------------------------------------------------------------------------


def is_binary(frame: Frame) -> bool:
    """Whether a frame payload is a binary (msgpack) frame rather than a text (JSON) one."""
    return not isinstance(frame, str)


def decode_client(frame: Frame, limits: DecodeLimits = DEFAULT_LIMITS) -> ClientMessage:
    """Decode a frame a client sent. Raises :class:`ProtocolError` (and nothing else).

    Codes: ``frame_too_large``, ``bad_frame`` (undecodable), ``bad_request`` (decodable
    but breaks the schema; ``re`` set when the frame had a usable ``id``),
    ``unknown_type`` (``details.type`` names it).
    """
    data = decode_frame(frame, limits)
    return _validate(data, CLIENT_ADAPTER, CLIENT_TYPES, _request_id(data))


def decode_server(frame: Frame, limits: DecodeLimits = DEFAULT_LIMITS) -> ServerMessage:
    """Decode a frame the server sent (for clients); same errors as :func:`decode_client`."""
    data = decode_frame(frame, limits)
    return _validate(data, SERVER_ADAPTER, SERVER_TYPES, None)


def decode_frame(frame: Frame, limits: DecodeLimits = DEFAULT_LIMITS) -> dict[str, Any]:
    """Parse a frame into a plain map, enforcing every structural limit."""
    if isinstance(frame, str):
        data = _parse_json(frame, limits)
    elif isinstance(frame, bytes | bytearray | memoryview):
        data = _parse_msgpack(bytes(frame), limits)
    else:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"a frame is bytes or str, not {type(frame)}")
    if type(data) is not dict:
        raise ProtocolError(ErrorCode.BAD_FRAME, "a message must be a map at the top level")
    _check_tree(data, limits)
    return data


def _too_large(size: int, limits: DecodeLimits) -> ProtocolError:
    return ProtocolError(
        ErrorCode.FRAME_TOO_LARGE,
        f"frame of {size} bytes exceeds {limits.max_frame_bytes}",
        details={"max_frame_bytes": limits.max_frame_bytes},
    )


def _parse_json(text: str, limits: DecodeLimits) -> Any:
    if len(text) > limits.max_frame_bytes:
        raise _too_large(len(text), limits)
    if len(text) * 4 > limits.max_frame_bytes and not text.isascii():
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > limits.max_frame_bytes:
            raise _too_large(size, limits)
    try:
        return _JSON_DECODER.decode(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise ProtocolError(ErrorCode.BAD_FRAME, f"not valid JSON: {exc}") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


_JSON_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


class _ExtRefused(ValueError):
    pass


def _refuse_ext(code: int, data: bytes) -> Any:
    raise _ExtRefused(f"msgpack extension type {code} is not allowed")


def _parse_msgpack(raw: bytes, limits: DecodeLimits) -> Any:
    if len(raw) > limits.max_frame_bytes:
        raise _too_large(len(raw), limits)
    try:
        return msgpack.unpackb(
            raw,
            raw=False,
            use_list=True,
            strict_map_key=True,
            ext_hook=_refuse_ext,
            max_str_len=limits.max_str_bytes,
            max_bin_len=limits.max_str_bytes,
            max_array_len=limits.max_array_len,
            max_map_len=limits.max_map_len,
            max_ext_len=limits.max_str_bytes,
        )
    except _ExtRefused as exc:
        raise ProtocolError(ErrorCode.BAD_FRAME, str(exc)) from None
    except UnicodeDecodeError:
        raise ProtocolError(ErrorCode.BAD_FRAME, "invalid UTF-8 in a msgpack string") from None
    except (ValueError, TypeError, OverflowError, RecursionError, msgpack.UnpackException) as exc:
        # ExtraData, FormatError, StackError and "incomplete input" are ValueErrors.
        name = type(exc).__name__
        why = str(exc) or "malformed or truncated"
        raise ProtocolError(ErrorCode.BAD_FRAME, f"not valid msgpack ({name}): {why}") from None


def _bad(message: str) -> ProtocolError:
    return ProtocolError(ErrorCode.BAD_FRAME, message)


def _check_tree(root: dict[str, Any], limits: DecodeLimits) -> None:
    """Walk the parsed value iteratively (no recursion) and enforce the limits.

    Scalars are checked where they are found; only containers go on the stack, which
    keeps this cheap for the usual flat messages.
    """
    max_depth = limits.max_depth
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > max_depth:
            raise _bad(f"nesting deeper than {max_depth}")
        if type(value) is dict:
            if len(value) > limits.max_map_len:
                raise _bad(f"map with more than {limits.max_map_len} keys")
            for key in value:
                if type(key) is not str:
                    raise _bad("map keys must be strings")
                if not key.isascii() or len(key) > limits.max_str_bytes:
                    _check_str(key, limits)
            items: Any = value.values()
        else:
            if len(value) > limits.max_array_len:
                raise _bad(f"array longer than {limits.max_array_len}")
            items = value
        for item in items:
            kind = type(item)
            if kind is dict or kind is list:
                stack.append((item, depth + 1))
            elif kind is str:
                if not item.isascii() or len(item) > limits.max_str_bytes:
                    _check_str(item, limits)
            elif kind is bool or item is None:
                continue
            else:
                _check_scalar(item, limits)


def _check_scalar(value: Any, limits: DecodeLimits) -> None:
    kind = type(value)
    if value is None or kind is bool:
        return
    if kind is str:
        _check_str(value, limits)
    elif kind is int:
        if not INT_MIN <= value <= INT_MAX:
            raise _bad("integer outside the 64-bit range")
    elif kind is float:
        if not math.isfinite(value):
            raise _bad("non-finite number")
    else:
        raise _bad(f"values of type {kind.__name__} are not allowed (binary, extension)")


def _check_str(text: str, limits: DecodeLimits) -> None:
    if text.isascii():
        size = len(text)
    else:
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise _bad("string is not valid Unicode (lone surrogate)") from None
    if size > limits.max_str_bytes:
        raise _bad(f"string longer than {limits.max_str_bytes} bytes")


def _request_id(data: dict[str, Any]) -> int | str | None:
    """The frame's ``id`` if it is usable as ``re`` (so even a refused request is matched)."""
    rid = data.get("id")
    if type(rid) is int and 0 <= rid <= MAX_SEQ:
        return rid
    if type(rid) is str and 0 < len(rid) <= 64:
        return rid
    return None


def _validate(
    data: dict[str, Any],
    adapter: TypeAdapter[Any],
    known: dict[str, Any],
    rid: int | str | None,
) -> Any:
    kind = data.get("type")
    if type(kind) is not str:
        raise ProtocolError(ErrorCode.BAD_REQUEST, "a message needs a string field 'type'", re=rid)
    if kind not in known:
        raise ProtocolError(
            ErrorCode.UNKNOWN_TYPE,
            f"unknown message type {kind[:64]!r}",
            re=rid,
            details={"type": kind[:64]},
        )
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        errors = [
            {
                "loc": ".".join(str(part) for part in err["loc"][1:])[:200],
                "msg": err["msg"][:200],
            }
            for err in exc.errors(include_url=False, include_input=False)[:_MAX_ERROR_DETAILS]
        ]
        first = errors[0] if errors else {"loc": "", "msg": "invalid"}
        where = f" at {first['loc']}" if first["loc"] else ""
        raise ProtocolError(
            ErrorCode.BAD_REQUEST,
            f"invalid {kind}{where}: {first['msg']}",
            re=rid,
            details={"errors": errors},
        ) from None
