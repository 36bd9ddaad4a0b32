"""Engine programs over the line-based engine protocol (clients/ENGINE_PROTOCOL.md).

:mod:`clients.engines.protocol` is the sans-I/O codec (lines <-> values);
:mod:`clients.engines.process` drives one engine program as an asyncio subprocess.
Runners (``arena bot``, ``arena engine check``, the tournament runner) build on both.
"""
