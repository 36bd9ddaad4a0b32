// Collapsi 4x4, standard rules (v1.3.1; the arena's engine/collapsi is the reference):
// the same game for the peer servers of bench/peers, validated on their servers.
// A deal of the 16 classic cards (2 jacks, four each of 1-3, two 4s), the first jack in
// row-major order is seat 0's start, the second seat 1's. A move is a destination cell
// reached by a path of exactly N orthogonal steps on the torus (N: the card under the
// pawn; a jack: 1), never entering a card twice (the start counts), never a collapsed
// card, passing through but never ending on the other pawn (ruling 2). The start card
// collapses; a player with no legal move on their turn loses (ruling 3).
"use strict";

const SIDE = 4;
const CELLS = SIDE * SIDE;
const DECK = [0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4];

const NEIGHBOURS = [];
for (let c = 0; c < CELLS; c++) {
  const r = Math.floor(c / SIDE), k = c % SIDE;
  NEIGHBOURS.push([
    ((r + SIDE - 1) % SIDE) * SIDE + k, ((r + 1) % SIDE) * SIDE + k,
    r * SIDE + ((k + SIDE - 1) % SIDE), r * SIDE + ((k + 1) % SIDE),
  ]);
}

/** A fresh deal: {cards, collapsed, pawns, toMove, winner (-1 while playing), moves}. */
function deal(random = Math.random) {
  const cards = DECK.slice();
  for (let i = cards.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  const pawns = [];
  cards.forEach((v, i) => { if (v === 0) pawns.push(i); });
  return { cards, collapsed: new Array(CELLS).fill(false), pawns, toMove: 0, winner: -1, moves: 0 };
}

/** The legal destinations of the player to move, ascending. */
function legalMoves(g) {
  const me = g.pawns[g.toMove];
  const steps = g.cards[me] === 0 ? 1 : g.cards[me];
  const other = g.pawns[1 - g.toMove];
  const seen = new Array(CELLS).fill(false);
  const out = new Set();
  seen[me] = true;
  const walk = (cell, left) => {
    for (const n of NEIGHBOURS[cell]) {
      if (seen[n] || g.collapsed[n]) continue;
      if (left === 1) {
        if (n !== other) out.add(n);
        continue;
      }
      seen[n] = true;
      walk(n, left - 1);
      seen[n] = false;
    }
  };
  walk(me, steps);
  return [...out].sort((a, b) => a - b);
}

/** Play ``cell`` for the player to move if it is legal (true), else leave ``g`` alone (false). */
function play(g, cell) {
  if (g.winner !== -1 || !legalMoves(g).includes(cell)) return false;
  const mover = g.toMove;
  g.collapsed[g.pawns[mover]] = true;
  g.pawns[mover] = cell;
  g.toMove = 1 - mover;
  g.moves += 1;
  if (legalMoves(g).length === 0) g.winner = mover;
  return true;
}

module.exports = { deal, legalMoves, play, CELLS };
