"""``list_records`` (server/record_list.py): finished games newest first, paged, a private
room's games only to their players. A real server on loopback, real clients."""

from __future__ import annotations

from typing import Any

import structlog.testing

from server import record_list


def stored(players: list[str], game: str = "collapsi", **extra: Any) -> dict[str, Any]:
    """A record as the server keeps one (server/room_game.py ``_finish``)."""
    data = {
        "game": game,
        "rules": "standard",
        "rules_version": "1",
        "variant": "base",
        "seed": 1,
        "setup": "x",
        "players": players,
        "moves": ["1", "2"],
        "result": {"winner": 0, "order": [0, 1], "reason": "no_moves", "scores": None},
        "options": {},
    }
    return {"game": game, "players": players, "data": data, "finished_at": 5, **extra}


async def finish(ann: Any, bob: Any, private: bool) -> tuple[str, str | None]:
    """ann and bob play a game that ann resigns; its record id and the room's invite."""
    state = await ann.create_room("collapsi", seat=0, private=private)
    if private:
        await bob.join(invite=state.invite)
    else:
        await bob.join(state.room)
    await bob.take_seat(state.room, 1)
    await ann.ready(state.room)
    await bob.ready(state.room)
    ev: Any = await ann.next(type="game_started", room=state.room)
    for _ in range(2):  # each moves once: a resign then counts (it is no abort)
        await (ann, bob)[ev.to_move].move(state.room, ev.legal_moves[0])
        ev = await ann.next(type="move_made", room=state.room)
    await ann.resign(state.room)
    over = await ann.next(type="game_over", room=state.room)
    return over.record, state.invite


async def test_finished_games_are_listed_newest_first_private_ones_to_their_players(
    arena: Any,
) -> None:
    await arena.start()
    ann, bob = await arena.client("ann"), await arena.client("bob")
    assert "list_records" in ann.welcome.features
    public, _ = await finish(ann, bob, private=False)
    private, invite = await finish(ann, bob, private=True)
    mine = await ann.list_records()
    assert [r.record for r in mine.records] == [private, public]
    assert mine.next_offset is None
    first = mine.records[1]
    assert (first.game, first.variant, first.players, first.moves) == (
        "collapsi",
        "base",
        ["ann", "bob"],
        2,
    )
    assert first.result is not None and first.result.winner == 1
    assert first.result.reason == "resign"
    assert [r.private for r in mine.records] == [True, False]
    eve, anonymous = await arena.client("eve"), await arena.client()
    assert [r.record for r in (await eve.list_records()).records] == [public]
    assert [r.record for r in (await anonymous.list_records()).records] == [public]
    assert [r.record for r in (await eve.list_records(player="ann")).records] == [public]
    assert [r.record for r in (await bob.list_records(player="bob")).records] == [private, public]
    assert (await ann.list_records(player="eve")).records == []
    assert (await ann.list_records(game="collecto")).records == []
    # the invite reads the record, but does not list it
    assert (await eve.get_record(private, invite=invite)).record == private


async def test_pages_follow_next_offset_to_the_end(arena: Any, monkeypatch: Any) -> None:
    a = await arena.start()
    for i in range(23):  # every third a private game of others
        extra = {"private": True, "invite_hash": None} if i % 3 == 0 else {}
        await a.records.save(f"g{i:02d}", stored(["cat", "dan"], **extra))
    eve = await arena.client("eve")
    seen, offset, pages = [], 0, 0
    while offset is not None:
        page = await eve.list_records(limit=5, offset=offset)
        assert len(page.records) <= 5
        seen += [r.record for r in page.records]
        offset, pages = page.next_offset, pages + 1
    assert seen == [f"g{i:02d}" for i in reversed(range(23)) if i % 3]
    assert pages == 4  # 15 in pages of 5, and a last, empty one: g00 is private
    cat = await arena.client("cat", token="cat")  # (its name's owner: reads them)
    assert len((await cat.list_records(limit=100)).records) == 23
    # a page of someone else's private games ends after SCAN_MAX stored records
    monkeypatch.setattr(record_list, "SCAN_MAX", 2)
    page = await eve.list_records(limit=5)
    assert [r.record for r in page.records] == ["g22"]
    assert page.next_offset == 2


async def test_a_record_that_does_not_fit_the_protocol_is_skipped_and_logged(
    arena: Any,
) -> None:
    a = await arena.start()
    await a.records.save("good", stored(["ann", "bob"]))
    await a.records.save("bad", stored(["ann", "bob"], game="Not A Game"))
    ann = await arena.client("ann")
    with structlog.testing.capture_logs() as logs:
        page = await ann.list_records()
    assert [r.record for r in page.records] == ["good"]
    assert [e["record"] for e in logs if e["event"] == "record_unlistable"] == ["bad"]
