"""The token bucket (server/ratelimit.py), on a made-up clock."""

from server.ratelimit import TokenBucket


def test_burst_then_refill() -> None:
    now = [100.0]
    bucket = TokenBucket(burst=3, per_second=10, clock=lambda: now[0])
    assert [bucket.take() for _ in range(3)] == [None, None, None]
    assert bucket.take() == 100  # one token every 100 ms
    assert bucket.refused_in_row == 1
    now[0] += 0.05
    assert bucket.take() == 50
    now[0] += 0.05
    assert bucket.take() is None
    assert bucket.refused_in_row == 0
    now[0] += 100  # never more than the burst
    assert [bucket.take() for _ in range(4)][-1] is not None


def test_flooding_is_measured_by_refusals_not_forgiven_yet() -> None:
    """A flooder gets a frame through now and then (a token refills), yet its refusals
    add up; a client that waits for each token stays at none."""
    now = [0.0]
    flooder = TokenBucket(burst=2, per_second=10, clock=lambda: now[0])
    for _ in range(100):  # 1,000 frames a second: 1 in 100 finds a token
        for _ in range(10):
            flooder.take()
        now[0] += 0.01
    assert flooder.refused_in_row < 100  # the in-a-row count keeps starting again
    assert flooder.flood() > 500
    polite = TokenBucket(burst=2, per_second=10, clock=lambda: now[0])
    for _ in range(200):
        wait = polite.take()
        if wait is not None:
            now[0] += wait / 1000
    assert polite.flood() <= 1.0
