"""One or more example of every message, with realistic values.

They feed the golden vectors (``protocol/vectors/v1.json``), the round-trip tests and
the message reference in ``PROTOCOL.md``. The game data is a real Collapsi deal
(standard rules, seed 7) so the examples read like the worked example game.
"""

from __future__ import annotations

from protocol import client as c
from protocol import server as s
from protocol.common import (
    Clock,
    Fischer,
    GameInfo,
    GameRecordData,
    GameResult,
    LeaderboardEntry,
    Limits,
    PerMove,
    Player,
    Rate,
    RatingChange,
    RecordSummary,
    RoomCursor,
    RoomSummary,
    SeatInfo,
    ServerInfo,
    StandingRow,
    TournamentGame,
    TournamentSummary,
    Untimed,
)

ANN = Player(name="ann", guest=False, bot=False, rating=1500.0)
# Ratings are per game: logged_in and resumed name no game, so the reference server sends none.
ANN_LOGIN = Player(name="ann", guest=False, bot=False)
BOT = Player(name="kestrel-bot", guest=False, bot=True, rating=1623.5)
GUEST = Player(name="guest-4711", guest=True)
FISCHER = Fischer(base_ms=180_000, increment_ms=2_000)
SETUP = "141222J3331J4213"
AUTUMN = TournamentSummary(
    tournament="t-autumn",
    name="Autumn Collapsi round robin",
    game="collapsi",
    variant="base",
    format="round_robin",
    status="running",
    players=3,
    max_players=8,
    time_control=FISCHER,
    starts_at=1_795_100_000_000,
    rules="standard",
    rated=True,
    rounds=1,
    round=2,
)
START = "1412/22J3/331J/4213 6,11 0"
SEATS_WAITING = [
    SeatInfo(seat=0, label="red", player=ANN, ready=False),
    SeatInfo(seat=1, label="blue", player=None),
]
# A game in progress: starting a game clears every ready flag (the server sends no ready_changed).
SEATS_PLAYING = [
    SeatInfo(seat=0, label="red", player=ANN, ready=False),
    SeatInfo(seat=1, label="blue", player=BOT, ready=False),
]
VIEW_START = {
    "game": "collapsi",
    "width": 4,
    "height": 4,
    "cards": ["1", "4", "1", "2", "2", "2", "J", "3", "3", "3", "1", "J", "4", "2", "1", "3"],
    "collapsed": [],
    "pawns": [6, 11],
    "to_move": 0,
}
VIEW_AFTER_2 = {**VIEW_START, "collapsed": [6], "pawns": [2, 11], "to_move": 1}
RESULT = GameResult(winner=1, order=[1, 0], reason="no_moves", scores=None)
SUMMARY = RoomSummary(
    room="r-8f3k2",
    game="collapsi",
    rules="standard",
    variant="base",
    seats=SEATS_WAITING,
    time_control=FISCHER,
    rated=True,
    status="waiting",
    spectators=0,
    created_at=1_795_000_000_000,
)


def client_examples() -> list[c.ClientBase]:
    """At least one example of every client message type."""
    return [
        c.Hello(id=1, versions=[1], software="arena-tui/0.1"),
        c.Login(id=2, name="ann", token="s3cret-player-token", bot=False),
        c.Login(id=2, name="guest-4711"),
        c.Login(id="b1", name="kestrel-bot", token="kestrel-bot-token-9f2c", bot=True),
        c.Resume(id=1, token="rt_5Jx9vQe2LrT0", rooms=[RoomCursor(room="r-8f3k2", seq=12)]),
        c.Logout(id=99),
        c.Ping(id=50),
        c.ListRooms(id=3, game="collapsi"),
        c.LobbySubscribe(id=4),
        c.LobbyUnsubscribe(id=5),
        c.CreateRoom(
            id=6,
            game="collapsi",
            rules="standard",
            variant="base",
            seats=2,
            time_control=FISCHER,
            rated=True,
            private=False,
            seat=0,
        ),
        c.CreateRoom(
            id=6,
            game="collapsi",
            variant="big-board+shifting",
            seats=3,
            time_control=PerMove(ms=30_000),
            private=True,
        ),
        c.CreateRoom(
            id=6,
            game="collapsi",
            variant="big-board",
            options={"elimination": True},
            seats=4,
            time_control=Untimed(),
        ),
        c.CreateRoom(id=6, game="collecto", time_control=Untimed()),
        c.JoinRoom(id=7, room="r-8f3k2", role="player"),
        c.JoinRoom(id=7, invite="K7QX-93TA"),
        c.JoinRoom(id=7, room="r-8f3k2", role="spectator"),
        c.LeaveRoom(id=8, room="r-8f3k2"),
        c.QuickMatch(id=9, game="collapsi", variant="base", time_control=FISCHER, rated=True),
        c.QuickMatch(id=9, game="collapsi", rated=False, bots=False),
        c.CancelQuickMatch(id=10),
        c.Challenge(
            id=40, name="kestrel-bot", game="collapsi", variant="base", time_control=FISCHER
        ),
        c.AcceptChallenge(id=41, challenge="c3f9a1b2c4d5e"),
        c.DeclineChallenge(id=41, challenge="c3f9a1b2c4d5e"),
        c.DeclineChallenge(id=41, challenge="c3f9a1b2c4d5e", reason="game"),
        c.CancelChallenge(id=42, challenge="c3f9a1b2c4d5e"),
        c.TakeSeat(id=11, room="r-8f3k2", seat=1),
        c.LeaveSeat(id=12, room="r-8f3k2"),
        c.Ready(id=13, room="r-8f3k2", ready=True),
        c.MakeMove(id=14, room="r-8f3k2", move="2"),
        c.Resign(id=15, room="r-8f3k2"),
        c.OfferRematch(id=16, room="r-8f3k2"),
        c.AcceptRematch(id=17, room="r-8f3k2"),
        c.Chat(id=18, room="r-8f3k2", text="good game! \u00e9\u00e8 \u2654"),
        c.Watch(id=19, room="r-8f3k2"),
        c.Watch(id=19, room="r-8f3k2", since_seq=12),
        c.GetRecord(id=20, record="g-20261121-0042"),
        c.GetLeaderboard(id=21, game="collapsi", limit=10, offset=0),
        c.ListRecords(id=33, game="collapsi", player="ann", limit=20, offset=0),
        c.ListTournaments(id=22, game="collapsi"),
        c.JoinTournament(id=23, tournament="t-autumn"),
        c.LeaveTournament(id=24, tournament="t-autumn"),
        c.GetStandings(id=25, tournament="t-autumn"),
        c.AbortGame(id=26, room="r-8f3k2"),
        c.TournamentSubscribe(id=27, tournament="t-autumn"),
        c.TournamentUnsubscribe(id=28, tournament="t-autumn"),
        c.CreateTournament(
            id=29,
            admin_token="op-7Qm2xV9kLp4sW8rT",
            name="Autumn Collapsi round robin",
            game="collapsi",
            time_control=FISCHER,
            rated=True,
            format="round_robin",
            starts_at=1_795_100_000_000,
            max_players=8,
        ),
        c.CreateTournament(
            id=30,
            admin_token="op-7Qm2xV9kLp4sW8rT",
            name="Friday blitz arena",
            game="collapsi",
            time_control=Fischer(base_ms=60_000, increment_ms=1_000),
            format="arena",
            duration_ms=3_600_000,
        ),
        c.StartTournament(id=31, admin_token="op-7Qm2xV9kLp4sW8rT", tournament="t-autumn"),
        c.CancelTournament(id=32, admin_token="op-7Qm2xV9kLp4sW8rT", tournament="t-autumn"),
    ]


def server_examples() -> list[s.ServerBase]:
    """At least one example of every server message type."""
    room = "r-8f3k2"
    clock_start = Clock(remaining_ms=[180_000, 180_000], running=0)
    clock_after = Clock(remaining_ms=[176_400, 180_000], running=1)
    return [
        s.Welcome(
            re=1,
            version=1,
            server=ServerInfo(name="Collapsi Arena", software="collapsi-arena/0.1.0", node="n1"),
            session="s-51c0e2",
            resume_token="rt_5Jx9vQe2LrT0",
            limits=Limits(
                max_frame_bytes=65_536,
                rate=Rate(burst=20, per_second=10.0),
                max_rooms_per_player=8,
                name_max=32,
                chat_max=500,
                resume_grace_ms=60_000,
                ping_interval_ms=20_000,
            ),
            games=[
                GameInfo(
                    game="collapsi",
                    rule_sets=["standard", "classic"],
                    variants=["base", "big-board", "shifting", "players-choice", "solo", "custom"],
                    min_players=1,
                    max_players=4,
                ),
                GameInfo(
                    game="collecto",
                    rule_sets=["standard"],
                    variants=["base"],
                    min_players=2,
                    max_players=2,
                ),
            ],
            features=[],
        ),
        s.LoggedIn(re=2, player=ANN_LOGIN),
        s.LoggedIn(re=2, player=GUEST),
        s.LoggedIn(
            re=2,
            player=ANN_LOGIN,
            session="s-51c0e2",
            resume_token="rt_5Jx9vQe2LrT0",
            rooms=[room],
        ),
        s.Resumed(
            re=1,
            player=ANN_LOGIN,
            session="s-51c0e2",
            resume_token="rt_Qm83LpZ0aa1c",
            rooms=[room],
        ),
        s.Ack(re=13),
        s.Pong(re=50),
        s.Goodbye(reason="shutdown", message="server restarting", reconnect_after_ms=5_000),
        s.Error(re=14, code="not_your_turn", message="blue is to move"),
        s.Error(re=30, code="rate_limited", message="slow down", retry_after=250, details=None),
        s.Error(
            code="unsupported_version",
            message="no shared protocol version; this server speaks [1]",
            details={"versions": [1]},
        ),
        s.RoomList(re=3, rooms=[SUMMARY], truncated=False),
        s.RoomAdded(summary=SUMMARY),
        s.RoomUpdated(
            summary=SUMMARY.model_copy(update={"seats": SEATS_PLAYING, "status": "playing"})
        ),
        s.RoomRemoved(room=room),
        s.Queued(
            re=9,
            game="collapsi",
            rules="standard",
            variant="base",
            time_control=FISCHER,
            waiting=3,
        ),
        s.ChallengeSent(re=40, challenge="c3f9a1b2c4d5e", name="kestrel-bot"),
        s.Challenged(
            challenge="c3f9a1b2c4d5e",
            player=ANN,
            game="collapsi",
            rules="standard",
            variant="base",
            time_control=FISCHER,
            rated=False,
        ),
        s.ChallengeEnded(challenge="c3f9a1b2c4d5e", reason="declined"),
        s.ChallengeEnded(challenge="c3f9a1b2c4d5e", reason="declined", decline_reason="game"),
        s.Matched(room=room, seat=1),
        s.Matched(room="r-5c1d9", seat=0, tournament="t-autumn", round=2),
        s.Matched(room="r-2e7a4", seat=1, challenge="c3f9a1b2c4d5e"),
        s.RoomState(
            re=6,
            room=room,
            seq=2,
            game="collapsi",
            rules="standard",
            rules_version="1.3.1",
            variant="base",
            options={},
            time_control=FISCHER,
            rated=True,
            private=False,
            status="waiting",
            seats=SEATS_WAITING,
            spectators=0,
            you=0,
            role="player",
        ),
        s.RoomState(
            re=19,
            room=room,
            seq=7,
            game="collapsi",
            rules="standard",
            rules_version="1.3.1",
            variant="base",
            time_control=FISCHER,
            rated=True,
            private=False,
            status="playing",
            seats=SEATS_PLAYING,
            spectators=1,
            role="spectator",
            game_number=1,
            setup=SETUP,
            position="1412/22j3/331J/4213 2,11 1",
            view=VIEW_AFTER_2,
            to_move=1,
            legal_moves=["7", "8", "10", "15"],
            history=["2"],
            clock=clock_after,
        ),
        s.CatchUp(
            re=19,
            room=room,
            events=[
                s.ChatMessage(room=room, seq=13, name="ann", text="gl hf"),
                s.MoveMade(
                    room=room,
                    seq=14,
                    ply=1,
                    seat=0,
                    move="2",
                    position="1412/22j3/331J/4213 2,11 1",
                    view=VIEW_AFTER_2,
                    to_move=1,
                    legal_moves=["7", "8", "10", "15"],
                    clock=clock_after,
                ),
            ],
            more=False,
        ),
        s.Spectators(room=room, count=2),
        s.PlayerJoined(room=room, seq=1, player=BOT),
        s.PlayerLeft(room=room, seq=30, name="kestrel-bot"),
        s.PlayerDisconnected(room=room, seq=15, name="ann", seat=0, grace_ms=60_000),
        s.PlayerReconnected(room=room, seq=16, name="ann", seat=0),
        s.SeatTaken(room=room, seq=2, seat=1, player=BOT),
        s.SeatFreed(room=room, seq=3, seat=1, name="kestrel-bot"),
        s.ReadyChanged(room=room, seq=4, seat=0, ready=True),
        s.GameStarted(
            room=room,
            seq=6,
            game_number=1,
            seats=SEATS_PLAYING,
            setup=SETUP,
            position=START,
            view=VIEW_START,
            to_move=0,
            legal_moves=["2", "5", "7", "10"],
            clock=clock_start,
        ),
        s.MoveMade(
            room=room,
            seq=7,
            ply=1,
            seat=0,
            move="2",
            position="1412/22j3/331J/4213 2,11 1",
            view=VIEW_AFTER_2,
            to_move=1,
            legal_moves=["7", "8", "10", "15"],
            clock=clock_after,
        ),
        # a 3-player Big Board game (seed 7): green, to move after two moves, resigns
        s.PlayerEliminated(
            room="r-3bb7q",
            seq=9,
            seat=2,
            reason="resign",
            ply=2,
            position="132431/34j12j/2Jj442/212234/433131/314241 2,5,x1 0",
            view={
                "game": "collapsi",
                "width": 6,
                "height": 6,
                "collapsed": [8, 11, 14],
                "pawns": [2, 5, None],
                "eliminated": [2],
                "to_move": 0,
            },
            to_move=0,
            legal_moves=["0", "4", "7", "9", "26", "31", "33"],
            clock=Clock(remaining_ms=[178_000, 177_000, 159_000], running=0),
        ),
        s.ClockUpdate(room=room, seq=8, clock=Clock(remaining_ms=[0, 151_200], running=None)),
        s.GameOver(
            room=room,
            seq=17,
            game_number=1,
            result=RESULT,
            ratings=[
                RatingChange(seat=0, name="ann", before=1500.0, after=1483.2),
                RatingChange(seat=1, name="kestrel-bot", before=1623.5, after=1631.9),
            ],
            record="g-20261121-0042",
        ),
        s.ChatMessage(room=room, seq=18, name="ann", text="gg", spectator=False),
        s.RematchOffered(room=room, seq=19, seat=0),
        s.RoomClosed(room=room, seq=31, reason="empty"),
        s.Record(
            re=20,
            record="g-20261121-0042",
            data=GameRecordData(
                game="collapsi",
                rules="standard",
                rules_version="1.3.1",
                variant="base",
                seed=7,
                setup=SETUP,
                players=["ann", "kestrel-bot"],
                moves=["2", "7", "1", "3", "4", "12", "9", "14", "10", "13"],
                result=RESULT,
                options={},
            ),
            rated=True,
            ratings=[
                RatingChange(seat=0, name="ann", before=1500.0, after=1483.2),
                RatingChange(seat=1, name="kestrel-bot", before=1623.5, after=1631.9),
            ],
            finished_at=1_795_000_321_000,
        ),
        s.Leaderboard(
            re=21,
            game="collapsi",
            entries=[
                LeaderboardEntry(
                    rank=1, name="kestrel-bot", rating=1631.9, deviation=61.2, games=42, bot=True
                ),
                LeaderboardEntry(rank=2, name="ann", rating=1483.2, deviation=180.5, games=3),
            ],
            total=2,
        ),
        s.RecordList(
            re=33,
            records=[
                RecordSummary(
                    record="g-20261121-0042",
                    game="collapsi",
                    rules="standard",
                    variant="base",
                    players=["ann", "kestrel-bot"],
                    result=GameResult(winner=1, order=[1, 0], reason="no_moves"),
                    moves=10,
                    rated=True,
                    private=False,
                    finished_at=1_795_000_321_000,
                )
            ],
            next_offset=1,
        ),
        s.TournamentList(
            re=22,
            tournaments=[
                TournamentSummary(
                    tournament="t-autumn",
                    name="Autumn Collapsi round robin",
                    game="collapsi",
                    variant="base",
                    format="round_robin",
                    status="open",
                    players=5,
                    max_players=8,
                    time_control=FISCHER,
                    starts_at=1_795_100_000_000,
                )
            ],
        ),
        s.Standings(
            re=25,
            tournament="t-autumn",
            status="running",
            round=2,
            rows=[
                StandingRow(rank=1, name="kestrel-bot", points=2.0, games=2, wins=2),
                StandingRow(rank=2, name="ann", points=0.5, games=2, draws=1, losses=1),
            ],
        ),
        s.Standings(
            tournament="t-autumn",
            status="running",
            round=2,
            rows=[
                StandingRow(rank=1, name="kestrel-bot", points=2.0, games=2, wins=2, tiebreak=1.5),
                StandingRow(
                    rank=2, name="ann", points=1.0, games=2, wins=1, losses=1, tiebreak=0.0
                ),
                StandingRow(
                    rank=3,
                    name="rook",
                    points=0.0,
                    games=2,
                    losses=2,
                    withdrawn=True,
                    tiebreak=0.0,
                ),
            ],
            summary=AUTUMN,
            games=[
                TournamentGame(
                    round=1,
                    room="r-2a7e0",
                    players=["kestrel-bot", "ann"],
                    status="finished",
                    points=[1.0, 0.0],
                    reason="no_moves",
                    record="r-2a7e0-1",
                ),
                TournamentGame(
                    round=2,
                    room="r-5c1d9",
                    players=["ann", "rook"],
                    status="finished",
                    points=[1.0, 0.0],
                    reason="timeout",
                    record="r-5c1d9-1",
                ),
                TournamentGame(
                    round=2,
                    room="forfeit-1",
                    players=["kestrel-bot", "rook"],
                    status="finished",
                    points=[1.0, 0.0],
                    reason="forfeit",
                ),
            ],
        ),
        s.TournamentCreated(
            re=29, tournament=AUTUMN.model_copy(update={"status": "open", "round": 0})
        ),
    ]
