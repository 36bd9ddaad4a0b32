// A Collapsi Arena bot in plain Node.js, written from protocol/PROTOCOL.md alone.
//
//   node arena-bot.mjs ws://127.0.0.1:8765 [--join ROOM] [--name NAME]
//                                               [--timeout SECONDS] [--verbose]
//
// Without --join it creates a casual Collapsi room, takes seat 0 and prints
// "room <id>" so another instance can join it.  With --join it joins that room as a
// player and takes the free seat.  Both get ready, play a random legal move (from the
// server's `legal_moves`) whenever their seat is to move, and at game over print
// "result <json>" (the game_over's result plus "you", "room", "record"), log out and
// exit 0.  Any protocol error, close or timeout exits 1.
//
// Only Node's built-ins: the global WebSocket (Node 22+; on Node 20 the script runs
// itself again with --experimental-websocket).  JSON text frames: the server answers in the encoding
// of our hello.

const args = process.argv.slice(2);
const opts = { url: null, join: null, name: null, timeout: 25, verbose: false };
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === "--join") opts.join = args[++i];
  else if (a === "--name") opts.name = args[++i];
  else if (a === "--timeout") opts.timeout = Number(args[++i]);
  else if (a === "--verbose" || a === "-v") opts.verbose = true;
  else if (a === "-h" || a === "--help") {
    console.log("usage: arena-bot.mjs WS_URL [--join ROOM] [--name NAME] [--timeout S] [--verbose]");
    process.exit(0);
  } else if (!opts.url) opts.url = a;
  else fail(`unexpected argument ${a}`);
}
if (!opts.url) fail("usage: arena-bot.mjs WS_URL [--join ROOM] [--name NAME]");
if (typeof WebSocket === "undefined") {
  // Node 20 has the WebSocket client behind a flag: run this script again with it.
  if (process.execArgv.includes("--experimental-websocket")) {
    fail("no global WebSocket, even with --experimental-websocket: Node 20+ is needed");
  }
  const { spawnSync } = await import("node:child_process");
  const again = spawnSync(
    process.execPath,
    ["--experimental-websocket", "--no-warnings", ...process.execArgv, process.argv[1], ...args],
    { stdio: "inherit" },
  );
  process.exit(again.status ?? 1);
}

function log(...xs) {
  if (opts.verbose) console.error("[bot]", ...xs);
}
function fail(msg) {
  console.error(`arena-bot: ${msg}`);
  process.exit(1);
}

const deadline = setTimeout(() => fail(`timed out after ${opts.timeout} s`), opts.timeout * 1000);

// --- connection and request/reply matching -------------------------------------------

const ws = new WebSocket(opts.url);
let nextId = 1;
const pending = new Map(); // id -> {resolve, reject, type}
let closing = false;

function send(msg) {
  const text = JSON.stringify(msg);
  log(">", text);
  ws.send(text); // a string is sent as a text frame: JSON encoding
}

// Every client message gets exactly one reply (a specific answer, ack or error),
// carrying our id as `re`.  Resolve with the reply; reject on `error`.
function request(type, fields = {}) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, type });
    send({ type, id, ...fields });
  });
}

ws.addEventListener("message", (ev) => {
  if (typeof ev.data !== "string") {
    fail("got a binary frame, but our hello was a text frame");
  }
  let msg;
  try {
    msg = JSON.parse(ev.data);
  } catch (e) {
    fail(`undecodable frame: ${e}`);
  }
  log("<", ev.data);
  if (msg.re !== undefined && msg.re !== null && pending.has(msg.re)) {
    const p = pending.get(msg.re);
    // a long catch_up comes in several parts with the same re; the last has more: false
    if (msg.type === "catch_up" && msg.more) {
      handleCatchUp(msg);
      return;
    }
    pending.delete(msg.re);
    if (msg.type === "catch_up") handleCatchUp(msg);
    if (msg.type === "error") {
      const err = new Error(`${p.type}: ${msg.code}: ${msg.message}`);
      err.code = msg.code;
      p.reject(err);
    } else {
      p.resolve(msg);
    }
    return;
  }
  handleUnsolicited(msg);
});
ws.addEventListener("close", (ev) => {
  if (!closing) fail(`connection closed by the server: ${ev.code} ${ev.reason}`);
});
ws.addEventListener("error", (ev) => {
  if (!closing) fail(`WebSocket error: ${ev.message || ev.error || "connection failed"}`);
});

// --- room state: the seq rule of the protocol's Envelope section ----------------------

const room = { id: null, haveState: false, lastSeq: 0, you: null, state: null };
let myName = null;
let movedAtPly = -1; // the ply we last sent a move for (avoid double sends)
let ply = 0;
let finished = null;

function handleUnsolicited(msg) {
  switch (msg.type) {
    case "error":
      // an error without a usable re (e.g. a frame that could not be read)
      console.error(`arena-bot: unsolicited error ${msg.code}: ${msg.message}`);
      return;
    case "goodbye":
      if (!closing) fail(`goodbye from the server: ${msg.reason} ${msg.message || ""}`);
      return;
    case "room_state":
      applyRoomState(msg);
      return;
    case "catch_up":
      handleCatchUp(msg);
      return;
    default:
      if (msg.room !== undefined && msg.seq !== undefined) applyEvent(msg);
      // anything else (lobby events, types we do not know): ignore
  }
}

function handleCatchUp(msg) {
  for (const ev of msg.events || []) applyEvent(ev);
}

function applyRoomState(s) {
  if (room.id !== null && s.room !== room.id) return;
  room.haveState = true;
  room.state = s;
  room.lastSeq = s.seq;
  if (s.you !== undefined && s.you !== null) room.you = s.you;
  if (s.status === "playing" && s.history) ply = s.history.length;
  maybeMove(s.to_move, s.legal_moves);
}

function applyEvent(e) {
  if (e.room !== room.id || !room.haveState) return; // the snapshot will include it
  if (e.seq <= room.lastSeq) return;
  if (e.seq > room.lastSeq + 1) {
    // a gap (should not happen on one connection): ask for the missing events
    log(`gap: have ${room.lastSeq}, got ${e.seq}`);
    send({ type: "watch", id: nextId++, room: room.id, since_seq: room.lastSeq });
    return;
  }
  room.lastSeq = e.seq;
  switch (e.type) {
    case "seat_taken":
      if (e.player && e.player.name === myName) room.you = e.seat;
      break;
    case "game_started":
      ply = 0;
      for (const s of e.seats || []) {
        if (s.player && s.player.name === myName) room.you = s.seat;
      }
      log(`game ${e.game_number} started, we are seat ${room.you}, setup ${e.setup}`);
      maybeMove(e.to_move, e.legal_moves);
      break;
    case "move_made":
      ply = e.ply;
      maybeMove(e.to_move, e.legal_moves);
      break;
    case "game_over":
      gameOver(e);
      break;
    case "room_closed":
      if (!finished) fail(`room closed before the game ended: ${e.reason}`);
      break;
    default:
      break;
  }
}

function maybeMove(toMove, legalMoves) {
  if (finished || room.you === null || toMove !== room.you) return;
  if (!legalMoves || legalMoves.length === 0) return;
  if (movedAtPly === ply) return; // already sent a move for this position
  movedAtPly = ply;
  const move = legalMoves[Math.floor(Math.random() * legalMoves.length)];
  log(`ply ${ply + 1}: playing ${move} of ${JSON.stringify(legalMoves)}`);
  request("move", { room: room.id, move }).catch((err) => {
    // not_your_turn / illegal_move: our view is stale; wait for the next event
    if (err.code === "not_your_turn" || err.code === "illegal_move" || err.code === "game_over") {
      log(`move refused: ${err.message}`);
    } else {
      fail(err.message);
    }
  });
}

let gameOverResolve;
const gameOverPromise = new Promise((r) => (gameOverResolve = r));

function gameOver(e) {
  if (finished) return;
  finished = e;
  gameOverResolve(e);
}

// --- the bot ---------------------------------------------------------------------------

async function main() {
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", reject, { once: true });
  });
  const welcome = await request("hello", { versions: [1], software: "arena-bot.mjs/0.1" });
  if (welcome.type !== "welcome" || welcome.version !== 1) fail(`unexpected answer to hello: ${welcome.type}`);

  // A guest bot: no token.  The server may adapt or refuse a name in use: retry with
  // another suffix on name_taken, and use the name logged_in gives back.
  const base = opts.name || `node-bot-${process.pid}`;
  let loggedIn;
  for (let attempt = 0; ; attempt++) {
    const name = attempt === 0 ? base : `${base}-${Math.floor(Math.random() * 1e6)}`;
    try {
      loggedIn = await request("login", { name, bot: true });
      break;
    } catch (err) {
      if (err.code !== "name_taken" || attempt >= 3) throw err;
    }
  }
  myName = loggedIn.player.name;
  log(`logged in as ${myName}`);

  let state;
  if (opts.join) {
    room.id = opts.join;
    state = await request("join_room", { room: opts.join, role: "player" });
    applyRoomState(state);
    // join_room does not seat us: take a free seat (naming it, so we know which)
    const free = state.seats.find((s) => s.player === null || s.player === undefined);
    if (!free) fail(`room ${opts.join} has no free seat`);
    await request("take_seat", { room: room.id, seat: free.seat });
    room.you = free.seat;
  } else {
    state = await request("create_room", { game: "collapsi", seat: 0 });
    room.id = state.room;
    applyRoomState(state);
    if (room.you === null) room.you = 0;
  }
  console.log(`room ${room.id}`);
  log(`in room ${room.id} as seat ${room.you}`);

  await request("ready", { room: room.id, ready: true });

  const over = await gameOverPromise;
  const result = { ...over.result, you: room.you, room: room.id, record: over.record ?? null, name: myName };
  console.log(`result ${JSON.stringify(result)}`);

  closing = true;
  await request("logout").catch(() => {});
  ws.close(1000);
  clearTimeout(deadline);
}

main().then(
  () => process.exit(0),
  (err) => fail(err && err.message ? err.message : String(err)),
);
