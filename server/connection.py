"""One client connection: reads frames, answers in the encoding of its ``hello``.

Reading and writing are separate: whoever sends to this connection (a room
broadcasting a move) never waits for the network. Frames sent in one event-loop
step are written at the start of the next in one ``write`` (one ``send``
syscall, the largest cost of a frame), while the socket keeps up; past its
write buffer's high-water mark a writer task drains a bounded queue instead. A
client that does not read fills that queue and is disconnected (close code
4003); it never stalls a room.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from typing import Any

import structlog
from pydantic import BaseModel
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from protocol import messages as m
from protocol.codec import decode_client, decode_frame
from protocol.errors import CloseCode, ErrorCode, ProtocolError, is_error_code
from protocol.limits import MAX_SEQ, DecodeLimits
from protocol.outgoing import Outgoing
from protocol.session import Phase, admit
from server.catch_up import CatchUpStream
from server.host import Host
from server.login_throttle import peer_address
from server.ratelimit import TokenBucket
from server.tasks import checkpoint
from server.write_batches import WriteBatches

#: frames one connection handles before letting the others run (a burst arrives at once)
FAIR_SHARE = 8

log = structlog.get_logger("arena.conn")
_ids = itertools.count(1)


class Connection:
    def __init__(self, arena: Host, ws: ServerConnection) -> None:
        cfg = arena.config
        self.arena = arena
        self.ws = ws
        self.id = f"c{next(_ids)}"
        self.binary = True
        self.phase = Phase.AWAIT_HELLO
        self.session: str | None = None
        self.bucket = TokenBucket(cfg.rate_burst, cfg.rate_per_second)
        self.limits = DecodeLimits(max_frame_bytes=cfg.max_frame_bytes)
        #: messages for the writer task (or a catch-up to serve), each with what it
        #: waits for (output commit)
        self._out: asyncio.Queue[
            tuple[Outgoing | CatchUpStream | None, asyncio.Future[None] | None]
        ]
        self._out = asyncio.Queue(cfg.out_queue)
        self._max_out = cfg.out_queue
        self._max_bytes = cfg.out_bytes
        self._queued_bytes = 0  # bytes of the frames in _out
        self.address = peer_address(ws)
        #: frames of this loop step, written in one go at the next (see WriteBatches)
        self._batch: list[bytes | str] | None = None
        self._batches: WriteBatches = arena.write_batches
        self._writing = False  # the writer task holds a message it is sending
        self._transport = ws.transport
        self._high_water = ws.transport.get_write_buffer_limits()[1] or 32768
        self._messages_out = arena.metrics.messages_out
        self._writer: asyncio.Task[None] | None = None
        self.closing = False
        #: ``time.monotonic()`` of the last frame received: a peer heard from within the
        #: ping interval needs no ping to prove it is there (server.keepalive)
        self.heard_at = time.monotonic()
        #: the client closed the connection cleanly (close code 1000, sent first): it is
        #: leaving, not dropped, so its session ends at once (no grace period)
        self.clean_close = False
        self._closer: asyncio.Task[None] | None = None
        #: set once the connection is gone and its session has been told
        self.done = asyncio.Event()
        self.lobby = False  # subscribed to lobby events
        self._malformed_in_row = 0  # frames refused by the decoder since the last good one
        self._abused = False  # closed for abuse: read nothing more
        self.lobby_game: str | None = None
        self.log = log.bind(conn=self.id)

    # -- sending ------------------------------------------------------------------------
    def send(self, msg: BaseModel | Outgoing) -> None:
        """Send or queue a message; never blocks. A full queue means the client is not reading.

        When nothing is queued and the socket keeps up (its write buffer under the
        high-water mark), the frame joins this loop step's batch, written at the
        next step in one go (:meth:`flush`); otherwise it waits in the bounded
        queue, in order, for the writer task.
        """
        if self.closing:
            return
        out = msg if isinstance(msg, Outgoing) else Outgoing.of(msg)
        if out.type == "catch_up":  # costly to serve: charged to the asker by size
            self.bucket.charge(
                len(out.frame(self.binary)) / self.arena.config.catch_up_bytes_per_token
            )
        batch = self._batch
        if batch is not None:
            if len(batch) < self._max_out:
                batch.append(out.frame(self.binary))
                return
            # a full batch is written now: only frames the socket has not taken count
            # against the client (the queue below), not how many one step made
            self.flush()
        if (
            not self._writing
            and self._out.empty()
            and self._transport.get_write_buffer_size() < self._high_water
        ):
            self._batch = [out.frame(self.binary)]
            if batch is None:  # (a batch written early is still listed for this step)
                self._batches.add(self)
            return
        size = len(out.frame(self.binary))
        # bytes, not messages: what waits for this client (queued and in the socket's
        # buffer) stays under its budget, whatever the mix of frames (SECURITY.md)
        if self._queued_bytes + size + self._transport.get_write_buffer_size() <= self._max_bytes:
            try:
                self._out.put_nowait((out, self._batches.hold()))
                self._queued_bytes += size
                return
            except asyncio.QueueFull:
                pass
        self.arena.metrics.slow_disconnects.inc()
        self.log.warning(
            "slow_consumer_disconnected", queued=self._out.qsize(), bytes=self._queued_bytes
        )
        self.close(CloseCode.TOO_SLOW, "too slow: outgoing queue overflowed", abort=True)

    def take_batch(self) -> list[bytes | str] | None:
        """This step's frames, taken (for :class:`WriteBatches`)."""
        frames, self._batch = self._batch, None
        return frames

    def flush(self) -> None:
        """This step's frames go now (or after what they wait for: WriteBatches)."""
        frames, self._batch = self._batch, None
        if frames:
            self._batches.write([(self, frames)])

    def write_frames(self, frames: list[bytes | str]) -> None:
        """Write frames with one ``transport.write`` (frames made by the ``websockets``
        sans-I/O protocol, as its ``broadcast()`` does)."""
        protocol = self.ws.protocol
        if protocol.state is not State.OPEN:  # closing: as broadcast() skips
            return
        if self.binary:
            for frame in frames:
                protocol.send_binary(frame)  # type: ignore[arg-type]
        else:
            for frame in frames:
                protocol.send_text(frame.encode())  # type: ignore[union-attr]
        data = protocol.data_to_send()
        if len(data) == 1:
            self._transport.write(data[0])
        else:
            self._transport.write(b"".join(data))
        self._messages_out.inc(len(frames))

    def send_error(self, err: ProtocolError) -> None:
        self.arena.metrics.errors.labels(str(err.code)).inc()
        self.send(err.to_message())

    async def _write_loop(self) -> None:
        while True:
            checkpoint()
            out, wait = await self._out.get()
            if wait is not None:  # the changes it tells of are on disk first
                with contextlib.suppress(Exception):
                    await asyncio.shield(wait)
                self._batches.release()  # held frames before it go first
                if wait.cancelled() or wait.exception() is not None:
                    return  # the storage failed: release() closes the connection
            if out is None:
                return
            if isinstance(out, CatchUpStream):
                if not await self._stream(out):
                    return
                continue
            self._writing = True
            frame = out.frame(self.binary)
            self._queued_bytes -= len(frame)
            try:
                await self.ws.send(frame)
            except ConnectionClosed:
                return
            finally:
                self._writing = False
            self._messages_out.inc()

    def send_catch_up(self, stream: CatchUpStream) -> None:
        """Serve a catch-up (server.catch_up) in order with what is sent before and after."""
        if self.closing:
            return
        self.flush()  # this step's frames go first
        try:
            self._out.put_nowait((stream, self._batches.hold()))
        except asyncio.QueueFull:
            self.close(CloseCode.TOO_SLOW, "too slow: outgoing queue overflowed", abort=True)

    async def _stream(self, stream: CatchUpStream) -> bool:
        """Send a catch-up's pages, each once the socket took the last; False: closed."""
        per_token = self.arena.config.catch_up_bytes_per_token
        self._writing = True
        try:
            async for out in stream.pages():
                if self.closing:
                    return False
                frame = out.frame(self.binary)
                self.bucket.charge(len(frame) / per_token)  # costly: charged by size
                await self.ws.send(frame)
                self._messages_out.inc()
                stream.note(out)
        except ConnectionClosed:
            return False
        finally:
            self._writing = False
        return True

    def close(self, code: int, reason: str, abort: bool = False) -> None:
        """Close soon, from any context: after the queued messages, or at once (``abort``)."""
        if self.closing:
            return
        if abort:
            self._batch = None
        else:
            self.flush()  # this step's frames go before the close
        self.closing = True
        if abort:
            if self._writer is not None:
                self._writer.cancel()
            self._closer = asyncio.create_task(self._close_now(code, reason))
        else:
            with contextlib.suppress(asyncio.QueueFull):
                self._out.put_nowait((None, self._batches.hold()))
            self._closer = asyncio.create_task(self._close_after_writes(code, reason))

    async def _close_now(self, code: int, reason: str) -> None:
        # The peer is not reading, so a close handshake may never finish: give it a moment.
        try:
            async with asyncio.timeout(0.5):
                await self.ws.close(code, reason)
        except (TimeoutError, ConnectionClosed):
            pass
        finally:
            if self.ws.transport is not None:
                self.ws.transport.abort()

    async def _close_after_writes(self, code: int, reason: str) -> None:
        if self._writer is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                async with asyncio.timeout(2.0):
                    await asyncio.shield(self._writer)
        with contextlib.suppress(ConnectionClosed):
            await self.ws.close(code, reason)

    # -- reading ------------------------------------------------------------------------
    async def run(self) -> None:
        self._writer = asyncio.create_task(self._write_loop(), name=f"writer-{self.id}")
        cfg = self.arena.config
        try:
            try:
                async with asyncio.timeout(cfg.hello_timeout):
                    first = await self.ws.recv()
            except TimeoutError:
                self.send(m.Goodbye(reason="idle", message="no hello in time"))
                self.close(CloseCode.TIMEOUT, "no hello in time")
                return
            await self._handle_frame(first)
            handled = 0
            while True:
                checkpoint()  # (a cancellation lost in redis-py: server.tasks)
                frame = await self.ws.recv()
                self.heard_at = time.monotonic()
                if self.closing:
                    if self._abused:  # not a frame more: websockets stops reading soon
                        return
                    continue  # keep reading, so the peer's close frame is seen
                await self._handle_frame(frame)
                handled += 1
                if handled % FAIR_SHARE == 0:
                    # frames already received are handed over without a pause: a burst
                    # from one connection would hold the loop until all are answered
                    await asyncio.sleep(0)
        except ConnectionClosed as exc:
            self.clean_close = (
                exc.rcvd is not None and exc.rcvd.code == CloseCode.NORMAL and exc.rcvd_then_sent
            )
        finally:
            self.closing = True
            if self._closer is not None:  # let the goodbye and the close code go out
                with contextlib.suppress(asyncio.CancelledError, TimeoutError, ConnectionClosed):
                    async with asyncio.timeout(3.0):
                        await asyncio.shield(self._closer)
            if self._writer is not None:
                self._writer.cancel()

    def session_anonymous(self) -> bool:
        """Not logged in (before hello, or a session without a player)."""
        s = self.arena.sessions.get(self.session or "")
        return s is None or s.player is None

    def _abuse(self, why: str) -> None:
        """Close an abusive connection (4004) at once, reading nothing more from it: a
        flood would go on being read (and cost the server) until a close handshake
        the flooder never answers timed out."""
        # the goodbye alone, now: this step's frames are dropped, and held ones would
        # come after the close (it tells of nothing stored, so it need not wait)
        self._batch = None
        self.write_frames([Outgoing.of(m.Goodbye(reason="abuse", message=why)).frame(self.binary)])
        self._abused = True
        self.close(CloseCode.ABUSE, why, abort=True)

    def _refuse_frame(self, err: ProtocolError) -> None:
        """Answer a frame refused before dispatch; close when it must end the connection."""
        if self._malformed_in_row > self.arena.config.malformed_after:
            self._abuse("a stream of malformed frames")
            return
        self.send_error(err)
        # before hello, anything but a valid hello ends the connection (4000), whatever
        # its error: an undecodable frame (bad_frame) or an unknown type as well
        if self.phase is Phase.AWAIT_HELLO or not err.stays_open:
            self.close(err.close_code or CloseCode.PROTOCOL_ERROR, str(err.code))

    def _request_id(self, frame: Any) -> int | str | None:
        """The ``id`` of a frame we will not process, so the refusal can name it."""
        try:
            rid = decode_frame(frame, self.limits).get("id")
        except ProtocolError:
            return None
        if (type(rid) is int and 0 <= rid <= MAX_SEQ) or (type(rid) is str and 0 < len(rid) <= 64):
            return rid
        return None

    async def _handle_frame(self, frame: Any) -> None:
        self.arena.metrics.messages_in.inc()
        if self.phase is Phase.AWAIT_HELLO:
            self.binary = not isinstance(frame, str)
        retry = self.bucket.take()
        if retry is None and self.session_anonymous():  # shared by the address's anonymous
            retry = self.arena.addresses.anonymous_request(self.address)
        if retry is not None:
            if self.bucket.flood() > self.arena.config.abuse_after:
                self._abuse("sustained flooding")
                return
            self.send_error(
                ProtocolError(
                    ErrorCode.RATE_LIMITED,
                    "too many messages",
                    retry_after=retry,
                    re=self._request_id(frame),
                )
            )
            return
        try:
            msg = decode_client(frame, self.limits)
        except ProtocolError as err:
            self._malformed_in_row += 1
            self._refuse_frame(err)
            return
        self._malformed_in_row = 0
        try:
            admit(self.phase, msg.type, msg.id)
        except ProtocolError as err:
            self._refuse_frame(err)
            return
        try:
            await self.arena.dispatch(self, msg)
        except ProtocolError as err:
            if err.re is None:
                err.re = msg.id
            self.send_error(err)
            if not err.stays_open:
                self.close(err.close_code or CloseCode.PROTOCOL_ERROR, str(err.code))
        except Exception as exc:  # a bug must not kill the connection or the server
            code = getattr(exc, "code", None)
            if is_error_code(code):
                self.send_error(ProtocolError(code, str(exc), re=msg.id))
            else:
                self.log.exception("request_failed", type=msg.type)
                self.send_error(ProtocolError(ErrorCode.INTERNAL, "internal error", re=msg.id))
