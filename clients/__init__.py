"""Client side: the async client library, terminal client, bot and tournament runners, CLI."""
