"""Where ``arena bot``'s games come from besides challenges and tournaments: the
quick-match queue (``--quick-match``), a room of its own (``--open-room``), or a free
seat in someone else's waiting room (``--join``). Each takes the next game spec in
turn (:meth:`~clients.bot.runner.BotRunner.next_spec`); a game found is handed to the
runner's :meth:`~clients.bot.runner.BotRunner.start_game`.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from clients.client import ArenaError
from protocol.timecontrol import protocol_time_control

if TYPE_CHECKING:
    from clients.bot.runner import BotRunner


async def queue(r: BotRunner) -> None:
    """Enter the quick-match queue for the next game spec (``--quick-match``)."""
    game, variant, rules = r.next_spec(r.cfg.quick_match)
    if not r.tasks:  # (nothing else to show meanwhile: say what it waits for)
        spec = "/".join(part for part in (game, variant, rules) if part)
        kind = "rated" if r.cfg.rated else "casual"
        clock = f"clock {r.cfg.clock}"  # (quick match pairs only those asking the same)
        r.say(
            f"quick match: looking for a {kind} game of {spec} ({clock}), waiting for an opponent"
        )
    await r.client.quick_match(
        game,
        rules=rules,
        variant=variant,
        time_control=protocol_time_control(r.cfg.time_control()),
        rated=r.cfg.rated,
    )


async def open_room(r: BotRunner) -> None:
    """Open a room of the next game spec, sit in seat 0 and wait (``--open-room``)."""
    c = r.cfg
    game, variant, rules = r.next_spec(c.open_room)
    state = await r.client.create_room(
        game,
        rules=rules,
        variant=variant,
        seats=c.seats,
        time_control=protocol_time_control(c.time_control()),
        rated=c.rated,
        seat=0,
    )
    r.start_game(state.room, state)
    r.say(f"room {state.room}: open, waiting for players")
    await r.client.ready(state.room)


async def join_one(r: BotRunner) -> bool:
    """Sit down in a waiting room of the next game spec with a free seat, if any."""
    game, variant, rules = r.next_spec(r.cfg.join)
    me = r.cfg.name
    for room in await r.client.list_rooms(game):
        if (
            room.status != "waiting"
            or room.room in r.tasks
            or (variant is not None and room.variant != variant)
            or (rules is not None and room.rules != rules)
            or any(s.player is not None and s.player.name == me for s in room.seats)
            or all(s.player is not None for s in room.seats)
        ):
            continue
        try:
            state = await r.client.join(room.room)
            await r.client.take_seat(room.room)
        except ArenaError as exc:  # someone else was quicker: try another
            r.say(f"room {room.room}: cannot sit down ({exc.code})")
            with contextlib.suppress(ArenaError):
                await r.client.leave(room.room)
            r.early.pop(room.room, None)
            continue
        r.start_game(room.room, state)
        await r.client.ready(room.room)
        return True
    return False
