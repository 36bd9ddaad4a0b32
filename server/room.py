"""A room: one asyncio task and one inbox, so its events happen one at a time.

Everything that changes a room goes through :meth:`Room.ask` (a request whose
answer or typed error comes back to the caller) or :meth:`Room.post` (timers,
disconnects). What the room *is* lives in :mod:`server.room_state` (sans I/O:
``decide`` a command into events, ``apply`` each); the actor adds the I/O, one
concern per module it is made of:

- :mod:`server.room_views`: its seats, lobby summary and state as shown;
- :mod:`server.room_log`: every event logged in presence (which gives it its
  ``seq``) *before* it is sent to anyone, and catch-ups from the log;
- :mod:`server.room_membership`: joins, seats, leaves, disconnects, the close;
- :mod:`server.room_game`: the game, its clock's deadline, ratings, records;
- :mod:`server.room_spectators`: the live spectator count told to the members.
"""

from __future__ import annotations

import asyncio
import contextlib
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

import structlog

from engine.match import Match
from protocol.errors import ErrorCode, ProtocolError
from protocol.outgoing import Outgoing
from protocol.timecontrol import engine_time_control
from server import room_state as rs
from server.host import Host
from server.presence import PresenceError
from server.room_calls import RoomCall
from server.room_game import RoomGame, now_ms
from server.room_log import RoomLog
from server.room_membership import RoomMembership
from server.room_spectators import RoomSpectators
from server.room_state import RoomSettings, RoomState, SeatState
from server.room_views import RoomViews
from server.tasks import checkpoint

log = structlog.get_logger("arena.room")

__all__ = [
    "Room",
    "RoomSettings",
    "SeatState",
    "engine_time_control",
    "now_ms",
    "room_meta",
]


def room_meta(room: Room, node: str) -> dict[str, Any]:
    """What presence keeps of a room besides its log: settings, owner, members' sessions."""
    names = {st.session: st.player["name"] for st in room.seats if st is not None}
    members = {}
    for sid, role in room.members.items():
        name = names.get(sid) or room.arena.session_name(sid)
        members[sid] = {"role": role, "name": name}
    return {**room.settings_dict, "node": node, "members": members}


class Room(RoomViews, RoomLog, RoomMembership, RoomGame, RoomSpectators):
    def __init__(
        self,
        arena: Host,
        settings: RoomSettings,
        labels: list[str] | None = None,
        state: RoomState | None = None,
    ) -> None:
        """``labels``: the seats' names if the caller knows them (else a trial deal);
        ``state``: the room as restored from its log (:func:`server.room_replay.restore`)."""
        self.arena = arena
        self.settings = settings
        self.id = settings.room_id
        self.state = state if state is not None else rs.initial(settings, labels)
        self._saved_meta: dict[str, Any] | None = None
        self._settings_dict: dict[str, Any] | None = None
        #: the forwarded request being run (server.cluster): logged with its events
        self.request_key: str | None = None
        self._inbox: asyncio.Queue[tuple[Callable[..., Awaitable[Any]], tuple, Any]] = (
            asyncio.Queue()
        )
        self._task: asyncio.Task[None] | None = None
        #: held by whoever runs the room's command: the actor, or an ``ask`` run at once
        #: in the caller's task when the room is idle (:meth:`ask`)
        self._turn = asyncio.Lock()
        self._resumed: asyncio.Task[None] | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._loop = asyncio.get_running_loop()
        self._moves_metric = arena.metrics.moves.labels(settings.game)
        #: events logged with the next one (``_log_and_send(hold=True)``): the event, its
        #: wire data and packed form as logged, the reply, the members to send it to
        self._held: list[tuple[Outgoing, dict[str, Any], bytes, tuple | None, list[str]]] = []
        #: the lobby entry's time control (settings never change): dumped once
        self._time_control_wire = settings.time_control.model_dump(mode="json")
        self.log = log.bind(room=self.id)

    # -- the state (server.room_state) ------------------------------------------------
    @property
    def seats(self) -> list[SeatState | None]:
        return self.state.seats

    @property
    def members(self) -> dict[str, str]:
        return self.state.members

    @property
    def match(self) -> Match | None:
        return self.state.match

    @property
    def labels(self) -> list[str]:
        return self.state.labels

    @property
    def game_number(self) -> int:
        return self.state.game_number

    @property
    def record_id(self) -> str | None:
        return self.state.record_id

    @property
    def rematch_offers(self) -> set[int]:
        return self.state.rematch_offers

    @property
    def started_players(self) -> list[dict[str, Any] | None]:
        return self.state.started_players

    @property
    def seq(self) -> int:
        return self.state.seq

    @seq.setter
    def seq(self, value: int) -> None:
        self.state.seq = value

    @property
    def closed(self) -> bool:
        return self.state.closed

    @closed.setter
    def closed(self, value: bool) -> None:
        self.state.closed = value

    @property
    def settings_dict(self) -> dict[str, Any]:
        """The settings as presence keeps them (they never change: dumped once)."""
        if self._settings_dict is None:
            self._settings_dict = self.settings.to_dict()
        return self._settings_dict

    def _apply(self, event: rs.Event) -> list[dict[str, Any]]:
        """Apply ``event`` to the state; what the match answered (game events)."""
        return rs.apply(self.state, event).outcome

    # -- the actor --------------------------------------------------------------------
    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"room-{self.id}")

    async def _run(self) -> None:
        try:
            await self._serve_inbox()
        finally:
            self.state.closed = True
            while not self._inbox.empty():  # nobody may wait forever on a closed room
                _, _, fut = self._inbox.get_nowait()
                if fut is not None and not fut.done():
                    fut.set_exception(ProtocolError(ErrorCode.UNKNOWN_ROOM, "the room closed"))

    async def _serve_inbox(self) -> None:
        while True:
            checkpoint()  # cancelled (only at exit) but went on: server.tasks
            fn, args, fut = await self._inbox.get()
            async with self._turn:  # after a command run at once (ask) has finished
                if fn is None:
                    return
                if self.closed:  # asked before an earlier message closed the room
                    if fut is not None and not fut.done():
                        fut.set_exception(ProtocolError(ErrorCode.UNKNOWN_ROOM, "the room closed"))
                    continue
                await self._command(fn, args, fut)

    async def _command(
        self, fn: Callable[..., Awaitable[Any]], args: tuple, fut: asyncio.Future[Any] | None
    ) -> None:
        """Run one command in the room's turn; its result or error goes to ``fut``."""
        try:
            try:
                result = await fn(*args)
            finally:
                if self._held:  # (an error after a held event): the turn logs it
                    await self._log_held()
        except Exception as exc:
            if not isinstance(exc, PresenceError):
                exc = await self.arena.cluster.check_refusal(self, exc)
            if isinstance(exc, PresenceError):
                self.arena.cluster.retire(self)  # restored from the log when asked again
            if fut is not None and not fut.done():
                fut.set_exception(exc)
            elif isinstance(exc, PresenceError):  # lease lost, store out: expected
                self.log.warning("room_task_refused", handler=_label(fn), error=str(exc))
            elif not isinstance(exc, ProtocolError):
                self.log.exception("room_task_failed", handler=_label(fn))
        else:
            if fut is not None and not fut.done():
                fut.set_result(result)

    def post(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Queue ``fn(*args)`` for the actor; nobody waits for it."""
        if not self.state.closed:
            self._inbox.put_nowait((fn, args, None))

    async def ask(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """Run ``fn(*args)`` in the room's turn and return its result (or raise its error).

        An idle room (nothing queued, no command running) runs it at once in the
        caller's task, without the queue and the actor's wake-up (issue 18): commands
        still run one at a time and in order (the turn's lock, and a queued command is
        never overtaken). A command that waits for I/O on the way (a store write) goes
        on in a task of its own, so the caller's cancellation cannot cut it short.
        """
        if self.state.closed:
            raise ProtocolError(ErrorCode.UNKNOWN_ROOM, "the room has closed")
        fut = self._loop.create_future()
        if self._inbox.empty() and not self._turn.locked():
            await self._turn.acquire()  # free: taken without a suspension (as a rule)
            if self.state.closed:
                self._turn.release()
                raise ProtocolError(ErrorCode.UNKNOWN_ROOM, "the room closed")
            command = self._command(fn, args, fut)
            try:
                waiting_on = command.send(None)
            except StopIteration:  # done without waiting: the common case
                self._turn.release()
                return fut.result()
            except BaseException:
                self._turn.release()
                raise
            task = self._loop.create_task(_resume(command, waiting_on, self._turn))
            self._resumed = task  # (a reference: the loop keeps only weak ones)
            return await asyncio.shield(fut)
        self._inbox.put_nowait((fn, args, fut))
        return await fut

    async def request(self, call: RoomCall, then: Callable[[], None] | None = None) -> Any:
        """The handle's request (:class:`server.room_calls.RoomHandle`): ``call`` run in
        the room's turn, ``then()`` after it in the same turn."""
        if then is None:
            return await self.ask(call.run, self)
        return await self.ask_then(then, call.run, self)

    def tell(self, call: RoomCall) -> None:
        """The handle's message: ``call`` queued for the actor, nobody waiting."""
        self.post(call.run, self)

    async def ask_then(
        self, then: Callable[[], None], fn: Callable[..., Awaitable[Any]], *args: Any
    ) -> Any:
        """:meth:`ask`, calling ``then()`` inside the actor once ``fn`` succeeded.

        A request's ``ack`` sent this way leaves in the same loop step as the events
        the request caused, so it shares their write (server.connection).
        """

        async def run() -> Any:
            result = await fn(*args)
            then()
            return result

        run.__qualname__ = _label(fn)
        return await self.ask(run)

    def halt(self) -> None:
        """Stop the actor now, the queued work dropped (a retired copy: server.cluster)."""
        self.state.closed = True
        self._cancel_deadline()
        self._inbox.put_nowait((None, (), None))  # type: ignore[arg-type]

    async def stop(self) -> None:
        """Stop the actor after the queued work (server shutdown); the log keeps the game."""
        self._cancel_deadline()
        if self._task is not None and not self._task.done():
            self._inbox.put_nowait((None, (), None))  # type: ignore[arg-type]
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.state.closed = True

    # -- helpers --------------------------------------------------------------------------
    @property
    def status(self) -> str:
        return self.state.status

    @property
    def playing(self) -> bool:
        return self.state.playing

    def seat_of(self, session: str) -> int | None:
        return self.state.seat_of(session)

    def _now(self) -> int:
        return int(self._loop.time() * 1000)


def _label(fn: Callable[..., Any]) -> str:
    """A command's name in the log (a room command's: ``Move.run``)."""
    return getattr(fn, "__qualname__", None) or repr(fn)


@types.coroutine
def _drive(command: Coroutine[Any, Any, None], waiting_on: Any) -> Generator[Any, Any, None]:
    """Go on running ``command``, which yielded ``waiting_on`` to the loop, as the body of a
    task (what ``await`` would do had the task started it)."""
    while True:
        try:
            sent = yield waiting_on
        except BaseException as exc:
            try:
                waiting_on = command.throw(exc)
            except StopIteration:
                return
        else:
            try:
                waiting_on = command.send(sent)
            except StopIteration:
                return


async def _resume(command: Coroutine[Any, Any, None], waiting_on: Any, turn: asyncio.Lock) -> None:
    try:
        await _drive(command, waiting_on)
    finally:
        turn.release()
