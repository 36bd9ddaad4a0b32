"""Identity: names that look alike are one claim, tokens are strong and not guessable
by trying, and a refused login does not say whether a name exists. End to end through
the client library on a real loopback server."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from conftest import strong

from clients.client import ArenaError, NameTakenError, RateLimitedError
from clients.token_store import token_for
from protocol.tokens import new_token, weak_token

LOOKALIKES = [
    "Victimname",
    "VICTIMNAME",
    "victimn\u0430me",  # Cyrillic a
    "\uff56ictimname",  # fullwidth v
    "victirnname",  # rn for m (TS #39)
    "  victimname ",
]
REFUSED = [
    "victimname\u200b",  # zero-width space
    "\ufeffvictimname",  # BOM
    "\u202evictimname",  # right-to-left override
    "\u200b",  # nothing visible at all
    "victim\x85name",  # C1 control (NEL)
    "victim\u0378name",  # unassigned
    "victim\U000f0000name",  # private use
    "victim\u3164name",  # Hangul filler
    "---",  # no letter or digit
]


async def test_lookalike_names_are_one_claim(arena: Any) -> None:
    await arena.start(login_fails_per_name=100, login_fails_per_address=100)
    owner = await arena.client("victimname", token="victim-secret")
    for name in LOOKALIKES:
        c = await arena.client()
        with pytest.raises(NameTakenError):
            await c.login(name, token=strong("attacker"))
        with pytest.raises(NameTakenError):
            await c.login(name)  # a guest neither
    await owner.logout()
    again = await arena.client()
    # the claim is the owner's, under any of its spellings; the name shown is normalized
    player = await again.login("  VICTIMNAME ", token=strong("victim-secret"))
    assert player.name == "VICTIMNAME"


async def test_invisible_bidi_control_and_unassigned_characters_are_refused(
    arena: Any,
) -> None:
    await arena.start()
    c = await arena.client()
    for name in REFUSED:
        with pytest.raises(ArenaError) as refused:
            await c.login(name)
        assert refused.value.code == "bad_request", name
    assert (await c.login("Zoë 鈴木")).name == "Zoë 鈴木"  # letters of any script are fine


async def test_weak_player_tokens_are_refused(arena: Any) -> None:
    await arena.start()
    c = await arena.client()
    for token in ("a", "secret", "aaaaaaaaaaaaaaaaaaaa", "abababababababab"):
        with pytest.raises(ArenaError) as refused:
            await c.login("ann", token=token)
        assert refused.value.code == "bad_request"
    token = new_token()
    assert weak_token(token) is None
    assert (await c.login("ann", token=token)).guest is False


async def test_a_refused_login_does_not_say_whether_the_name_exists(arena: Any) -> None:
    await arena.start()
    await arena.client("claimed", token="claimed-secret")
    on = await arena.client("online")
    await on.ping()
    answers = []
    for name, token in (("claimed", None), ("claimed", strong("x")), ("online", None)):
        c = await arena.client()
        with pytest.raises(NameTakenError) as refused:
            await c.login(name, token=token)
        answers.append(refused.value.message.replace(name, "NAME"))
    assert len(set(answers)) == 1, answers


async def test_failed_logins_are_throttled_per_name_and_per_address(arena: Any) -> None:
    await arena.start(login_fails_per_name=3, login_fails_per_address=6)
    for name in ("ann", "bob", "cat"):
        await (await arena.client(name, token=f"{name}-secret")).logout()
    guesser = await arena.client()
    for i in range(3):
        with pytest.raises(NameTakenError):
            await guesser.login("ann", token=strong(f"guess{i}"))
    with pytest.raises(RateLimitedError) as throttled:  # even the right token, for now
        await guesser.login("ANN", token=strong("ann-secret"))
    assert 0 < throttled.value.retry_after <= 10_000
    for i in range(3):  # another name: its own allowance...
        with pytest.raises(NameTakenError):
            await guesser.login("bob", token=strong(f"guess{i}"))
    with pytest.raises(RateLimitedError):  # ...until the address has spent its own
        await guesser.login("cat", token=strong("guess"))
    assert (await guesser.login("dan")).guest  # a guest login guesses no token: allowed


def test_the_token_store_makes_a_strong_token_once_and_keeps_it_private(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cfg" / "tokens.json"
    first = token_for(path, "ann")
    assert weak_token(first) is None
    assert token_for(path, "ann") == first  # kept
    assert token_for(path, "bob") != first
    assert json.loads(path.read_text())["tokens"]["ann"] == first
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
