"""Prometheus metrics of one server, in its own registry (several servers may share a process).

Served at ``/metrics`` on the game port, in the Prometheus text format, by the
official client library. Besides the arena's own counters the registry holds the
library's process collector (CPU seconds, resident memory, open file descriptors:
a custom registry has none unless asked) and platform and GC collectors; figures
that are cheap to read off the arena's state (quick-match queues, spectators,
rooms by state) are read when scraped rather than kept up to date. Counters have
no ``_created`` series (``disable_created_metrics``): one line per counter less,
and nothing a dashboard uses.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter as Tally
from collections.abc import Iterator
from typing import Any

from prometheus_client import (
    GC_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

disable_created_metrics()

__all__ = ["CONTENT_TYPE_LATEST", "Metrics"]


#: Redis round trips: most take well under a millisecond on a LAN; the top buckets
#: show a struggling Redis before the 2 s timeout turns into ``unavailable``
REDIS_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.0)


class Batched:
    """A counter bumped on the per-message path as a plain int (``inc``), added to its
    Prometheus counter when scraped (:meth:`flush`): a lock-taking library call per
    message and per move was a few percent of a move's CPU (issue 18). ``labels()``
    gives the batched child for those label values (made once, then reused)."""

    __slots__ = ("_children", "_counter", "_flushing", "n")

    def __init__(self, counter: Counter, flushing: list[Batched]) -> None:
        self.n = 0
        self._counter = counter
        self._flushing = flushing
        self._children: dict[tuple[str, ...], Batched] = {}
        flushing.append(self)

    def inc(self, amount: int = 1) -> None:
        self.n += amount

    def labels(self, *values: str) -> Batched:
        child = self._children.get(values)
        if child is None:
            child = Batched(self._counter.labels(*values), self._flushing)
            self._children[values] = child
        return child

    def flush(self) -> None:
        if self.n:
            n, self.n = self.n, 0
            self._counter.inc(n)


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        ProcessCollector(registry=r)  # process_cpu_seconds_total, _resident_memory_bytes, _open_fds
        PlatformCollector(registry=r)
        if GC_COLLECTOR is not None:
            GCCollector(registry=r)
        self.node = Gauge("arena_node", "This node's name (always 1)", ["node"], registry=r)
        self.redis_seconds = Histogram(
            "arena_redis_seconds",
            "Redis round trips, seconds: a command (HGET, EVALSHA...) on the lean connection, "
            "or a presence operation (a pipeline or transaction) through redis-py",
            ["op"],
            buckets=REDIS_BUCKETS,
            registry=r,
        )
        self.redis_errors = Counter(
            "arena_redis_errors",
            "Redis failures (answered unavailable), by operation and error",
            ["op", "error"],
            registry=r,
        )
        self.takeovers = Counter(
            "arena_takeovers", "Rooms this node took over from a dead or lost owner", registry=r
        )
        self.takeover_seconds = Histogram(
            "arena_takeover_seconds",
            "Time one takeover took: lease, settings and log read, replay",
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
            registry=r,
        )
        self.connections = Gauge("arena_connections", "Open WebSocket connections", registry=r)
        self.connections_total = Counter(
            "arena_connections_opened", "WebSocket connections accepted", registry=r
        )
        self.sessions = Gauge("arena_sessions", "Logged-in sessions on this node", registry=r)
        self.rooms = Gauge("arena_rooms", "Rooms hosted by this node", registry=r)
        self.games_live = Gauge("arena_games_live", "Games in progress on this node", registry=r)
        #: counted on every move and message (and game): batched, added up when scraped
        self._batched: list[Batched] = []
        self.games_started = Batched(
            Counter("arena_games_started", "Games started", ["game"], registry=r), self._batched
        )
        self.games_finished = Batched(
            Counter("arena_games_finished", "Games finished", ["game", "reason"], registry=r),
            self._batched,
        )
        self.moves = Batched(
            Counter("arena_moves", "Moves accepted", ["game"], registry=r), self._batched
        )
        self.messages_in = Batched(
            Counter("arena_messages_in", "Client messages received", registry=r), self._batched
        )
        self.messages_out = Batched(
            Counter("arena_messages_out", "Messages sent to clients", registry=r), self._batched
        )
        self.errors = Counter("arena_errors", "Error replies sent, by code", ["code"], registry=r)
        self.slow_disconnects = Counter(
            "arena_slow_consumer_disconnects",
            "Connections closed because they did not read their messages",
            registry=r,
        )
        self.loop_lag = Gauge(
            "arena_event_loop_lag_seconds", "Latest measured event-loop lag", registry=r
        )
        self.loop_lag_hist = Histogram(
            "arena_event_loop_lag",
            "Event-loop lag samples, seconds",
            buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
            registry=r,
        )

    def observe_redis(self, op: str, started: float, error: str | None) -> None:
        """One Redis round trip that began at ``started`` (``time.perf_counter()``)."""
        self.redis_seconds.labels(op).observe(time.perf_counter() - started)
        if error is not None:
            self.redis_errors.labels(op, error).inc()

    def attach(self, arena: Any) -> None:
        """Read ``arena`` (a :class:`server.app.Arena`) when scraped, and time its
        presence's Redis round trips (a store with an ``observe`` hook)."""
        self.node.labels(arena.node).set(1)
        self.registry.register(ArenaCollector(arena))
        if hasattr(arena.presence, "observe"):
            arena.presence.observe = self.observe_redis

    def render(self) -> bytes:
        for counter in self._batched:
            counter.flush()
        return generate_latest(self.registry)

    async def watch_loop_lag(self, interval: float = 0.5) -> None:
        """Sleep ``interval`` over and over; oversleeping is the loop's lag."""
        while True:
            start = time.perf_counter()
            await asyncio.sleep(interval)
            lag = max(0.0, time.perf_counter() - start - interval)
            self.loop_lag.set(lag)
            self.loop_lag_hist.observe(lag)


class ArenaCollector(Collector):
    """Quick-match players waiting, spectators and rooms by state, on this node."""

    def __init__(self, arena: Any) -> None:
        self.arena = arena

    def collect(self) -> Iterator[GaugeMetricFamily]:
        arena = self.arena
        rooms = list(arena.rooms.values())
        queues = [s.queue for s in arena.sessions.values() if s.queue is not None]
        waiting = GaugeMetricFamily(
            "arena_quick_match_waiting",
            "Players of this node waiting in a quick-match queue, by queue "
            "(game/rules/variant/time control/rated); the queue's length is the sum over nodes",
            labels=["queue"],
        )
        for queue, n in sorted(Tally(queues).items()):
            waiting.add_metric([queue], n)
        yield waiting
        spectators = sum(r.spectator_count() for r in rooms)
        yield GaugeMetricFamily(
            "arena_spectators", "Spectators in rooms this node hosts", value=spectators
        )
        by_state = GaugeMetricFamily(
            "arena_node_rooms",
            "Rooms this node hosts (owns), by node and state: playing or not",
            labels=["node", "state"],
        )
        playing = sum(1 for r in rooms if r.playing)
        by_state.add_metric([arena.node, "playing"], playing)
        by_state.add_metric([arena.node, "other"], len(rooms) - playing)
        yield by_state
