// Colyseus hosting Collapsi 4x4 (bench/peers): two clients per room, moves validated in
// the room, each change patched to both clients at once (broadcastPatch, no patch timer).
// A game starts when both clients sent "ready" (as the arena's ready x2); after a game both
// send "ready" again and the room deals the next game in place (the in-room path, a
// rematch); leaving both disposes the room (the new-room path).
// Usage: node colyseus_server.js PORT
"use strict";

const { Server, Room } = require("@colyseus/core");
const { WebSocketTransport } = require("@colyseus/ws-transport");
const { schema, t } = require("@colyseus/schema");
const collapsi = require("./collapsi.js");

const State = schema({
  cards: t.array("uint8"),
  collapsed: t.array("boolean"),
  pawns: t.array("uint8"),
  toMove: t.uint8(),
  winner: t.int8(),
  moves: t.uint8(),
  game: t.uint16(),
});

class CollapsiRoom extends Room {
  onCreate() {
    this.maxClients = 2;
    this.patchRate = null; // patches go out when a move changed the state
    this.state = new State();
    this.setPatchRate(null);
    this.state.winner = -1;
    this.state.game = 0;
    this.g = null;
    this.seats = new Map();
    this.ready = new Set();
    this.onMessage("move", (client, cell) => this.move(client, cell));
    this.onMessage("ready", (client) => {
      this.ready.add(client.sessionId);
      if (this.ready.size === 2 && (!this.g || this.g.winner !== -1)) this.start();
    });
  }

  onJoin(client) {
    this.seats.set(client.sessionId, this.seats.size);
    if (this.seats.size === 2) this.lock();
  }

  start() {
    this.ready.clear();
    this.g = collapsi.deal();
    this.state.game += 1;
    this.sync();
  }

  move(client, cell) {
    const seat = this.seats.get(client.sessionId);
    if (!this.g || seat !== this.g.toMove || !collapsi.play(this.g, cell)) {
      client.send("refused", cell);
      return;
    }
    this.sync();
  }

  sync() {
    const s = this.state, g = this.g;
    s.cards = g.cards;
    s.collapsed = g.collapsed;
    s.pawns = g.pawns;
    s.toMove = g.toMove;
    s.winner = g.winner;
    s.moves = g.moves;
    this.broadcastPatch();
  }
}

const port = Number(process.argv[2]);
const server = new Server({ transport: new WebSocketTransport() });
server.define("collapsi", CollapsiRoom);
server.listen(port, "127.0.0.1");
