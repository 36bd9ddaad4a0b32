"""Tournaments hosted by the server (issue 17 part B).

A tournament is one JSON document in a store of its own (:mod:`.store`: SQLite beside
the presence database, Redis, or memory), changed only through
:meth:`.store.TournamentStore.update` (read, change, compare-and-set). Requests
(:mod:`.handlers`) change its entrants and flags; one node at a time, the holder of
its lease, directs it (:mod:`.director`): pairs players (:mod:`.pairing`), opens a
room per pairing (:mod:`.seating`) and reads each game's result from its record,
which the room saves before it announces ``game_over``: so a restart or the death of a
node loses no result. The standings are computed from the games (:mod:`.table`).
"""
