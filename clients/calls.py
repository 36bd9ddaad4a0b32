"""The requests that are one message and its reply, by area, for :class:`clients.client.Client`.

Why apart: the client's own work (the connection, resuming, the rooms' order of
events, replies) is one thing; the list of what may be asked of a server is another,
and grows with the protocol.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from protocol import messages as m


class ServerCalls:
    """Each method sends one request and returns its reply's content (raises its error)."""

    async def request(self, msg: BaseModel, timeout: float = 10.0) -> Any:
        """Send ``msg`` and return the reply (the client's)."""
        raise NotImplementedError

    # -- lobby ----------------------------------------------------------------------------
    async def list_rooms(self, game: str | None = None) -> list[m.RoomSummary]:
        return (await self.request(m.ListRooms(game=game))).rooms

    async def subscribe_lobby(self, game: str | None = None) -> list[m.RoomSummary]:
        return (await self.request(m.LobbySubscribe(game=game))).rooms

    async def create_room(
        self,
        game: str,
        *,
        rules: str | None = None,
        variant: str | None = None,
        seats: int | None = None,
        time_control: Any = None,
        rated: bool = False,
        private: bool = False,
        seat: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> m.RoomState:
        return await self.request(
            m.CreateRoom(
                game=game,
                rules=rules,
                variant=variant,
                seats=seats,
                time_control=time_control or m.Untimed(),
                rated=rated,
                private=private,
                seat=seat,
                options=options or {},
            )
        )

    async def join(
        self, room: str | None = None, *, invite: str | None = None, role: str = "player"
    ) -> m.RoomState:
        return await self.request(m.JoinRoom(room=room, invite=invite, role=role))

    async def watch(self, room: str, since_seq: int | None = None) -> Any:
        """Spectate; returns the ``room_state`` (or the first ``catch_up``)."""
        return await self.request(m.Watch(room=room, since_seq=since_seq))

    async def quick_match(
        self,
        game: str,
        *,
        rules: str | None = None,
        variant: str | None = None,
        time_control: Any = None,
        rated: bool = True,
        bots: bool = True,
    ) -> m.Queued:
        return await self.request(
            m.QuickMatch(
                game=game,
                rules=rules,
                variant=variant,
                time_control=time_control or m.Untimed(),
                rated=rated,
                bots=bots,
            )
        )

    async def cancel_quick_match(self) -> None:
        await self.request(m.CancelQuickMatch())

    async def challenge(
        self,
        name: str,
        game: str,
        *,
        rules: str | None = None,
        variant: str | None = None,
        time_control: Any = None,
        rated: bool = False,
    ) -> m.ChallengeSent:
        return await self.request(
            m.Challenge(
                name=name,
                game=game,
                rules=rules,
                variant=variant,
                time_control=time_control or m.Untimed(),
                rated=rated,
            )
        )

    async def accept_challenge(self, challenge: str) -> None:
        await self.request(m.AcceptChallenge(challenge=challenge))

    async def decline_challenge(self, challenge: str, reason: str | None = None) -> None:
        """Decline, saying why (``reason``: PROTOCOL.md, Challenges; none: ``generic``)."""
        await self.request(m.DeclineChallenge(challenge=challenge, reason=reason))

    async def cancel_challenge(self, challenge: str) -> None:
        await self.request(m.CancelChallenge(challenge=challenge))

    # -- room -----------------------------------------------------------------------------
    async def take_seat(self, room: str, seat: int | None = None) -> None:
        await self.request(m.TakeSeat(room=room, seat=seat))

    async def leave_seat(self, room: str) -> None:
        await self.request(m.LeaveSeat(room=room))

    async def ready(self, room: str, ready: bool = True) -> None:
        await self.request(m.Ready(room=room, ready=ready))

    async def resign(self, room: str) -> None:
        await self.request(m.Resign(room=room))

    async def abort_game(self, room: str) -> None:
        """Abort the game (no result, unrated): allowed until every player has moved."""
        await self.request(m.AbortGame(room=room))

    async def offer_rematch(self, room: str) -> None:
        await self.request(m.OfferRematch(room=room))

    async def accept_rematch(self, room: str) -> None:
        await self.request(m.AcceptRematch(room=room))

    async def chat(self, room: str, text: str) -> None:
        await self.request(m.Chat(room=room, text=text))

    # -- records and ratings -------------------------------------------------------------------
    async def get_record(self, record: str, invite: str | None = None) -> m.Record:
        """A finished game's record (a private room's: for its players, or with its invite)."""
        return await self.request(m.GetRecord(record=record, invite=invite))

    async def list_records(
        self,
        game: str | None = None,
        player: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> m.RecordList:
        """Finished games, newest first: one page (``next_offset`` asks for the next)."""
        return await self.request(
            m.ListRecords(game=game, player=player, limit=limit, offset=offset)
        )

    async def leaderboard(self, game: str, limit: int = 50) -> list[m.LeaderboardEntry]:
        return (await self.request(m.GetLeaderboard(game=game, limit=limit))).entries

    # -- tournaments ------------------------------------------------------------------------
    async def list_tournaments(self, game: str | None = None) -> list[m.TournamentSummary]:
        return (await self.request(m.ListTournaments(game=game))).tournaments

    async def join_tournament(self, tournament: str) -> None:
        await self.request(m.JoinTournament(tournament=tournament))

    async def leave_tournament(self, tournament: str) -> None:
        await self.request(m.LeaveTournament(tournament=tournament))

    async def standings(self, tournament: str) -> m.Standings:
        return await self.request(m.GetStandings(tournament=tournament))

    async def subscribe_tournament(self, tournament: str) -> m.Standings:
        """The standings now; later ones arrive as ``standings`` messages without ``re``."""
        return await self.request(m.TournamentSubscribe(tournament=tournament))
