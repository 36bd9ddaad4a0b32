"""Collapsi by Mark S. Ball: the rules engine (rules texts and rulings in ../shared/rules).

Create games through :func:`engine.new_game` ("collapsi") or
:class:`CollapsiGame` directly.

Rule sets (ruling 1): ``standard`` (v1.3.1, the default: a jack moves exactly
1 step) and ``classic`` (v1.1.0: a joker moves 1, 2, 3 or 4 steps).

Variants: one board, optionally combined with modifiers by ``+``
(``"big-board+shifting"``, ``"custom+players-choice"``):

- ``base`` (default): 4x4, 2 players, the 16-card deck.
- ``big-board``: 6x6, 4 jacks and 8 each of A-4, 2 to 4 players (``players=``);
  jacks are assigned in deal order, unused jacks collapse (ruling 4).
- ``solo``: one-player puzzle (ruling 7); ``options={"size": 3}`` (default:
  2 jacks, three 1s, three 2s, one 3) or ``{"size": 4}`` (the 16-card deck).
  Start on the first jack; the second is the exit. The exit is a door: a
  move that reaches it within its step count (landing or passing) ends there.
  It wins when every other card has collapsed, otherwise it loses; so does
  having no move. Seeded solo deals are always solvable (:func:`solo_solvable`;
  :func:`solo_count` counts winning and all lines). Solo combines with no
  modifier.
- ``custom``: other boards and decks (ruling 8): ``options={"preset": name}``
  with a name from :data:`engine.collapsi.deck.PRESETS` (``5x5``, ``5x5-3p``,
  ``6x6``, ``6x6-2p``, ``7x7``, ...), or an explicit deck as counts
  ``{"deck": {"J": 2, "1": 6, "2": 6, "3": 6, "4": 5}, "size": 5}`` (or
  ``"width"``/``"height"``). A deck that does not fill the board is a
  :class:`SetupError`. With an explicit deal and no options the deal is the deck.
- modifier ``shifting``: Shifting Board (ruling 5).
- modifier ``players-choice``: Player's Choice (ruling 6): jacks collapse, each
  player in turn picks a start card (these picks are moves, written as cells).

Notation:

- Cells are row-major from 0: cell = row * width + column.
- A deal: one character per card, row-major, ``J1234``; ``/`` may separate
  rows (required for non-square boards). The first J is red's start, the
  second blue's, then green's and yellow's.
- A move: the destination cell in decimal (``"5"``). In Shifting Board the
  destination plus the shift of the landing card's row or column: ``"5<"``
  row left, ``"5>"`` row right, ``"5^"`` column up, ``"5v"`` column down.
  Cell numbers are those before the shift.
- A position (ruling 9): ``BOARD PAWNS TO_MOVE``, e.g.
  ``"J1a2/3c4J/1234/2314 0,7 0"``: one character per card with ``/`` between
  rows, face-up ``J1234`` and collapsed ``jabcd`` (J, 1, 2, 3, 4 face down);
  pawn cells in seat order (``?`` not yet placed, ``xN`` the N-th player
  eliminated); the seat to move. :meth:`CollapsiGame.position` writes it and
  :meth:`CollapsiGame.from_position` (or ``from_setup``) reads it back.

Results (ruling 3): a player with no move on their turn loses and the game
ends at once, whatever the number of players. The last player to complete a
move wins; ``Result.order`` ranks the others by how recently each moved, the
stuck player last, then the players out by forfeit (a forfeit with two others
still in takes a player out and play goes on), the earliest out last. The Big
Board house rule ``options={"elimination": True}`` (never the default) puts a
stuck player out as a forfeit does while three or more are in. Solo: ``reason`` is ``solved``
(winner 0) or ``failed`` (winner ``None``).

Command line: ``arena collapsi deal|moves`` (clients/cli/collapsi_cmd.py)
and ``arena demo``.

Fast API for bots and search: :meth:`CollapsiGame.legal_cells`,
:meth:`CollapsiGame.play_cell`, :meth:`CollapsiGame.undo`,
:meth:`CollapsiGame.to_position` / :meth:`CollapsiGame.from_position`
(:class:`Position`), and :meth:`CollapsiGame.paths` for witnessing paths.
"""

from engine.collapsi.game import CollapsiGame, solo_count, solo_solvable
from engine.collapsi.position import JACK, Position

#: build a game (rules and variant as given) from a :class:`Position` or position text
from_position = CollapsiGame.from_position

__all__ = ["JACK", "CollapsiGame", "Position", "from_position", "solo_count", "solo_solvable"]
