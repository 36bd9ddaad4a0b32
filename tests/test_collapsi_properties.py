"""Property tests: random play over every variant keeps the game valid and reproducible."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import GameRecord, replay
from engine.collapsi import CollapsiGame
from engine.collapsi.game import OUT, UNPLACED

SETUPS = [
    ("standard", "base", None, None),
    ("classic", "base", None, None),
    ("standard", "shifting", None, None),
    ("classic", "players-choice", None, None),
    ("standard", "big-board", 3, None),
    ("classic", "big-board+shifting", 4, None),
    ("standard", "big-board+players-choice", 2, None),
    ("standard", "solo", None, None),
    ("classic", "solo", None, None),
    ("standard", "custom", 3, {"preset": "5x5-3p"}),
    ("classic", "custom+shifting", None, {"preset": "5x5"}),
]


def make(setup, seed: int) -> CollapsiGame:
    rules, variant, players, options = setup
    return CollapsiGame.new(
        rules=rules, variant=variant, seed=seed, players=players, options=options
    )


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_invariants(game: CollapsiGame) -> None:
    # what a server sends after each move, computed at once, is what each call gives
    assert game.position_view_moves() == (game.position(), game.view(), game.legal_moves())
    pos = game.to_position()
    placed = [p for p in game._pawns if p >= 0]
    assert len(set(placed)) == len(placed), "two pawns on one card"
    for p in placed:
        assert not pos.collapsed >> p & 1, "a pawn on a collapsed card"
    assert all(p in (OUT, UNPLACED) or 0 <= p < pos.cells for p in game._pawns)
    assert game._occupied == sum(1 << p for p in placed)
    if game.is_over():
        assert game.legal_moves() == [] and game.to_move() is None
        res = game.result()
        assert sorted(res.order) == list(range(game.num_players))
    else:
        assert game.legal_moves(), "a live game without moves"
        for d in game.legal_cells():
            path = game.path_to(d)
            assert path[-1] == d and len(set(path)) == len(path)
            assert all(not pos.collapsed >> c & 1 for c in path[1:])
            assert path == naive_path(game, d)
        assert game.paths() == {d: game.path_to(d) for d in game.legal_cells()}
        assert list(game.paths()) == game.legal_cells()


def naive_path(game: CollapsiGame, dest: int) -> list[int]:
    """The first walk to ``dest`` found by a fresh search (the witness ``path_to`` gives)."""
    start = game._pawns[game._turn]
    if start == UNPLACED:
        return [dest]
    board, blocked, lengths = game._board, game._collapsed, game._lengths(start)
    if game._spec.solo:
        if dest == game._exit:
            for k in range(1, max(lengths) + 1):
                for walk in board.walks(start, k, blocked):
                    if walk[-1] == dest:
                        return walk
        blocked |= 1 << game._exit
    for k in lengths:
        for walk in board.walks(start, k, blocked):
            if walk[-1] == dest:
                return walk
    raise AssertionError("no walk")


@given(
    setup=st.sampled_from(SETUPS),
    seed=st.integers(0, 10_000),
    picks=st.lists(st.integers(0, 10_000), min_size=60, max_size=60),
)
@FAST
def test_random_play_stays_valid_and_ends(setup, seed, picks) -> None:
    game = make(setup, seed)
    cells = game.width * game.height
    plies = 0
    collapsed_before = game.to_position().collapsed.bit_count()
    while not game.is_over():
        check_invariants(game)
        moves = game.legal_moves()
        placing = game.steps() == "place"
        game.play(moves[picks[plies % len(picks)] % len(moves)])
        plies += 1
        collapsed_now = game.to_position().collapsed.bit_count()
        # every real move collapses exactly one card; a start choice none
        assert collapsed_now == collapsed_before + (0 if placing else 1)
        collapsed_before = collapsed_now
        assert plies <= cells + game.num_players, "the game must end"
    check_invariants(game)


@given(
    setup=st.sampled_from(SETUPS),
    seed=st.integers(0, 10_000),
    plies=st.integers(0, 40),
)
@FAST
def test_snapshot_position_and_record_round_trip(setup, seed, plies) -> None:
    rules = setup[0]
    game = make(setup, seed)
    for i in range(plies):
        if game.is_over():
            break
        moves = game.legal_moves()
        game.play(moves[(seed + i * 7) % len(moves)])
    # snapshot -> restore is identical
    again = CollapsiGame.restore(game.snapshot())
    assert again.position() == game.position() and again.history == game.history
    assert again.result() == game.result() and again.legal_moves() == game.legal_moves()
    # position notation round-trips, and the rebuilt game plays on identically
    back = CollapsiGame.from_position(
        game.position(), rules=rules, variant=game.variant, options=game.options()
    )
    assert back.position() == game.position()
    assert back.legal_moves() == game.legal_moves() and back.result() == game.result()
    # the record (through JSON-able dicts) replays to the identical state
    record = GameRecord.from_dict(game.record().to_dict())
    replayed = replay(record)
    assert replayed.position() == game.position() and replayed.result() == game.result()
    # a deal is a pure function of (rules, variant, seed)
    fresh = make(setup, seed)
    assert fresh.setup() == game.setup()


@given(
    setup=st.sampled_from(SETUPS),
    seed=st.integers(0, 10_000),
    plies=st.integers(1, 30),
)
@FAST
def test_undo_restores_every_earlier_position(setup, seed, plies) -> None:
    game = make(setup, seed)
    seen = []
    for i in range(plies):
        if game.is_over():
            break
        seen.append((game.position(), game.legal_moves()))
        moves = game.legal_moves()
        game.play(moves[(seed * 3 + i) % len(moves)])
    while seen:
        game.undo()
        position, moves = seen.pop()
        assert game.position() == position and game.legal_moves() == moves
        assert not game.is_over()
