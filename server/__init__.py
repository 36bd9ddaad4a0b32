"""The authoritative game server: rooms, lobby, matchmaking, spectators, ratings.

How the pieces fit (one node):

- :mod:`server.app`: :class:`~server.app.Arena` (sessions, lobby fan-out, quick
  match, dispatch of client messages) and :func:`~server.app.running`, which
  serves it with ``websockets`` (``/healthz`` and ``/metrics`` on the same port).
- :mod:`server.connection`: one client connection; a reader that rate-limits
  and decodes, and a writer task that drains a bounded queue (a client that
  does not read is dropped, close code 4003).
- :mod:`server.room`: one actor (task + inbox) per room around the sans-I/O
  :class:`engine.match.Match`; every event is appended to the room's log in
  presence, which gives it its ``seq``, before anyone is sent it.
- :mod:`server.presence`: everything shared, behind one async interface
  (memory now; Redis later), pinned by ``tests/test_presence_contract.py``.
- :mod:`server.ratings` (Glicko-2), :mod:`server.records` (records in presence
  and as JSON files under ``--data-dir``), :mod:`server.metrics`,
  :mod:`server.logs`, :mod:`server.cli` (``arena serve``).

Several nodes sharing Redis: :mod:`server.cluster` forwards requests to the
node that owns a room (its lease) and relays events back, and takes over the
rooms of a dead node by replaying their logs; see its docstring and "Several
nodes" in ``protocol/PROTOCOL.md``. Quick match pairs players of any node and
invite codes are indexed in Redis; still per node: the "name is online" check
(``Arena.online_names``).
"""
