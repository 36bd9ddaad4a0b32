"""Prometheus metrics of one server, in its own registry (several servers may share a process).

Served at ``/metrics`` on the game port, in the Prometheus text format, by the
official client library.
"""

from __future__ import annotations

import asyncio
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE_LATEST", "Metrics"]


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.connections = Gauge("arena_connections", "Open WebSocket connections", registry=r)
        self.connections_total = Counter(
            "arena_connections_opened", "WebSocket connections accepted", registry=r
        )
        self.sessions = Gauge("arena_sessions", "Logged-in sessions on this node", registry=r)
        self.rooms = Gauge("arena_rooms", "Rooms hosted by this node", registry=r)
        self.games_live = Gauge("arena_games_live", "Games in progress on this node", registry=r)
        self.games_started = Counter("arena_games_started", "Games started", ["game"], registry=r)
        self.games_finished = Counter(
            "arena_games_finished", "Games finished", ["game", "reason"], registry=r
        )
        self.moves = Counter("arena_moves", "Moves accepted", ["game"], registry=r)
        self.messages_in = Counter("arena_messages_in", "Client messages received", registry=r)
        self.messages_out = Counter("arena_messages_out", "Messages sent to clients", registry=r)
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

    def render(self) -> bytes:
        return generate_latest(self.registry)

    async def watch_loop_lag(self, interval: float = 0.5) -> None:
        """Sleep ``interval`` over and over; oversleeping is the loop's lag."""
        while True:
            start = time.perf_counter()
            await asyncio.sleep(interval)
            lag = max(0.0, time.perf_counter() - start - interval)
            self.loop_lag.set(lag)
            self.loop_lag_hist.observe(lag)
