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
