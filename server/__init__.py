"""The authoritative game server: rooms, lobby, matchmaking, spectators, ratings.

How the pieces fit: ``server/README.md`` (a module table, and one move's path on
one node and across nodes). In short:

- :mod:`server.app`: :class:`~server.app.Arena`, the node's composition root (the
  parts: sessions, login, lobby, matchmaking, registry, room requests, standings;
  one table from message type to handler) and :func:`~server.app.running`, which
  serves it with ``websockets`` (``/healthz`` and ``/metrics`` on the same port).
- :mod:`server.connection`: one client connection; a reader that rate-limits
  and decodes, and a writer task that drains a bounded queue (a client that
  does not read is dropped, close code 4003).
- :mod:`server.room_state`, :mod:`server.room_commands`, :mod:`server.room_replay`:
  what a room is, sans I/O (``apply``, ``decide``, ``restore``); :mod:`server.room`:
  one actor (task + inbox) per room around it;
  every event is appended to the room's log in
  presence, which gives it its ``seq``, before anyone is sent it.
- :mod:`server.presence`: everything shared, one object composed of small ports
  (sessions, names, queues, ratings, records, node bus; the lobby, rooms and the
  room log on the store itself) in memory, SQLite or Redis (several nodes), pinned by
  ``tests/test_presence_contract.py``.
- :mod:`server.ratings` (Glicko-2), :mod:`server.records` (records in presence
  and as JSON files under ``--data-dir``), :mod:`server.metrics`,
  :mod:`server.logs`, :mod:`server.cli` (``arena serve``).

Where rooms live: :mod:`server.router` (one node) or, several nodes sharing
Redis, :mod:`server.cluster`, which forwards requests to the
node that owns a room (its lease) and relays events back, and takes over the
rooms of a dead node by restoring them from their logs; see its docstring and "Several
nodes" in ``protocol/PROTOCOL.md``. Quick match pairs players of any node and
invite codes are indexed in Redis; still per node: the "name is online" check
(``Arena.online_names``).
"""
