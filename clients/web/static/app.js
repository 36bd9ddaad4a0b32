// The arena's web page: lobby, game (watch and play), record and tournament pages.
// Every name and chat line is put in the page as text (textContent), never as markup.

import { Arena, ArenaError, serverUrl } from "./arena.js";
import { drawCollapsi, drawCollecto, seatColour, ballColour } from "./board.js";

const arena = new Arena(serverUrl());
window.arena = arena; // for the console and the browser tests
// what bench/web.py reads: when the first board was on screen, how many room events were drawn
window.arenaStats = { firstBoardAt: null, eventsDrawn: 0 };
const main = document.getElementById("main");

// ---- small DOM helpers -----------------------------------------------------------

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== false && v !== null && v !== undefined) node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : String(c));
  return node;
}

function link(href, text) {
  return h("a", { href, onclick: (e) => { e.preventDefault(); go(href); } }, text);
}

function flash(text) {
  const box = document.getElementById("flash");
  box.textContent = text;
  box.hidden = !text;
}

function fmtClock(ms) {
  if (ms === null || ms === undefined) return "";
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function fmtControl(tc) {
  if (!tc || tc.kind === "none") return "no clock";
  if (tc.kind === "fischer") return `${tc.base_ms / 60000}+${tc.increment_ms / 1000}`;
  return `${tc.ms / 1000}s a move`;
}

function playerText(p) {
  if (!p) return "(free)";
  const rating = p.guest ? "guest" : p.rating === null || p.rating === undefined ? "1500?" : Math.round(p.rating);
  return `${p.name}${p.bot ? " [bot]" : ""} (${rating})`;
}

// ---- sign-in -------------------------------------------------------------------

function renderAccount() {
  const box = document.getElementById("account");
  box.replaceChildren();
  if (arena.player) {
    box.append(h("span", { id: "me" }, `${arena.player.name}${arena.player.guest ? " (guest)" : ""}`));
    return;
  }
  const name = h("input", { id: "login-name", placeholder: "name", maxlength: 32, value: localStorage.getItem("arena.name") || "" });
  const token = h("input", { id: "login-token", placeholder: "token (optional)", type: "password", value: localStorage.getItem("arena.token") || "" });
  const form = h(
    "form",
    {
      id: "login-form",
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          await arena.login(name.value.trim(), token.value.trim() || undefined);
          localStorage.setItem("arena.name", name.value.trim());
          if (token.value.trim()) localStorage.setItem("arena.token", token.value.trim());
          flash("");
          renderAccount();
          route();
        } catch (err) {
          flash(`sign-in refused: ${err.message}`);
        }
      },
    },
    name,
    token,
    h("button", { type: "button", title: "make a strong secret token and keep it in this browser", onclick: () => { token.value = newToken(); } }, "new token"),
    h("button", { type: "submit", id: "login-submit" }, "sign in"),
  );
  box.append(form);
}

function newToken() {
  const bytes = new Uint8Array(24);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// ---- pages ----------------------------------------------------------------------

let leavePage = () => {};

function go(path) {
  history.pushState(null, "", path);
  route();
}

window.addEventListener("popstate", () => route());

function route() {
  leavePage();
  leavePage = () => {};
  main.replaceChildren();
  const path = location.pathname;
  let m;
  if ((m = path.match(/^\/game\/([A-Za-z0-9_.:-]+)$/))) leavePage = gamePage(m[1]);
  else if ((m = path.match(/^\/record\/([A-Za-z0-9_.:-]+)$/))) leavePage = recordPage(m[1]);
  else if ((m = path.match(/^\/tournament\/([A-Za-z0-9_.:-]+)$/))) leavePage = tournamentPage(m[1]);
  else leavePage = lobbyPage();
}

// The lobby: live rooms, create, quick match, invite, leaderboard, tournaments.
function lobbyPage() {
  const rooms = new Map();
  const table = h("tbody", { id: "rooms" });
  const games = arena.welcome.games;
  const draw = () => {
    table.replaceChildren(
      ...[...rooms.values()].map((r) =>
        h(
          "tr",
          { "data-room": r.room, "data-status": r.status },
          h("td", {}, link(`/game/${r.room}`, r.room)),
          h("td", {}, `${r.game} ${r.variant}${r.rules !== "standard" ? ` (${r.rules})` : ""}`),
          h("td", {}, r.seats.map((s) => h("div", { style: `color:${seatColour(s.label)}` }, playerText(s.player)))),
          h("td", {}, fmtControl(r.time_control), r.rated ? " rated" : " casual"),
          h("td", {}, r.status),
          h("td", {}, String(r.spectators)),
        ),
      ),
    );
    if (!rooms.size) table.append(h("tr", {}, h("td", { colspan: 6, class: "muted" }, "no rooms yet: create one")));
  };
  const offs = [
    arena.on("room_list", (msg) => { rooms.clear(); for (const r of msg.rooms) rooms.set(r.room, r); draw(); }),
    arena.on("room_added", (msg) => { rooms.set(msg.summary.room, msg.summary); draw(); }),
    arena.on("room_updated", (msg) => { rooms.set(msg.summary.room, msg.summary); draw(); }),
    arena.on("room_removed", (msg) => { rooms.delete(msg.room); draw(); }),
  ];
  arena.subscribeLobby().catch((err) => flash(err.message));

  const gameSel = h("select", { id: "create-game" }, games.map((g) => h("option", { value: g.game }, g.game)));
  const rulesSel = h("select", { id: "create-rules" });
  const variantSel = h("select", { id: "create-variant" });
  const seats = h("input", { id: "create-seats", type: "number", min: 1, max: 4, value: 2 });
  const clock = h(
    "select",
    { id: "create-clock" },
    h("option", { value: "none" }, "no clock"),
    h("option", { value: "fischer:60000:0" }, "1+0"),
    h("option", { value: "fischer:180000:2000" }, "3+2"),
    h("option", { value: "fischer:300000:3000" }, "5+3"),
    h("option", { value: "per_move:30000" }, "30 s a move"),
  );
  const rated = h("input", { id: "create-rated", type: "checkbox" });
  const priv = h("input", { id: "create-private", type: "checkbox" });
  const fillOptions = () => {
    const g = games.find((x) => x.game === gameSel.value);
    rulesSel.replaceChildren(...g.rule_sets.map((r) => h("option", { value: r }, r)));
    const base = g.variants.filter((v) => !["shifting", "players-choice"].includes(v));
    const extras = g.variants.filter((v) => ["shifting", "players-choice"].includes(v));
    const all = [...g.variants];
    for (const b of base.filter((v) => ["base", "big-board"].includes(v))) for (const x of extras) if (b !== "base") all.push(`${b}+${x}`);
    if (extras.length === 2) all.push("players-choice+shifting");
    variantSel.replaceChildren(...all.map((v) => h("option", { value: v }, v)));
  };
  gameSel.addEventListener("change", fillOptions);
  fillOptions();
  const timeControl = () => {
    const [kind, a, b] = clock.value.split(":");
    if (kind === "fischer") return { kind, base_ms: Number(a), increment_ms: Number(b) };
    if (kind === "per_move") return { kind, ms: Number(a) };
    return { kind: "none" };
  };
  const needLogin = () => {
    if (!arena.player) {
      flash("sign in first (a name is enough for casual games)");
      return true;
    }
    return false;
  };
  const create = h(
    "form",
    {
      id: "create-form",
      onsubmit: async (e) => {
        e.preventDefault();
        if (needLogin()) return;
        try {
          const state = await arena.request({
            type: "create_room",
            game: gameSel.value,
            rules: rulesSel.value,
            variant: variantSel.value,
            seats: Number(seats.value),
            time_control: timeControl(),
            rated: rated.checked,
            private: priv.checked,
            seat: 0,
          });
          if (state.invite) sessionStorage.setItem(`arena.invite.${state.room}`, state.invite);
          go(`/game/${state.room}`);
        } catch (err) {
          flash(`create refused: ${err.message}`);
        }
      },
    },
    h("h3", {}, "New room"),
    h("label", {}, "game ", gameSel),
    h("label", {}, "rules ", rulesSel),
    h("label", {}, "variant ", variantSel),
    h("label", {}, "players ", seats),
    h("label", {}, "clock ", clock),
    h("label", {}, rated, " rated"),
    h("label", {}, priv, " private"),
    h("button", { type: "submit", id: "create-submit" }, "create"),
  );
  const quick = h(
    "button",
    {
      id: "quick-match",
      onclick: async () => {
        if (needLogin()) return;
        try {
          const off = arena.on("matched", (msg) => { off(); go(`/game/${msg.room}`); });
          const q = await arena.request({ type: "quick_match", game: gameSel.value, rated: rated.checked, time_control: timeControl() });
          flash(`waiting for an opponent (${q.waiting ?? "?"} queued)...`);
        } catch (err) {
          flash(`quick match refused: ${err.message}`);
        }
      },
    },
    "quick match",
  );
  const invite = h("input", { id: "invite-code", placeholder: "invite code" });
  const join = h(
    "form",
    {
      onsubmit: async (e) => {
        e.preventDefault();
        if (needLogin()) return;
        try {
          const state = await arena.request({ type: "join_room", invite: invite.value.trim() });
          sessionStorage.setItem(`arena.invite.${state.room}`, invite.value.trim());
          go(`/game/${state.room}`);
        } catch (err) {
          flash(`join refused: ${err.message}`);
        }
      },
    },
    invite,
    h("button", { type: "submit" }, "join by invite"),
  );
  const board = h("tbody", { id: "leaderboard" });
  const lbGame = h("select", {}, games.map((g) => h("option", { value: g.game }, g.game)));
  const loadBoard = async () => {
    try {
      const lb = await arena.request({ type: "get_leaderboard", game: lbGame.value, limit: 20 });
      board.replaceChildren(...lb.entries.map((e) => h("tr", {}, h("td", {}, String(e.rank)), h("td", {}, `${e.name}${e.bot ? " [bot]" : ""}`), h("td", {}, String(Math.round(e.rating))), h("td", {}, String(e.games)))));
      if (!lb.entries.length) board.append(h("tr", {}, h("td", { colspan: 4, class: "muted" }, "no rated games yet")));
    } catch (err) {
      flash(err.message);
    }
  };
  lbGame.addEventListener("change", loadBoard);
  loadBoard();
  const tours = h("ul", { id: "tournaments" });
  arena
    .request({ type: "list_tournaments" })
    .then((t) => {
      tours.replaceChildren(...t.tournaments.map((x) => h("li", {}, link(`/tournament/${x.tournament}`, x.name), ` ${x.game} ${String(x.format).replace("_", " ")} · ${x.status} · ${x.players} players`)));
      if (!t.tournaments.length) tours.append(h("li", { class: "muted" }, "no tournaments"));
    })
    .catch(() => {});
  const record = h("input", { id: "record-id", placeholder: "record id" });
  main.append(
    h(
      "section",
      { class: "lobby" },
      h("div", { class: "col wide" }, h("h2", {}, "Rooms and live games"), h("table", {}, h("thead", {}, h("tr", {}, ["room", "game", "players", "clock", "status", "watching"].map((x) => h("th", {}, x)))), table)),
      h(
        "div",
        { class: "col" },
        create,
        h("div", { class: "row" }, quick, join),
        h("h3", {}, "Leaderboard ", lbGame),
        h("table", {}, board),
        h("h3", {}, "Tournaments"),
        tours,
        h("h3", {}, "Replay a game"),
        h("form", { onsubmit: (e) => { e.preventDefault(); go(`/record/${record.value.trim()}`); } }, record, h("button", { type: "submit" }, "replay")),
      ),
    ),
  );
  draw();
  return () => {
    offs.forEach((off) => off());
    arena.lobby = false;
    arena.request({ type: "lobby_unsubscribe" }).catch(() => {});
  };
}

// A room: watch it, or play in it when seated.
function gamePage(roomId) {
  let state = null; // the room as last known (room_state, then events applied)
  let lastPath = null;
  let firstPush = null; // Collecto: the first push of a double move
  let pendingCell = null; // Shifting Board: a destination waiting for its shift
  let clockAt = performance.now();
  const chat = h("ul", { id: "chat", class: "chat" });
  const moves = h("ol", { id: "moves", class: "moves" });
  const boardBox = h("div", { id: "board", class: "board-box" });
  const side = h("div", { id: "players" });
  const controls = h("div", { id: "controls", class: "controls" });
  const banner = h("div", { id: "banner", class: "banner", hidden: true });
  const info = h("div", { id: "room-info", class: "muted" });
  const chatInput = h("input", { id: "chat-input", placeholder: "say something", maxlength: 500 });
  const chatForm = h(
    "form",
    {
      onsubmit: async (e) => {
        e.preventDefault();
        if (!chatInput.value.trim()) return;
        try {
          await arena.request({ type: "chat", room: roomId, text: chatInput.value });
          chatInput.value = "";
        } catch (err) {
          flash(err.message);
        }
      },
    },
    chatInput,
    h("button", { type: "submit" }, "send"),
  );
  main.append(h("section", { class: "game" }, h("div", { class: "col wide" }, info, banner, boardBox, controls), h("div", { class: "col" }, side, h("h3", {}, "Moves"), moves, h("h3", {}, "Chat"), chat, chatForm)));

  const act = async (msg) => {
    try {
      await arena.request({ room: roomId, ...msg });
    } catch (err) {
      flash(`${msg.type}: ${err.message}`);
    }
  };
  const myTurn = () => state && state.status === "playing" && state.you !== undefined && state.you !== null && state.to_move === state.you;

  const drawBoard = () => {
    if (!state || !state.view) {
      boardBox.replaceChildren(h("p", { class: "muted" }, state && state.status === "waiting" ? "waiting for players..." : ""));
      return;
    }
    const mine = myTurn();
    let svg;
    if (state.game === "collecto") {
      svg = drawCollecto(state.view, { onPush: mine ? onPush : null, firstPush });
    } else {
      svg = drawCollapsi(state.view, { lastPath, onCell: mine ? onCell : null, selected: pendingCell });
    }
    boardBox.replaceChildren(svg);
    if (window.arenaStats.firstBoardAt === null) window.arenaStats.firstBoardAt = performance.now();
    if (pendingCell !== null) {
      boardBox.append(
        h("div", { class: "shifts", id: "shifts" }, `shift after moving to ${pendingCell}: `,
          ["<", ">", "^", "v"].map((s) => h("button", { "data-shift": s, onclick: () => { const mv = `${pendingCell}${s}`; pendingCell = null; play(mv); } }, { "<": "row left", ">": "row right", "^": "column up", v: "column down" }[s])),
          h("button", { onclick: () => { pendingCell = null; drawBoard(); } }, "cancel")),
      );
    }
  };
  const play = (move) => act({ type: "move", move });
  const onCell = (cell) => {
    const legal = state.legal_moves || [];
    if (legal.includes(String(cell))) play(String(cell));
    else if (legal.includes(`${cell}<`)) {
      pendingCell = cell;
      drawBoard();
    }
  };
  const onPush = (push) => {
    const legal = state.legal_moves || [];
    if (legal.includes(String(push))) play(String(push));
    else if (firstPush === null) {
      firstPush = push;
      drawBoard();
    } else {
      const mv = `${firstPush},${push}`;
      firstPush = null;
      play(mv);
    }
  };
  const clockText = (seat) => {
    const c = state.clock;
    if (!c) return "";
    let ms = c.remaining_ms[seat];
    if (c.running === seat && state.status === "playing") ms -= performance.now() - clockAt;
    return fmtClock(ms);
  };
  const drawSide = () => {
    if (!state) return;
    side.replaceChildren(
      h("h3", {}, "Players"),
      ...state.seats.map((s) =>
        h(
          "div",
          { class: `seat${state.to_move === s.seat && state.status === "playing" ? " to-move" : ""}`, "data-seat": s.seat },
          h("span", { class: "swatch", style: `background:${seatColour(s.label)}` }),
          h("span", { class: "seat-name" }, `${s.label}: ${playerText(s.player)}`),
          s.player && !s.connected ? h("span", { class: "muted" }, " (disconnected)") : null,
          s.ready && state.status === "waiting" ? h("span", { class: "muted" }, " ready") : null,
          h("span", { class: "clock", "data-clock": s.seat }, clockText(s.seat)),
          state.game === "collecto" && state.view ? h("span", { class: "score" }, ` ${state.view.scores?.[s.seat] ?? 0} pts, ${state.view.balls?.[s.seat] ?? 0} balls`) : null,
        ),
      ),
      h("div", { class: "muted", id: "spectators" }, `${state.spectators} watching`),
    );
  };
  const drawControls = () => {
    if (!state) return;
    const seated = state.you !== undefined && state.you !== null;
    const parts = [];
    if (!arena.player) parts.push(h("span", { class: "muted" }, "watching; sign in to play or chat"));
    if (state.status === "waiting" && arena.player && !seated && state.role === "player") {
      parts.push(h("button", { id: "take-seat", onclick: () => act({ type: "take_seat" }) }, "take a seat"));
    }
    if (state.status === "waiting" && arena.player && state.role !== "player") {
      parts.push(h("button", { id: "join-play", onclick: async () => { await act({ type: "join_room", role: "player", invite: undefined }); await act({ type: "take_seat" }); } }, "play in this room"));
    }
    if (state.status === "waiting" && seated) {
      const ready = state.seats[state.you].ready;
      parts.push(h("button", { id: "ready", onclick: () => act({ type: "ready", ready: !ready }) }, ready ? "not ready" : "ready"));
    }
    if (state.status === "playing" && seated) {
      parts.push(h("button", { id: "resign", onclick: () => { if (confirm("Resign this game?")) act({ type: "resign" }); } }, "resign"));
      parts.push(h("span", { id: "turn", class: "turn" }, myTurn() ? "your move" : "waiting for the opponent"));
    }
    if (state.status === "finished" && seated) {
      const agreed = (state.rematch || []).includes(state.you);
      const offered = (state.rematch || []).length > 0;
      if (!agreed) parts.push(h("button", { id: "rematch", onclick: () => act({ type: offered ? "accept_rematch" : "offer_rematch" }) }, offered ? "accept rematch" : "offer rematch"));
      else parts.push(h("span", { class: "muted" }, "rematch offered"));
    }
    if (state.invite) parts.push(h("span", { id: "invite" }, ` invite code: ${state.invite}`));
    if (state.record) parts.push(h("span", {}, " ", link(`/record/${state.record}`, "replay this game")));
    controls.replaceChildren(...parts);
  };
  const drawMoves = () => {
    if (!state) return;
    const labels = state.seats.map((s) => s.player?.name || s.label);
    const n = state.seats.length;
    moves.replaceChildren(...(state.history || []).map((mv, i) => h("li", {}, `${labels[i % n] ?? "?"}: ${mv}`)));
  };
  const drawBanner = () => {
    if (!state || state.status !== "finished" || !state.result) {
      banner.hidden = true;
      return;
    }
    const r = state.result;
    const winner = r.winner === null || r.winner === undefined ? "no winner" : `${state.seats[r.winner]?.player?.name || state.seats[r.winner]?.label} wins`;
    const ratings = (state.ratings || []).map((x) => `${x.name} ${Math.round(x.before)} → ${Math.round(x.after)}`).join(", ");
    banner.textContent = `Game over: ${winner} (${r.reason})${ratings ? `. ${ratings}` : ""}`;
    banner.hidden = false;
  };
  const drawInfo = () => {
    if (!state) return;
    info.textContent = `${state.room} · ${state.game} ${state.variant} (${state.rules}) · ${fmtControl(state.time_control)} · ${state.rated ? "rated" : "casual"} · ${state.status}`;
  };
  const drawAll = () => {
    drawInfo();
    drawBanner();
    drawBoard();
    drawSide();
    drawControls();
    drawMoves();
    boardBox.dataset.seq = state ? state.seq : 0;
  };
  const setClock = (clock) => {
    state.clock = clock;
    clockAt = performance.now();
  };
  const onState = (s) => {
    if (s.room !== roomId) return;
    state = { ...s };
    lastPath = null;
    if (s.clock) setClock(s.clock);
    drawAll();
  };
  const seatOf = (name) => state.seats.find((x) => x.player && x.player.name === name);
  const onEvent = (ev) => {
    if (ev.room !== roomId || !state) return;
    state.seq = ev.seq;
    switch (ev.type) {
      case "seat_taken":
        state.seats[ev.seat].player = ev.player;
        state.seats[ev.seat].ready = false;
        if (arena.player && ev.player.name === arena.player.name) state.you = ev.seat;
        break;
      case "seat_freed":
        state.seats[ev.seat].player = null;
        state.seats[ev.seat].ready = false;
        if (state.you === ev.seat) state.you = null;
        break;
      case "ready_changed":
        state.seats[ev.seat].ready = ev.ready;
        break;
      case "game_started":
        Object.assign(state, { status: "playing", game_number: ev.game_number, seats: ev.seats, setup: ev.setup, position: ev.position, view: ev.view, to_move: ev.to_move, legal_moves: ev.legal_moves, history: [], result: null, record: null, ratings: null, rematch: [] });
        if (arena.player) state.you = seatOf(arena.player.name)?.seat ?? null;
        if (ev.clock) setClock(ev.clock);
        lastPath = null;
        break;
      case "move_made": {
        const prev = state.view;
        const dest = parseInt(ev.move, 10);
        lastPath = prev && prev.paths && !/[<>^v]/.test(ev.move) ? prev.paths[String(dest)] || null : null;
        Object.assign(state, { position: ev.position, view: ev.view, to_move: ev.to_move, legal_moves: ev.legal_moves });
        state.history = [...(state.history || []), ev.move];
        if (ev.clock) setClock(ev.clock);
        firstPush = null;
        pendingCell = null;
        break;
      }
      case "player_eliminated":
        Object.assign(state, { position: ev.position, view: ev.view, to_move: ev.to_move, legal_moves: ev.legal_moves });
        if (ev.clock) setClock(ev.clock);
        break;
      case "clock_update":
        setClock(ev.clock);
        break;
      case "game_over":
        Object.assign(state, { status: "finished", result: ev.result, record: ev.record, ratings: ev.ratings, to_move: null, legal_moves: [] });
        if (state.clock) state.clock = { ...state.clock, running: null };
        if (state.view) state.view = { ...state.view, legal_cells: [], to_move: null };
        break;
      case "rematch_offered":
        state.rematch = [...(state.rematch || []), ev.seat];
        break;
      case "player_disconnected":
        state.seats[ev.seat].connected = false;
        break;
      case "player_reconnected":
        state.seats[ev.seat].connected = true;
        break;
      case "chat_message":
        chat.append(h("li", { class: ev.spectator ? "spectator" : "" }, h("b", {}, ev.name), `: ${ev.text}`));
        chat.scrollTop = chat.scrollHeight;
        break;
      case "room_closed":
        flash(`room ${roomId} closed (${ev.reason})`);
        break;
      default:
        break;
    }
    drawAll();
    window.arenaStats.eventsDrawn += 1;
  };
  const onSpectators = (msg) => {
    if (msg.room !== roomId || !state) return;
    state.spectators = msg.count; // (the live count: not a room event)
    drawSide();
  };
  const offs = [arena.on("room_state", onState), arena.on("room_event", onEvent), arena.on("spectators", onSpectators)];
  const tick = setInterval(() => {
    if (!state || !state.clock || state.status !== "playing") return;
    for (const node of side.querySelectorAll("[data-clock]")) node.textContent = clockText(Number(node.dataset.clock));
  }, 200);
  arena.track(roomId);
  const invite = sessionStorage.getItem(`arena.invite.${roomId}`);
  const open = invite && arena.player
    ? arena.request({ type: "join_room", invite, role: "player" })
    : arena.request({ type: "watch", room: roomId });
  open.catch((err) => {
    if (err instanceof ArenaError && err.code === "unknown_room") boardBox.replaceChildren(h("p", {}, `There is no room ${roomId} (it may have closed).`));
    else flash(err.message);
  });
  return () => {
    offs.forEach((off) => off());
    clearInterval(tick);
    // a spectator leaves with the page; a player too once the game is over (a
    // tournament's next pairing opens a new room, and rooms count towards a limit)
    if (state && (state.role === "spectator" || state.status === "finished")) {
      arena.forget(roomId);
      arena.request({ type: "leave_room", room: roomId }).catch(() => {});
    }
  };
}

// A finished game, step by step (the server replays it and sends the view of every ply).
function recordPage(recordId) {
  let ply = 0;
  let rec = null;
  const boardBox = h("div", { id: "board", class: "board-box" });
  const label = h("div", { id: "ply", class: "muted" });
  const moves = h("ol", { id: "moves", class: "moves" });
  const show = (n) => {
    ply = Math.max(0, Math.min(n, rec.views.length - 1));
    const view = rec.views[ply];
    let lastPath = null;
    if (ply > 0 && rec.data.game === "collapsi") {
      const mv = rec.data.moves[ply - 1];
      const prev = rec.views[ply - 1];
      if (!/[<>^v]/.test(mv) && prev.paths) lastPath = prev.paths[String(parseInt(mv, 10))] || null;
    }
    boardBox.replaceChildren(rec.data.game === "collecto" ? drawCollecto(view) : drawCollapsi(view, { lastPath }));
    boardBox.dataset.ply = ply;
    label.textContent = `move ${ply} of ${rec.views.length - 1}`;
    [...moves.children].forEach((li, i) => li.classList.toggle("current", i === ply - 1));
  };
  const nav = h(
    "div",
    { class: "controls" },
    h("button", { id: "first", onclick: () => show(0) }, "⏮"),
    h("button", { id: "prev", onclick: () => show(ply - 1) }, "◀"),
    h("button", { id: "next", onclick: () => show(ply + 1) }, "▶"),
    h("button", { id: "last", onclick: () => show(rec.views.length - 1) }, "⏭"),
  );
  const onKey = (e) => {
    if (!rec) return;
    if (e.key === "ArrowLeft") show(ply - 1);
    if (e.key === "ArrowRight") show(ply + 1);
  };
  document.addEventListener("keydown", onKey);
  const head = h("div", {});
  main.append(h("section", { class: "game" }, h("div", { class: "col wide" }, head, boardBox, nav, label), h("div", { class: "col" }, h("h3", {}, "Moves"), moves)));
  arena
    .request({ type: "get_record", record: recordId, views: true })
    .then((r) => {
      rec = r;
      const d = r.data;
      const res = d.result;
      const winner = res && res.winner !== null && res.winner !== undefined ? `${d.players[res.winner]} won` : "no winner";
      head.replaceChildren(h("h2", {}, `${d.players.join(" vs ")}`), h("p", { class: "muted" }, `${d.game} ${d.variant} (${d.rules}) · ${winner}${res ? ` (${res.reason})` : ""} · ${r.rated ? "rated" : "casual"}`));
      moves.replaceChildren(...d.moves.map((mv, i) => h("li", { onclick: () => show(i + 1) }, `${d.players[i % d.players.length]}: ${mv}`)));
      show(0);
    })
    .catch((err) => head.replaceChildren(h("p", {}, `No record ${recordId}: ${err.message}`)));
  return () => document.removeEventListener("keydown", onKey);
}

// A tournament: its summary, live standings (tournament_subscribe) and every game,
// each one to watch while it is played and to replay once it is over.
function tournamentPage(id) {
  const head = h("h2", { id: "tournament-head" }, `Tournament ${id}`);
  const facts = h("p", { id: "tournament-facts", class: "muted" });
  const actions = h("div", { class: "row", id: "tournament-actions" });
  const rows = h("tbody", { id: "standings" });
  const games = h("tbody", { id: "tournament-games" });
  let last = null;
  const draw = (s) => {
    last = s;
    const t = s.summary || {};
    const rounds = t.format === "arena" ? "" : ` · round ${s.round ?? 0}${t.rounds ? ` of ${t.rounds}` : ""}`;
    head.textContent = `${t.name || `Tournament ${id}`} · ${s.status}${t.cancelled ? " (cancelled)" : ""}${rounds}`;
    head.dataset.status = s.status;
    const ends = t.ends_at && s.status === "running" ? ` · ends ${new Date(t.ends_at).toLocaleTimeString()}` : "";
    const starts = t.starts_at && s.status === "open" ? ` · starts ${new Date(t.starts_at).toLocaleTimeString()}` : "";
    facts.textContent = t.game
      ? `${t.game} ${t.variant}${t.rules && t.rules !== "standard" ? ` (${t.rules})` : ""} · ${String(t.format).replace("_", " ")} · ${t.players}${t.max_players ? `/${t.max_players}` : ""} players · ${fmtControl(t.time_control)} · ${t.rated ? "rated" : "casual"}${starts}${ends}`
      : "";
    rows.replaceChildren(
      ...s.rows.map((r) =>
        h(
          "tr",
          { "data-name": r.name, class: r.withdrawn ? "muted" : "" },
          h("td", {}, String(r.rank)),
          h("td", {}, r.name, r.withdrawn ? " (withdrawn)" : ""),
          h("td", { class: "points" }, String(r.points)),
          h("td", {}, String(r.games)),
          h("td", {}, `${r.wins}/${r.draws}/${r.losses}`),
          h("td", {}, String(r.tiebreak ?? "")),
        ),
      ),
    );
    if (!s.rows.length) rows.append(h("tr", {}, h("td", { colspan: 6, class: "muted" }, "no entries yet")));
    const list = [...(s.games || [])].reverse(); // newest first: the live games on top
    games.replaceChildren(
      ...list.map((g) =>
        h(
          "tr",
          { "data-room": g.room || "", "data-status": g.status },
          h("td", {}, String(g.round ?? "")),
          h("td", {}, g.players.map((p, i) => h("div", {}, p, g.points ? ` (${g.points[i]})` : ""))),
          h(
            "td",
            {},
            g.status === "playing" && g.room
              ? link(`/game/${g.room}`, "watch live")
              : g.record
                ? link(`/record/${g.record}`, `replay (${String(g.reason ?? "over").replace("_", " ")})`)
                : g.reason ?? g.status,
          ),
        ),
      ),
    );
    if (!list.length) games.append(h("tr", {}, h("td", { colspan: 3, class: "muted" }, "no games yet")));
    drawActions();
  };
  const drawActions = () => {
    const s = last;
    actions.replaceChildren();
    if (!s || s.status === "finished") return;
    if (!arena.player || arena.player.guest) {
      actions.append(h("span", { class: "muted" }, "sign in with a name and token to enter"));
      return;
    }
    const me = s.rows.find((r) => r.name === arena.player.name);
    const entered = me && !me.withdrawn;
    const ask = (type, done) => async () => {
      try {
        await arena.request({ type, tournament: id });
        flash(done);
      } catch (err) {
        flash(`${type.replace("_", " ")} refused: ${err.message}`);
      }
    };
    actions.append(
      entered
        ? h("button", { id: "tournament-leave", onclick: ask("leave_tournament", "withdrawn") }, "withdraw")
        : h("button", { id: "tournament-join", onclick: ask("join_tournament", "entered: your games open here") }, "enter"),
    );
  };
  const subscribe = () =>
    arena
      .request({ type: "tournament_subscribe", tournament: id })
      .then(draw)
      .catch((err) => {
        head.textContent = `Tournament ${id}: ${err.message}`;
      });
  main.append(
    h(
      "section",
      { class: "tournament" },
      h(
        "div",
        { class: "col wide" },
        head,
        facts,
        actions,
        h("h3", {}, "Standings"),
        h("table", {}, h("thead", {}, h("tr", {}, ["rank", "name", "points", "games", "w/d/l", "tiebreak"].map((x) => h("th", {}, x)))), rows),
      ),
      h("div", { class: "col" }, h("h3", {}, "Games"), h("table", {}, h("thead", {}, h("tr", {}, ["round", "players", ""].map((x) => h("th", {}, x)))), games)),
    ),
  );
  subscribe();
  const offs = [
    arena.on("standings", (s) => { if (s.tournament === id) draw(s); }),
    arena.on("resumed", subscribe), // subscriptions end with the connection
    arena.on("logged_in", () => { subscribe(); }),
  ];
  return () => {
    offs.forEach((off) => off());
    arena.request({ type: "tournament_unsubscribe", tournament: id }).catch(() => {});
  };
}

// ---- start -------------------------------------------------------------------

arena.on("status", (status) => {
  const dot = document.getElementById("status");
  dot.textContent = status;
  dot.dataset.status = status;
});
arena.on("logged_in", () => renderAccount());
arena.on("resumed", () => renderAccount());
arena.on("error", (msg) => flash(`${msg.code}: ${msg.message}`));
// a tournament pairing: the server seated us in a new room; open it, wherever we are
arena.on("matched", (msg) => {
  if (msg.tournament && location.pathname !== `/game/${msg.room}`) go(`/game/${msg.room}`);
});
arena.on("goodbye", (msg) => flash(`server: ${msg.reason}${msg.message ? ` (${msg.message})` : ""}`));

arena
  .connect()
  .then(() => {
    renderAccount();
    route();
  })
  .catch((err) => {
    main.replaceChildren(h("p", {}, `Cannot reach the arena: ${err.message}`));
  });

export { arena, ballColour };
