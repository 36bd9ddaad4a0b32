"""server.node_messages: every node-to-node message survives encode, JSON and decode
unchanged, keeps its short keys on the wire, and anything else is a ValueError."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server import node_messages as nm
from server import room_calls as rc

text = st.text(min_size=1, max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)
errors = st.fixed_dictionaries(
    {"code": text, "message": st.text(max_size=20)}, optional={"retry_after": st.integers(0, 60)}
)
#: every room command, its fields drawn from what they may hold (any JSON for ``re``)
commands = st.one_of(
    st.builds(rc.Join, text, st.none() | st.dictionaries(text, json_values), text, json_values),
    st.builds(rc.Watch, text, st.none() | st.integers(0, 2**40), json_values),
    st.builds(rc.Leave, text, text),
    st.builds(rc.TakeSeat, text, st.dictionaries(text, json_values), st.none() | st.integers(0, 7)),
    st.builds(rc.LeaveSeat, text),
    st.builds(rc.SetReady, text, st.booleans()),
    st.builds(rc.Move, text, text, json_values),
    st.builds(rc.Resign, text),
    st.builds(rc.Abort, text),
    st.builds(rc.OfferRematch, text, st.booleans()),
    st.builds(rc.Chat, text, text, st.text(max_size=20)),
    st.builds(rc.SendState, text, json_values),
    st.builds(rc.ResumeMember, text, st.none() | st.integers(0, 2**40)),
    st.builds(rc.Disconnected, text),
    st.builds(rc.SessionGone, text),
    st.builds(rc.CatchUp, text, st.none() | st.integers(0, 2**40), json_values),
)
messages = st.one_of(
    st.builds(
        nm.Deliver, st.lists(text, min_size=1, max_size=4), st.dictionaries(text, json_values)
    ),
    st.builds(
        nm.Call,
        text,
        text,
        commands,
        st.none() | st.integers(1, 2**40),
        st.just("") | text,
        st.none() | text,
    ),
    st.builds(nm.Reply, st.integers(1, 2**40), json_values, st.none()),
    st.builds(nm.Reply, st.integers(1, 2**40), st.none(), errors),
    st.builds(nm.Forget, text, text),
    st.builds(nm.Drop, text),
    st.builds(
        nm.Rooms,
        text,
        st.lists(text, max_size=4),
        st.none() | st.floats(allow_nan=False, allow_infinity=False),
    ),
    st.builds(nm.LeaveQueue, text),
    st.builds(
        nm.Requeue,
        text,
        text,
        st.floats(allow_nan=False, allow_infinity=False),
        st.dictionaries(text, json_values),
    ),
    st.builds(nm.Resync, text),
    st.builds(nm.Attach, text, text),
    st.builds(
        nm.CatchUpFrom, text, text, st.integers(0, 2**40), st.integers(0, 2**40), json_values
    ),
)


@settings(max_examples=300, deadline=None)
@given(messages)
def test_a_message_comes_back_as_it_was_sent(msg: nm.NodeMessage) -> None:
    data = json.loads(json.dumps(nm.encode(msg), separators=(",", ":")))
    assert nm.decode(data) == msg


def test_the_wire_keeps_its_short_keys() -> None:
    """Nodes of the version before the typed messages read and write these keys."""
    assert nm.encode(nm.Deliver(["s1"], {"type": "ack"})) == {
        "k": "d",
        "s": ["s1"],
        "m": {"type": "ack"},
    }
    call = nm.Call("n1", "r1", rc.Move("s1", "a1"), 7, "n1.b.7", "ann")
    assert nm.encode(call) == {
        "k": "c",
        "from": "n1",
        "room": "r1",
        "fn": "move",
        "a": ["s1", "a1"],
        "id": 7,
        "q": "n1.b.7",
        "n": "ann",
    }
    assert nm.encode(nm.Call("n1", "r1", rc.Chat("s1", "ann", "hi"))) == {
        "k": "c",
        "from": "n1",
        "room": "r1",
        "fn": "chat",
        "a": ["s1", "ann", "hi"],
    }
    assert nm.encode(nm.Reply(3, ok=None)) == {"k": "r", "id": 3, "ok": None}
    assert nm.encode(nm.Reply(3, error={"code": "moved", "message": ""})) == {
        "k": "r",
        "id": 3,
        "e": {"code": "moved", "message": ""},
    }
    assert nm.encode(nm.Forget("s1", "r1")) == {"k": "forget", "s": "s1", "room": "r1"}
    assert nm.encode(nm.Drop("s1")) == {"k": "drop", "s": "s1"}
    assert nm.encode(nm.Rooms("s1", ["r1"])) == {"k": "rooms", "s": "s1", "rooms": ["r1"]}
    assert nm.encode(nm.Rooms("s1", ["r1"], 2.5)) == {
        "k": "rooms",
        "s": "s1",
        "rooms": ["r1"],
        "since": 2.5,
    }
    assert nm.encode(nm.LeaveQueue("s1")) == {"k": "leave_queue", "s": "s1"}
    assert nm.encode(nm.Requeue("s1", "q", 1500.0, {"since": 2.5})) == {
        "k": "requeue",
        "s": "s1",
        "q": "q",
        "r": 1500.0,
        "d": {"since": 2.5},
    }
    assert nm.encode(nm.Resync("n2")) == {"k": "resync", "from": "n2"}
    assert nm.encode(nm.Attach("r1", "n2")) == {"k": "attach", "room": "r1", "from": "n2"}
    assert nm.encode(nm.CatchUpFrom("s1", "r1", 3, 9, 4)) == {
        "k": "catch_up",
        "s": "s1",
        "room": "r1",
        "a": 3,
        "z": 9,
        "re": 4,
    }


@pytest.mark.parametrize(
    "data",
    [
        {"k": "x"},
        {},
        {"k": "d", "s": ["a"]},
        {"k": "c", "from": "n1", "room": "r1", "fn": "move"},
        {"k": "c", "from": "n1", "room": "r1", "fn": "no_such_command", "a": ["s1"]},
        {"k": "c", "from": "n1", "room": "r1", "fn": "move", "a": ["s1", "a1", None, 4]},
        {"k": "c", "from": "n1", "room": "r1", "fn": "__init__", "a": ["s1"]},
        {"k": "r"},
        {"k": "forget", "s": "s1"},
        [],
    ],
)
def test_anything_else_is_a_value_error(data: Any) -> None:
    with pytest.raises(ValueError):
        nm.decode(data)


def test_a_value_that_is_no_message_cannot_be_encoded() -> None:
    with pytest.raises(ValueError):
        nm.encode({"k": "d"})  # type: ignore[arg-type]
