"""The bot runner behind ``arena bot``: one bot, connected to a server, kept playing.

- :mod:`clients.bot.config`: what the bot plays (flags and a TOML file, one :class:`BotConfig`).
- :mod:`clients.bot.timing`: how long a move may take, from the server's clocks.
- :mod:`clients.bot.brains`: who chooses the moves: an engine program (the engine
  protocol), a built-in AI level, or a Python :class:`clients.bot.sdk.Bot`.
- :mod:`clients.bot.game_task`: one game in one room, from its start to game over.
- :mod:`clients.bot.runner`: the connection, reconnects, strikes, tournaments; it routes
  each room's messages to its game.
- :mod:`clients.bot.spares`: brains (engine processes) started ahead of their games.
- :mod:`clients.bot.seeking`: games from quick match, a room of its own, or others' rooms.
- :mod:`clients.bot.challenges`: the challenge it sends and those it answers.
- :mod:`clients.bot.retries`: how soon a challenge is sent again (also in ``--help``).
"""
