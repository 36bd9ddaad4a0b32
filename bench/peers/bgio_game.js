// The Collapsi game definition for boardgame.io (bench/peers): the server and the load
// clients share it; moves run on the server only (client: false).
"use strict";

const { INVALID_MOVE } = require("boardgame.io/core");
const collapsi = require("./collapsi.js");

const Collapsi = {
  name: "collapsi",
  minPlayers: 2,
  maxPlayers: 2,
  setup: ({ random }) => collapsi.deal(() => random.Number()),
  moves: {
    move: {
      client: false, // validated and applied by the server alone
      move: ({ G }, cell) => (collapsi.play(G, cell) ? G : INVALID_MOVE),
    },
  },
  turn: { minMoves: 1, maxMoves: 1 },
  endIf: ({ G }) => (G.winner !== -1 ? { winner: String(G.winner) } : undefined),
};

module.exports = { Collapsi };
