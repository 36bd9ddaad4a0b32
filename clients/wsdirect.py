"""A websocket connection that hands each message over as it is parsed.

Why: websockets' asyncio connection queues every message for :meth:`recv`, and a reading
task wakes for it on the loop's next turn. A program that routes every message from a
callback (``arena bot``: :attr:`clients.client.Client.listener`) then waits one turn
per message for nothing, and on a busy loop that turn waits behind everything else that
is ready. :class:`DirectConnection` calls ``on_message`` at once instead, when the
message is whole (one frame) and no earlier one waits in the queue, so the order is
kept; anything else (a fragmented message, or with no ``on_message``) takes the queue
as before. :meth:`DirectConnection.send_now` is the way out: a message written from a
callback, at once, where ``send`` is a coroutine that needs a task and its turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.frames import Opcode
from websockets.protocol import State

#: what the internals read here stand for when a websockets release lacks them: "busy",
#: so the plain path is taken (these are websockets 17's; the tests show a change)
_QUEUED = (None,)


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
            and not len(getattr(self.recv_messages, "frames", _QUEUED))  # nothing queued
        ):
            data = bytes(event.data)
            deliver(data if event.opcode is Opcode.BINARY else data.decode())
            return
        super().process_event(event)

    def send_now(self, data: bytes | str) -> bool:
        """Send one message (binary for ``bytes``, text for ``str``) at once, from a
        callback (no task, no turn of the loop); False, having sent nothing, when ``send``
        is needed: the connection is not open, another send is under way (a fragmented
        one), or the socket's buffer is not empty (``send`` waits for it to drain)."""
        if (
            self.protocol.state is not State.OPEN
            or getattr(self, "send_in_progress", _QUEUED) is not None
            or self.transport.get_write_buffer_size()
        ):
            return False
        if isinstance(data, str):
            self.protocol.send_text(data.encode())
        else:
            self.protocol.send_binary(data)
        self.send_data()
        return True
