"""Version negotiation: the client's ``hello`` lists versions, the server picks one."""

from __future__ import annotations

from collections.abc import Iterable

from protocol.errors import ErrorCode, ProtocolError

PROTOCOL_VERSIONS: tuple[int, ...] = (1,)
"""Protocol versions this package speaks, oldest first."""
CURRENT_VERSION = PROTOCOL_VERSIONS[-1]


def choose_version(
    client_versions: Iterable[int], server_versions: Iterable[int] = PROTOCOL_VERSIONS
) -> int:
    """The highest version both sides speak.

    Raises :class:`ProtocolError` ``unsupported_version`` (which closes the connection
    with 4001) listing the server's versions in ``details.versions`` when none is shared.
    """
    ours = sorted(set(server_versions))
    shared = set(client_versions) & set(ours)
    if not shared:
        raise ProtocolError(
            ErrorCode.UNSUPPORTED_VERSION,
            f"no shared protocol version; this server speaks {ours}",
            details={"versions": ours},
        )
    return max(shared)
