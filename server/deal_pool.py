"""Costly deals dealt ahead, off the event loop (issue 13: heavy work off the loop).

Dealing a solo puzzle searches for a solvable redraw (ruling 7): up to about a second
of CPU on 4x4. Done on the event loop, every game on the node would stall while it
runs. So a room that starts such a game takes a seed whose search a worker process
has already run (``Game.search_deal``), and whose answer this process has taken in
(``Game.remember_deal``): dealing it on the loop is then instant.

The trial deal that checks a new room of such a game (its seat count and labels) is a
search too: the worker makes it, once per kind (:meth:`DealPool.seating`).

A few seeds per kind of deal are kept ready (refilled one at a time by the worker).
A start that finds none waits for the worker. A new costly room is refused with
``unavailable`` (and ``retry_after``) before any room is made when none is ready and
``MAX_WAITING`` starts already wait, so a burst of puzzle requests costs the node one
worker process and a bounded queue, never its loop.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import secrets
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import structlog

from engine.base import game_class, new_game
from protocol.errors import ErrorCode, ProtocolError

log = structlog.get_logger("arena.deals")

#: seeds kept ready per kind of deal
READY = 3
#: kinds of deal kept ready at most (the oldest kind is dropped past it)
MAX_KINDS = 16
#: starts waiting for the worker at most; past it new costly rooms are refused
MAX_WAITING = 8
RETRY_AFTER_MS = 1000

DealArgs = tuple[str, str | None, str | None, int | None, dict[str, Any] | None]


def _search(args: DealArgs, seed: int) -> Any:
    """In the worker process: the costly part of the deal."""
    game, rules, variant, players, options = args
    return game_class(game).search_deal(rules, variant, players, options, seed)


def _seating(args: DealArgs) -> tuple[int, list[str]]:
    """In the worker process: seat count and labels, from a trial deal (a search)."""
    game, rules, variant, players, options = args
    probe = new_game(game, rules=rules, variant=variant, players=players, options=options)
    return probe.num_players, probe.seat_names()


class DealPool:
    def __init__(self) -> None:
        self._ready: dict[str, deque[int]] = {}
        self._filling: set[str] = set()
        self._executor: ProcessPoolExecutor | None = None
        self._waiting = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._seatings: dict[str, tuple[int, list[str]]] = {}

    @property
    def waiting(self) -> int:
        """Starts waiting for the worker now."""
        return self._waiting

    @staticmethod
    def costly(game: str, variant: str | None, options: dict[str, Any] | None) -> bool:
        return game_class(game).deal_is_costly(variant, options)

    def admit(self, *args: Any) -> None:
        """Refuse a new room of a costly deal while the worker is too far behind."""
        game, _rules, variant, _players, options = args
        if not self.costly(game, variant, options):
            return
        if self._ready.get(_key(args)) or self._waiting < MAX_WAITING:
            return
        raise ProtocolError(
            ErrorCode.UNAVAILABLE,
            "the server is busy dealing puzzles: try again shortly",
            retry_after=RETRY_AFTER_MS,
        )

    async def seating(
        self,
        game: str,
        rules: str | None,
        variant: str | None,
        players: int | None,
        options: dict[str, Any] | None,
    ) -> tuple[int, list[str]]:
        """Seat count and labels of a game whose deal is costly, from a trial deal made by
        the worker (once per kind: a new room's request is checked without a search on
        the loop); ``SetupError`` for a bad set-up."""
        args: DealArgs = (game, rules, variant, players, options or None)
        key = _key(args)
        known = self._seatings.get(key)
        if known is None:
            loop = asyncio.get_running_loop()
            try:
                known = await loop.run_in_executor(self._worker(), _seating, args)
            except BrokenProcessPool:  # the worker died: a new one
                self._executor = None
                known = await loop.run_in_executor(self._worker(), _seating, args)
            if len(self._seatings) < MAX_KINDS:
                self._seatings[key] = known
        return known[0], list(known[1])

    async def seed(
        self,
        game: str,
        rules: str | None,
        variant: str | None,
        players: int | None,
        options: dict[str, Any] | None,
    ) -> int:
        """A seed whose deal is quick to make here (a random one when every deal is)."""
        seed = secrets.randbelow(2**31)
        args: DealArgs = (game, rules, variant, players, options or None)
        if not self.costly(game, variant, options):
            return seed
        key = _key(args)
        ready = self._ready.get(key)
        if ready:
            seed = ready.popleft()
        else:
            self._waiting += 1
            try:
                await self._deal_ahead(args, seed)
            finally:
                self._waiting -= 1
        self._refill(key, args)
        return seed

    async def _deal_ahead(self, args: DealArgs, seed: int) -> None:
        loop = asyncio.get_running_loop()
        try:
            found = await loop.run_in_executor(self._worker(), _search, args, seed)
        except BrokenProcessPool:  # the worker died (killed, out of memory): a new one
            log.warning("deal_worker_lost")
            self._executor = None
            found = await loop.run_in_executor(self._worker(), _search, args, seed)
        game, rules, variant, players, options = args
        game_class(game).remember_deal(rules, variant, players, options, seed, found)

    def _worker(self) -> ProcessPoolExecutor:
        if self._executor is None:
            # spawn, not fork: the server has threads (the SQLite writer) and a loop
            self._executor = ProcessPoolExecutor(1, multiprocessing.get_context("spawn"))
        return self._executor

    def _refill(self, key: str, args: DealArgs) -> None:
        if key in self._filling:
            return
        if key not in self._ready and len(self._ready) >= MAX_KINDS:
            dropped = next(iter(self._ready))
            del self._ready[dropped]
        self._ready.setdefault(key, deque())
        self._filling.add(key)
        task = asyncio.create_task(self._fill(key, args), name=f"deal-pool {key}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _fill(self, key: str, args: DealArgs) -> None:
        try:
            while (ready := self._ready.get(key)) is not None and len(ready) < READY:
                seed = secrets.randbelow(2**31)
                await self._deal_ahead(args, seed)
                if (ready := self._ready.get(key)) is not None:
                    ready.append(seed)
        except (BrokenProcessPool, RuntimeError) as exc:  # (shut down meanwhile)
            log.info("deal_pool_stopped", reason=str(exc))
        finally:
            self._filling.discard(key)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        if self._executor is not None:  # (waits for a search under way: under a second)
            await asyncio.to_thread(self._executor.shutdown, True, cancel_futures=True)
            self._executor = None


def _key(args: DealArgs) -> str:
    return json.dumps(args, sort_keys=True)
