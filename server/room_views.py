"""What a room shows of itself: its seats, lobby summary and state, as models and as
wire data (mixed into :class:`server.room.Room`; reads ``self.state``, changes nothing
but the lobby entry)."""

from __future__ import annotations

from typing import Any

from engine.base import game_class
from protocol import messages as m
from protocol.fastwire import room_summary_wire, seat_wire


class RoomViews:
    """The read side of :class:`server.room.Room`."""

    def seat_infos(self) -> list[m.SeatInfo]:
        out = []
        for i, s in enumerate(self.state.seats):
            if s is None:
                out.append(m.SeatInfo(seat=i, label=self.state.labels[i]))
            else:
                out.append(
                    m.SeatInfo(
                        seat=i,
                        label=self.state.labels[i],
                        player=m.Player(**s.player),
                        ready=s.ready,
                        connected=s.connected,
                    )
                )
        return out

    def seat_wires(self) -> list[dict[str, Any]]:
        """``seat_infos()`` as wire data, built directly (lobby updates, game starts)."""
        labels = self.state.labels
        return [
            seat_wire(i, labels[i], None, False, True)
            if s is None
            else seat_wire(i, labels[i], s.player, s.ready, s.connected)
            for i, s in enumerate(self.state.seats)
        ]

    def spectator_count(self) -> int:
        return sum(1 for r in self.state.members.values() if r == "spectator")

    def clock(self) -> m.Clock | None:
        if self.state.match is None:
            return None
        clocks = self.state.match.clocks(self._now())
        if clocks is None:
            return None
        return m.Clock(remaining_ms=clocks, running=self.state.match.to_move())

    def summary(self) -> m.RoomSummary:
        s = self.settings
        return m.RoomSummary(
            room=self.id,
            game=s.game,
            rules=s.rules,
            variant=s.variant,
            seats=self.seat_infos(),
            time_control=s.time_control,
            rated=s.rated,
            status=self.status,  # type: ignore[arg-type]
            spectators=self.spectator_count(),
            created_at=s.created_at,
        )

    def summary_wire(self) -> dict[str, Any]:
        """Exactly ``to_wire(self.summary())``, without building and dumping models
        (:mod:`protocol.fastwire`)."""
        s = self.settings
        return room_summary_wire(
            room=self.id,
            game=s.game,
            rules=s.rules,
            variant=s.variant,
            seats=self.seat_wires(),
            time_control=self._time_control_wire,
            rated=s.rated,
            status=self.status,
            spectators=self.spectator_count(),
            created_at=s.created_at,
        )

    async def update_lobby(self) -> None:
        self.announce_spectators()  # (server.room_spectators: members see the count live)
        summary = self._lobby_summary()
        if summary is not None:
            await self.arena.presence.lobby.upsert(self.id, summary)

    def _lobby_summary(self) -> dict[str, Any] | None:
        """The room's lobby entry as it is now; None if the room has none (private, closed)."""
        if self.settings.private or self.state.closed:
            return None
        return self.summary_wire()

    def state_for(self, session: str | None, re: Any = None) -> m.RoomState:
        s = self.settings
        seat = None if session is None else self.seat_of(session)
        role = self.state.members.get(session or "", "spectator")
        fields: dict[str, Any] = {"rules_version": game_class(s.game).version_of(s.rules)}
        match = self.state.match
        if match is not None:
            g = match.game
            fields = {
                "rules_version": g.rules_version,
                "setup": g.setup(),
                "position": g.position(),
                "view": g.view(),
                "to_move": self.state.match.to_move(),
                "legal_moves": g.legal_moves() if self.playing else [],
                "history": list(g.history),
                "clock": self.clock(),
                "result": None if match.result is None else match.result.to_dict(),
                "record": self.state.record_id,
            }
        return m.RoomState(
            re=re,
            room=self.id,
            seq=self.state.seq,
            game=s.game,
            rules=s.rules,
            variant=s.variant,
            options=s.options,
            time_control=s.time_control,
            rated=s.rated,
            private=s.private,
            invite=s.invite if session in self.state.members and role == "player" else None,
            status=self.status,  # type: ignore[arg-type]
            seats=self.seat_infos(),
            spectators=self.spectator_count(),
            you=seat,
            role=role,  # type: ignore[arg-type]
            game_number=self.state.game_number,
            rematch=sorted(self.state.rematch_offers),
            **fields,
        )
