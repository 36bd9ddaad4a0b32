"""Redis behind Sentinel: the presence follows the primary through a failover.

``redis+sentinel://[[USER]:PASSWORD@]HOST:PORT[,HOST:PORT...]/SERVICE[/DB]`` names
the Sentinels to ask and the monitored service (``sentinel monitor SERVICE ...``);
the password is the Redis servers' (``?sentinel_password=`` when the Sentinels
want one too). Both of the presence's clients ask the Sentinels for the current
primary whenever they (re)connect: redis-py through its own Sentinel support
(:class:`redis.asyncio.sentinel.SentinelConnectionPool`), the lean connection of
:mod:`server.presence.resp` through :meth:`Locator.primary`. While the primary is
down and not yet replaced, requests fail as any Redis outage does
(``unavailable``); once a replica is promoted, the next connection goes to it.

What a failover can lose: Redis replicates asynchronously, so a write the old
primary acknowledged but had not yet sent to the replica that is promoted is gone
(on a LAN the lag is well under a millisecond; ``INFO replication`` shows it).
Moves acknowledged before the replica had them are the only ones at risk; see
the README ("Redis Sentinel").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.backoff import NoBackoff

SCHEME = "redis+sentinel://"


@dataclass(frozen=True)
class SentinelUrl:
    sentinels: list[tuple[str, int]]
    service: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_password: str | None = None

    def redis_url(self) -> str:
        """A ``redis://`` URL carrying the servers' credentials and db (its host is a
        placeholder: :class:`Locator` supplies the primary's address)."""
        auth = ""
        if self.password is not None:
            auth = f"{quote(self.username or '', safe='')}:{quote(self.password, safe='')}@"
        return f"redis://{auth}sentinel-primary:6379/{self.db}"


def parse(url: str) -> SentinelUrl:
    """Read a ``redis+sentinel://`` URL; :class:`ValueError` says what is wrong."""
    if not url.startswith(SCHEME):
        raise ValueError(f"not a Sentinel URL: {url!r}")
    parts = urlsplit(url)
    auth, _, hosts = parts.netloc.rpartition("@")
    user, _, password = auth.partition(":") if auth else ("", "", "")
    sentinels = []
    for item in hosts.split(","):
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"{url!r}: each Sentinel is HOST:PORT, not {item!r}")
        sentinels.append((host.strip("[]"), int(port)))
    path = [p for p in parts.path.split("/") if p]
    if not path or len(path) > 2 or (len(path) == 2 and not path[1].isdigit()):
        raise ValueError(f"{url!r}: the path is /SERVICE or /SERVICE/DB")
    query = parse_qs(parts.query)
    return SentinelUrl(
        sentinels=sentinels,
        service=unquote(path[0]),
        db=int(path[1]) if len(path) == 2 else 0,
        username=unquote(user) or None,
        password=unquote(password) if auth else None,
        sentinel_password=query.get("sentinel_password", [None])[0],
    )


class Locator:
    """Asks the Sentinels where the primary is (redis-py's discovery, which skips a
    primary the Sentinels see as down)."""

    def __init__(self, config: SentinelUrl, socket_timeout: float, connect_timeout: float) -> None:
        self.config = config
        sentinel_kwargs: dict[str, Any] = {
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": connect_timeout,
            # a Sentinel that does not answer is skipped at once: the next one is asked
            "retry": Retry(NoBackoff(), 0),
        }
        if config.sentinel_password is not None:
            sentinel_kwargs["password"] = config.sentinel_password
        self.sentinel = Sentinel(config.sentinels, sentinel_kwargs=sentinel_kwargs)

    async def primary(self) -> tuple[str, int]:
        host, port = await self.sentinel.discover_master(self.config.service)
        return str(host), int(port)

    def pool(self, **kwargs: Any) -> SentinelConnectionPool:
        """A redis-py pool whose connections go to the current primary."""
        c = self.config
        return SentinelConnectionPool(
            c.service,
            self.sentinel,
            db=c.db,
            username=c.username,
            password=c.password,
            **kwargs,
        )

    async def close(self) -> None:
        for client in self.sentinel.sentinels:
            await client.aclose()
