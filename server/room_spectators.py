"""The live spectator count of a room (``spectators``, added within protocol v1), mixed
into :class:`server.room.Room`. Every member hears the count when it changes: the room
calls :meth:`RoomSpectators.announce_spectators` wherever its lobby entry is brought up
to date, which every change of membership does. The notice is not a logged room event
(no ``seq``), so a catch-up does not carry it: a member whose session resumed, or a
spectator that watched with ``since_seq``, is told the count after its catch-up."""

from __future__ import annotations

from typing import Any

from protocol.outgoing import Outgoing


class RoomSpectators:
    """See the module docstring."""

    #: the count last announced to the members (a room starts with none)
    _spectators_told = 0

    def _spectators_notice(self: Any) -> Outgoing:
        return Outgoing({"type": "spectators", "room": self.id, "count": self.spectator_count()})

    def announce_spectators(self: Any) -> None:
        """Tell every member the count, if it is not the one told last."""
        if self.spectator_count() == self._spectators_told or self.state.closed:
            return
        self._spectators_told = self.spectator_count()
        out = self._spectators_notice()
        for session in list(self.state.members):
            self.arena.deliver(session, out)

    def tell_spectators(self: Any, session: str) -> None:
        """Tell ``session`` the count (after its catch-up)."""
        self.arena.deliver(session, self._spectators_notice())
