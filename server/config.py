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
    #: refusals in a row (while rate limited) before the connection is closed as abuse
    abuse_after: int = 200
    #: undecodable frames (bad_frame, bad_request, unknown_type) in a row before the
    #: connection is closed as abuse (PROTOCOL.md: 4004, a stream of malformed frames)
    malformed_after: int = 100
    #: messages queued for one connection before it counts as not reading and is dropped
    out_queue: int = 512
    #: kernel send buffer per connection (bytes); None keeps the OS's autotuning
    sndbuf: int | None = None
    ping_interval: float | None = 20.0
    ping_timeout: float | None = 20.0
    hello_timeout: float = 10.0
    max_rooms_per_player: int = 8
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
