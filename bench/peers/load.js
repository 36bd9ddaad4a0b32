// Load clients for the peer servers of bench/peers (boardgame.io, Colyseus), driven by
// bench/peers/run.py. Pairs of clients play Collapsi as fast as they can: the player to
// move sends the first legal move as soon as the server's state says it is its turn.
// Counted: moves whose new state reached their mover inside the measured window;
// latency is a move sent -> that state received by the mover.
// Usage: node load.js '{"peer": "bgio"|"colyseus", "path": "newroom"|"inroom"|"idle",
//   "port": N, "pairs": N, "start": S, "end": S, "warmup": S}'
// (start/end: CLOCK_MONOTONIC seconds, the clock of Python's time.monotonic()).
// Prints one JSON line: {count, latencies (ms), games, errors}. "idle": opens the pairs
// (each in a game), prints {"open": N} and holds them until stdin closes.
"use strict";

const collapsi = require("./collapsi.js");

const cfg = JSON.parse(process.argv[2]);
const now = () => Number(process.hrtime.bigint()) / 1e9;
const stats = { count: 0, latencies: [], games: 0, errors: {} };
const error = (e) => {
  const key = String((e && e.message) || e).slice(0, 120);
  stats.errors[key] = (stats.errors[key] || 0) + 1;
};
const stopped = () => now() >= cfg.end;
const sleep = (s) => new Promise((r) => setTimeout(r, Math.max(0, s * 1000)));

/** The mover saw its move applied: count it if inside the window. */
function moved(player) {
  const t = now();
  if (t >= cfg.start && t < cfg.end) {
    stats.count += 1;
    if (stats.latencies.length < 20000) stats.latencies.push((t - player.sentAt) * 1000);
  }
}

// -- boardgame.io ------------------------------------------------------------------------

let bgio = null;
async function bgioGame(pairIndex, hold) {
  bgio = bgio || {
    Client: require("boardgame.io/client").Client,
    SocketIO: require("boardgame.io/multiplayer").SocketIO,
    Collapsi: require("./bgio_game.js").Collapsi,
  };
  const base = `http://127.0.0.1:${cfg.port}/games/collapsi`;
  const post = async (url, body) => {
    const r = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`${url}: ${r.status}`);
    return r.json();
  };
  const { matchID } = await post(`${base}/create`, { numPlayers: 2 });
  const creds = [];
  for (const playerID of ["0", "1"]) {
    const j = await post(`${base}/${matchID}/join`, { playerID, playerName: `p${pairIndex}-${playerID}` });
    creds.push(j.playerCredentials);
  }
  let finish;
  const done = new Promise((r) => (finish = r));
  const players = [0, 1].map((seat) => {
    const player = { seat, sentAt: 0, lastMoves: -1 };
    const client = bgio.Client({
      game: bgio.Collapsi,
      multiplayer: bgio.SocketIO({
        server: `http://127.0.0.1:${cfg.port}`,
        socketOpts: { transports: ["websocket"] },
      }),
      matchID,
      playerID: String(seat),
      credentials: creds[seat],
      debug: false,
    });
    player.client = client;
    client.subscribe((state) => {
      if (!state || !state.G || state.G.moves === player.lastMoves) return;
      const G = state.G;
      if (player.lastMoves !== -1 && G.moves > 0 && (G.moves - 1) % 2 === seat) moved(player);
      player.lastMoves = G.moves;
      if (state.ctx.gameover) {
        finish();
        return;
      }
      if (hold || G.toMove !== seat || stopped()) return;
      player.sentAt = now();
      client.moves.move(collapsi.legalMoves(G)[0]);
    });
    client.start();
    return player;
  });
  if (hold) return players;
  await Promise.race([done, sleep(cfg.end - now() + 1)]);
  for (const p of players) p.client.stop();
  return null;
}

// -- Colyseus ------------------------------------------------------------------------------

let sdk = null;
async function colyseusPair(pairIndex, rematch, hold) {
  sdk = sdk || require("@colyseus/sdk");
  const client = new sdk.Client(`http://127.0.0.1:${cfg.port}`);
  const a = await client.create("collapsi");
  const b = await client.joinById(a.roomId);
  let finish; // the game starts when both said ready, after their handlers are in place
  let done = new Promise((r) => (finish = r));
  const players = [a, b].map((room, seat) => {
    const player = { seat, room, sentAt: 0, lastMoves: -1, game: 0 };
    room.onMessage("refused", (cell) => error(`refused ${cell}`));
    room.onStateChange((s) => {
      if (s.game !== player.game) {
        player.game = s.game;
        player.lastMoves = -1;
      }
      if (s.moves === player.lastMoves || !s.pawns || s.pawns.length < 2) return;
      if (player.lastMoves !== -1 && s.moves > 0 && (s.moves - 1) % 2 === seat) moved(player);
      player.lastMoves = s.moves;
      if (s.winner !== -1) {
        if (seat === 0) finish();
        return;
      }
      if (hold || s.toMove !== seat || stopped()) return;
      const g = { cards: [...s.cards], collapsed: [...s.collapsed], pawns: [...s.pawns], toMove: s.toMove };
      player.sentAt = now();
      room.send("move", collapsi.legalMoves(g)[0]);
    });
    return player;
  });
  a.send("ready");
  b.send("ready");
  if (hold) return players;
  for (;;) {
    await Promise.race([done, sleep(cfg.end - now() + 1)]);
    if (stopped()) break;
    if (now() >= cfg.start) stats.games += 1;
    if (!rematch) break;
    done = new Promise((r) => (finish = r));
    a.send("ready");
    b.send("ready");
  }
  await Promise.all([a.leave(), b.leave()]);
  return null;
}

// -- driver ------------------------------------------------------------------------------------

async function pairLoop(i) {
  await sleep(cfg.start - cfg.warmup - now());
  while (!stopped()) {
    try {
      if (cfg.peer === "bgio") {
        await bgioGame(i, false);
        if (!stopped() && now() >= cfg.start) stats.games += 1;
      } else {
        await colyseusPair(i, cfg.path === "inroom", false);
      }
    } catch (e) {
      error(e);
      await sleep(0.1);
    }
  }
}

async function idle() {
  const held = [];
  let open = 0;
  for (let i = 0; i < cfg.pairs; i += 16) {
    const batch = [];
    for (let j = i; j < Math.min(cfg.pairs, i + 16); j++) {
      batch.push(cfg.peer === "bgio" ? bgioGame(j, true) : colyseusPair(j, false, true));
    }
    for (const r of await Promise.allSettled(batch)) {
      if (r.status === "fulfilled") {
        held.push(r.value);
        open += 2;
      } else error(r.reason);
    }
  }
  await sleep(1.5); // every client synced
  process.stdout.write(JSON.stringify({ open, errors: stats.errors }) + "\n");
  process.stdin.resume();
  process.stdin.on("end", () => process.exit(0));
}

async function main() {
  if (cfg.path === "idle") return idle();
  await Promise.all(Array.from({ length: cfg.pairs }, (_, i) => pairLoop(i)));
  report(0);
}

/** Print the figures and exit once they are written (a pipe is written asynchronously). */
function report(code) {
  process.stdout.write(JSON.stringify(stats) + "\n", () => process.exit(code));
}

main().catch((e) => {
  error(e);
  report(1);
});
