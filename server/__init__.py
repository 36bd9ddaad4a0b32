"""The authoritative game server: rooms, lobby, matchmaking, spectators, ratings."""
