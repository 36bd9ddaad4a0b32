"""Collecto boards as flat lists, with the index tables that make pushes cheap.

A board is a list of 50 ints: cells 0-48 row by row (cell = row * 7 + column),
0 for empty and 1-6 for the colours, plus cell 49, a sentinel that is always 0
so that "no neighbour" tables can point at it instead of branching.

Every move 0-27 (ruling 15) is a push of one line towards one edge. ``LINES[m]``
lists the line's cells starting at the edge the balls are packed against, so
every push is the same operation: keep the balls in order, pack them to the
front (ruling 11). ``SIDES[m]`` holds, per position in that order, the two
neighbours outside the line (or the sentinel); they do not move in a push.

Between moves no two same-coloured balls touch (a deal has none, and every
move removes all that do, ruling 12), so a push can only make pairs that
involve its own line: checking a move looks at its line and the cells beside it.
"""

from __future__ import annotations

import re

from engine.base import IllegalMove, NotationError

SIZE = 7
CELLS = SIZE * SIZE
SENTINEL = CELLS  # index of the always-empty cell 49
CENTRE = CELLS // 2
COLOURS = 6
BALLS_PER_COLOUR = 8
TOTAL_BALLS = COLOURS * BALLS_PER_COLOUR
MOVES = 4 * SIZE  # 0-27, ruling 15

#: colour digit -> name; index 0 is the empty cell
COLOUR_NAMES = ("empty", "blue", "yellow", "red", "orange", "purple", "green")
#: colour digit -> one letter for plain-text pictures
COLOUR_LETTERS = ".BYROPG"

Board = list[int]
Move = tuple[int, ...]  # (m,) for a single move, (a, b) for a double move


def _line_cells(move: int) -> tuple[int, ...]:
    """Cells of ``move``'s line, starting at the edge it pushes towards (ruling 15)."""
    kind, index = divmod(move, SIZE)
    if kind == 0:  # row ``index`` to the left
        return tuple(index * SIZE + c for c in range(SIZE))
    if kind == 1:  # row to the right
        return tuple(index * SIZE + c for c in reversed(range(SIZE)))
    if kind == 2:  # column ``index`` up
        return tuple(r * SIZE + index for r in range(SIZE))
    return tuple(r * SIZE + index for r in reversed(range(SIZE)))  # column down


def _neighbours(cell: int) -> tuple[int, ...]:
    row, col = divmod(cell, SIZE)
    out = []
    if row > 0:
        out.append(cell - SIZE)
    if col > 0:
        out.append(cell - 1)
    if col < SIZE - 1:
        out.append(cell + 1)
    if row < SIZE - 1:
        out.append(cell + SIZE)
    return tuple(out)


def _sides(move: int) -> tuple[tuple[int, int], ...]:
    line = set(_line_cells(move))
    out = []
    for cell in _line_cells(move):
        beside = [n for n in _neighbours(cell) if n not in line]
        beside += [SENTINEL] * (2 - len(beside))
        out.append((beside[0], beside[1]))
    return tuple(out)


LINES: tuple[tuple[int, ...], ...] = tuple(_line_cells(m) for m in range(MOVES))
SIDES: tuple[tuple[tuple[int, int], ...], ...] = tuple(_sides(m) for m in range(MOVES))
NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(_neighbours(c) for c in range(CELLS))
#: bit mask of the cells a push's outcome depends on: its line and the cells beside it
DEPENDS: tuple[int, ...] = tuple(
    sum(1 << c for c in {*LINES[m], *(n for pair in SIDES[m] for n in pair)} if c < CELLS)
    for m in range(MOVES)
)


# -- notation ----------------------------------------------------------------
_BOARD_JUNK = re.compile(r"[\s/|]")


def parse_board(text: str) -> Board:
    """49 digits row by row (0 empty, 1-6 colours; spaces, '/' and '|' ignored).

    Accepts any position that can occur between moves: at most 8 balls per
    colour and no two same-coloured balls touching (ruling 12 removes them);
    a full board of 48 balls is a deal and must leave the centre empty (ruling 10).
    """
    digits = _BOARD_JUNK.sub("", text)
    if len(digits) != CELLS or not all("0" <= ch <= "6" for ch in digits):
        raise NotationError(f"a Collecto board is {CELLS} digits 0-6 row by row, got {text!r}")
    board = [int(ch) for ch in digits] + [0]
    check_board(board)
    return board


def check_board(board: Board) -> None:
    """Raise :class:`NotationError` unless ``board`` can occur between moves."""
    counts = colour_counts(board)
    for colour in range(1, COLOURS + 1):
        if counts[colour] > BALLS_PER_COLOUR:
            raise NotationError(
                f"{counts[colour]} {COLOUR_NAMES[colour]} balls on the board; "
                f"there are only {BALLS_PER_COLOUR} of each colour"
            )
    if sum(counts) == TOTAL_BALLS and board[CENTRE]:
        raise NotationError("a full board is a deal and its centre must be empty (ruling 10)")
    for cell in range(CELLS):
        colour = board[cell]
        if not colour:
            continue
        for other in NEIGHBOURS[cell]:
            if other > cell and board[other] == colour:
                raise NotationError(
                    f"cells {cell} and {other} hold touching {COLOUR_NAMES[colour]} balls; "
                    "no board between moves has such a pair (ruling 12)"
                )


def format_board(board: Board) -> str:
    return "".join(map(str, board[:CELLS]))


def colour_counts(board: Board) -> list[int]:
    """Balls on the board per colour digit (index 0 unused)."""
    counts = [0] * (COLOURS + 1)
    for colour in board[:CELLS]:
        counts[colour] += 1
    counts[0] = 0
    return counts


_MOVE_TEXT = re.compile(r"^\s*(\d{1,2})\s*(?:,\s*(\d{1,2})\s*)?$")


def parse_move(text: str) -> Move:
    """``"N"`` is a single move, ``"a,b"`` a double move (ruling 15)."""
    match = _MOVE_TEXT.match(text) if isinstance(text, str) else None
    if match is None:
        raise NotationError(f"a Collecto move is N or a,b with numbers 0-{MOVES - 1}, got {text!r}")
    move = tuple(int(g) for g in match.groups() if g is not None)
    for m in move:
        if m >= MOVES:
            raise NotationError(f"push {m} does not exist; pushes are 0-{MOVES - 1} (ruling 15)")
    return move


def format_move(move: Move) -> str:
    return ",".join(map(str, move))


def describe_push(move: int) -> str:
    kind, index = divmod(move, SIZE)
    what = "row" if kind < 2 else "column"
    return f"{what} {index} {('left', 'right', 'up', 'down')[kind]}"


# -- pushes and pairs ------------------------------------------------------------
def push(board: Board, move: int) -> bool:
    """Push in place; return False (board untouched) if the push changes nothing."""
    cells = LINES[move]
    balls = [board[c] for c in cells if board[c]]
    k = len(balls)
    if all(board[cells[i]] for i in range(k)):
        return False  # already packed against that edge (ruling 11)
    for i, cell in enumerate(cells):
        board[cell] = balls[i] if i < k else 0
    return True


def push_makes_pair(board: Board, move: int) -> bool | None:
    """Whether push ``move`` would leave a same-coloured pair; ``None`` if it changes nothing.

    Relies on ``board`` having no pair before the push (see the module docstring).
    """
    cells = LINES[move]
    vals = [board[c] for c in cells]
    balls = [v for v in vals if v]
    k = len(balls)
    if vals[:k] == balls:
        return None
    prev = 0
    for v in balls:
        if v == prev:
            return True
        prev = v
    sides = SIDES[move]
    for i in range(k):
        v = balls[i]
        a, b = sides[i]
        if board[a] == v or board[b] == v:
            return True
    return False


def valid_singles(board: Board) -> list[int]:
    """Single moves that leave a same-coloured pair, ascending (ruling 13)."""
    return [m for m in range(MOVES) if push_makes_pair(board, m)]


def valid_doubles(board: Board) -> list[tuple[int, int]]:
    """Every (a, b) of two changing pushes whose result has a pair, in (a, b) order.

    Only meaningful (and only legal) when :func:`valid_singles` is empty
    (ruling 13); then the first push leaves no pair, which the check of the
    second push relies on. Both pushes must change the board (ruling 11).
    For the same reason a second push whose line and neighbours the first
    push left untouched cannot make a pair, so it is not tried.
    """
    out = []
    for a in range(MOVES):
        after = board.copy()
        if not push(after, a):
            continue
        changed = 0
        for c in LINES[a]:
            if after[c] != board[c]:
                changed |= 1 << c
        out.extend(
            (a, b) for b in range(MOVES) if DEPENDS[b] & changed and push_makes_pair(after, b)
        )
    return out


def legal_moves(board: Board) -> tuple[list[int], list[tuple[int, int]]]:
    """(singles, doubles): doubles are listed only when no single move is valid."""
    singles = valid_singles(board)
    if singles:
        return singles, []
    return singles, valid_doubles(board)


def collect(board: Board) -> list[int]:
    """Remove every ball with a same-coloured neighbour (ruling 12); return counts per colour."""
    taken = [
        c for c in range(CELLS) if board[c] and any(board[n] == board[c] for n in NEIGHBOURS[c])
    ]
    counts = [0] * (COLOURS + 1)
    for c in taken:
        counts[board[c]] += 1
        board[c] = 0
    return counts


def apply_move(board: Board, move: Move) -> tuple[Board, list[int]]:
    """The board after ``move`` and the balls it collects per colour digit.

    Raises :class:`IllegalMove` for a push that changes nothing (ruling 11), a
    move that makes no pair, or a double move while a single move exists (ruling 13).
    """
    after = board.copy()
    if len(move) == 2:
        singles = valid_singles(board)
        if singles:
            raise IllegalMove(
                f"double move {format_move(move)} is not allowed while a single move "
                f"exists (ruling 13), e.g. {singles[0]}"
            )
    for step, m in enumerate(move):
        if not push(after, m):
            which = "" if len(move) == 1 else ("first " if step == 0 else "second ")
            raise IllegalMove(
                f"the {which}push {m} ({describe_push(m)}) changes nothing (ruling 11)"
            )
    counts = collect(after)
    if not any(counts):
        raise IllegalMove(
            f"move {format_move(move)} leaves no two same-coloured balls touching (ruling 13)"
        )
    return after, counts


def points(collected: list[int]) -> int:
    """One point per full three balls of a colour (ruling 14)."""
    return sum(n // 3 for n in collected[1:])


def render(board: Board) -> str:
    """A 7x7 picture with colour letters (B Y R O P G, '.' empty) and row/column numbers."""
    lines = ["   " + " ".join(str(c) for c in range(SIZE))]
    for r in range(SIZE):
        row = board[r * SIZE : (r + 1) * SIZE]
        lines.append(f"{r}  " + " ".join(COLOUR_LETTERS[v] for v in row))
    return "\n".join(lines)
