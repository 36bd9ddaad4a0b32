"""Every protocol message in one import: both directions, their unions and type tables.

``ClientMessage`` and ``ServerMessage`` are pydantic discriminated unions on ``type``;
``RoomEvent`` is the subset of server messages that carry a room ``seq``.
"""

from protocol.client import *  # noqa: F403
from protocol.client import CLIENT_TYPES, ClientBase, ClientMessage
from protocol.common import *  # noqa: F403
from protocol.server import *  # noqa: F403
from protocol.server import (
    ROOM_EVENT_TYPES,
    SERVER_TYPES,
    RoomEvent,
    RoomEventBase,
    ServerBase,
    ServerMessage,
)

__all__ = [
    "CLIENT_TYPES",
    "ROOM_EVENT_TYPES",
    "SERVER_TYPES",
    "ClientBase",
    "ClientMessage",
    "RoomEvent",
    "RoomEventBase",
    "ServerBase",
    "ServerMessage",
]
