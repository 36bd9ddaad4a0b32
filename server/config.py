"""The server's settings (``arena serve`` flags); shared by every server module."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Config:
    host: str = "127.0.0.1"
    port: int = 8765
    data_dir: str | None = None
    presence_url: str | None = None
    prefix: str = "arena:"
    node: str = ""
    #: seconds a dropped session keeps its seats before it loses by abandonment
    grace: float = 60.0
    max_frame_bytes: int = 64 * 1024
    rate_burst: int = 40
    rate_per_second: float = 20.0
    #: refusals (rate limited; each forgiven after one token's time) before the connection
    #: is closed as abuse (server.ratelimit.TokenBucket.flood)
    abuse_after: int = 200
    #: undecodable frames (bad_frame, bad_request, unknown_type) in a row before the
    #: connection is closed as abuse (PROTOCOL.md: 4004, a stream of malformed frames)
    malformed_after: int = 100
    #: messages queued for one connection before it counts as not reading and is dropped
    out_queue: int = 512
    #: bytes waiting for one connection (queued and in its socket buffer), at most; a
    #: client that lets more pile up is not reading and is dropped (4003)
    out_bytes: int = 1 << 20
    #: bytes of catch_up that cost the asker one message of its rate budget
    catch_up_bytes_per_token: int = 8192
    #: per client address: open connections, new handshakes (burst, per second), and
    #: the requests of its connections that have not logged in (server.address_budget)
    max_conns_per_address: int = 64
    handshake_burst: int = 32
    handshake_per_second: float = 8.0
    anon_rate_burst: int = 200
    anon_rate_per_second: float = 100.0
    #: a request that deals a costly game (a solo puzzle) costs so many tokens of its
    #: connection's rate, and one of its address's deal budget (burst, per second):
    #: server.costly_requests
    deal_cost: int = 10
    deal_burst: int = 6
    deal_per_second: float = 0.5
    #: networks the per-address limits do not apply to (local bots, benchmarks, a
    #: same-host proxy: all its clients share its address)
    address_limits_exempt: tuple[str, ...] = ("127.0.0.0/8", "::1/128")
    #: origins (scheme://host[:port]) whose pages may connect, besides this server's own
    #: host; "*" allows any (server.origin)
    allowed_origins: tuple[str, ...] = ()
    #: a separate listener for /metrics (0: a free port); None: the game port answers
    #: /metrics to loopback clients only (server.http)
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    #: kernel send buffer per connection (bytes); None keeps the OS's autotuning
    sndbuf: int | None = None
    ping_interval: float | None = 20.0
    ping_timeout: float | None = 20.0
    hello_timeout: float = 10.0
    max_rooms_per_player: int = 8
    #: games a bot may play at once, the operator's cap in place of max_rooms_per_player
    #: (0: a bot is limited as any player)
    bot_max_games: int = 0
    #: rating gap quick match accepts at first; it widens by this much per second waited
    match_gap: float = 150.0
    match_widen_per_s: float = 50.0
    lease_ttl: float = 15.0
    #: failed logins (wrong token) allowed per name, then one per this many seconds
    login_fails_per_name: int = 5
    login_fail_name_seconds: float = 10.0
    #: failed logins allowed per client address, then one per this many seconds
    login_fails_per_address: int = 20
    login_fail_address_seconds: float = 2.0
    #: folder of the web page's static files (served at /); None: no page
    web_dir: str | None = None
    #: the operators' secret for create/start/cancel_tournament; None: nobody may
    admin_token: str | None = None
    #: how often each tournament is looked at (pairings, results), seconds
    tournament_tick: float = 0.25
