"""protocol.outgoing: a reply made from a message has exactly the frames of its wire data."""

from __future__ import annotations

import json

import msgpack
import pytest

from protocol.outgoing import Outgoing


@pytest.mark.parametrize(
    ("size", "re"),
    [(n, re) for n in (1, 14, 15, 16, 200) for re in (7, 2**40, "req-é", 0)]
    + [(65_535, 9), (65_536, "r")],  # the map header grows from 3 to 5 bytes, or stays at 5
)
def test_a_reply_frame_is_the_message_with_re_added(size: int, re: object) -> None:
    wire = {"type": "move_made", "room": "r1", "seq": 3}
    wire.update({f"k{i}": [i, None, {"x": "ü"}] for i in range(size - len(wire))})
    base = Outgoing(dict(wire))
    base.frame(True), base.frame(False)  # the base is encoded first, as in a broadcast
    reply = base.replying(re)
    assert reply.wire == {**wire, "re": re} and base.wire == wire
    assert msgpack.unpackb(reply.frame(True), raw=False) == {**wire, "re": re}
    assert json.loads(reply.frame(False)) == {**wire, "re": re}
    assert reply.frame(True) == msgpack.packb({**wire, "re": re}, use_bin_type=True)
    assert msgpack.unpackb(base.frame(True), raw=False) == wire  # the base is unchanged
