"""Protocol v1: the one message set spoken between clients and the server (no I/O).

- :mod:`protocol.client` / :mod:`protocol.server`: the messages of each direction,
  pydantic models discriminated by ``type`` (:mod:`protocol.messages` has them all).
- :mod:`protocol.codec`: frames <-> messages (msgpack binary frames, JSON text frames),
  hardened against hostile input.
- :mod:`protocol.errors`: error codes, close codes, :class:`ProtocolError`.
- :mod:`protocol.versions`: version negotiation.
- ``protocol/PROTOCOL.md``: the specification for implementers in any language.
"""

from protocol.codec import decode_client, decode_server, encode
from protocol.errors import ERROR_INFO, CloseCode, ErrorCode, ProtocolError
from protocol.versions import PROTOCOL_VERSIONS, choose_version

__all__ = [
    "ERROR_INFO",
    "PROTOCOL_VERSIONS",
    "CloseCode",
    "ErrorCode",
    "ProtocolError",
    "choose_version",
    "decode_client",
    "decode_server",
    "encode",
]
