"""A websocket connection that hands each message over as it is parsed.

Why: websockets' asyncio connection queues every message for :meth:`recv`, and a reading
task wakes for it on the loop's next turn. A program that routes every message from a
callback (``arena bot``: :attr:`clients.client.Client.listener`) then waits one turn
per message for nothing, and on a busy loop that turn waits behind everything else that
is ready. :class:`DirectConnection` calls ``on_message`` at once instead, when the
message is whole (one frame) and no earlier one waits in the queue, so the order is
kept; anything else (a fragmented message, or with no ``on_message``) takes the queue
as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.frames import Opcode


class DirectConnection(ClientConnection):
    """A :class:`ClientConnection` with ``on_message(data)`` (``bytes`` for a binary
    message, ``str`` for a text one), called from the protocol's data callback."""

    on_message: Callable[[str | bytes], None] | None = None

    def process_event(self, event: Any) -> None:
        deliver = self.on_message
        if (
            deliver is not None
            and event.fin
            and (event.opcode is Opcode.BINARY or event.opcode is Opcode.TEXT)
            and not len(self.recv_messages.frames)  # (nothing before it still queued)
        ):
            data = bytes(event.data)
            deliver(data if event.opcode is Opcode.BINARY else data.decode())
            return
        super().process_event(event)
