// The arena connection: protocol v1 in JSON text frames (protocol/PROTOCOL.md).
// One request, one reply (matched by id); room events applied once, in seq order;
// a dropped connection reconnects by itself and resumes (players) or watches again
// from the last seq (spectators), so no event is missed.

const RESUME_KEY = "arena.resume";

export class ArenaError extends Error {
  constructor(code, message, retryAfter) {
    super(message || code);
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

export class Arena {
  constructor(url) {
    this.url = url;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject}
    this.listeners = new Map(); // type -> Set(fn)
    this.rooms = new Map(); // room -> {seq, kept: Map(seq -> event), ready}
    this.welcome = null;
    this.player = null; // logged_in.player
    this.credentials = null; // {name, token} of the last login, to log in again
    this.resumeToken = sessionStorage.getItem(RESUME_KEY);
    this.status = "connecting";
    this.closedByUs = false;
    this.backoff = 250;
    this.lobby = false; // subscribed to the lobby: subscribe again after a reconnect
  }

  on(type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type).add(fn);
    return () => this.listeners.get(type).delete(fn);
  }

  emit(type, msg) {
    for (const fn of this.listeners.get(type) || []) {
      try {
        fn(msg);
      } catch (err) {
        console.error(err);
      }
    }
  }

  setStatus(status) {
    this.status = status;
    this.emit("status", status);
  }

  // Open the socket and say hello; after a drop, take the session back.
  connect() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url);
      this.ws = ws;
      let opened = false;
      ws.onopen = async () => {
        opened = true;
        try {
          this.welcome = await this.request({ type: "hello", versions: [1], software: "arena-web/1" });
          this.backoff = 250;
          await this.restore();
          this.setStatus("online");
          resolve(this);
        } catch (err) {
          reject(err);
        }
      };
      ws.onmessage = (ev) => this.receive(ev.data);
      ws.onclose = () => {
        for (const { reject: fail } of this.pending.values()) fail(new ArenaError("closed", "connection closed"));
        this.pending.clear();
        if (!opened) reject(new ArenaError("closed", "could not connect"));
        if (this.closedByUs) return;
        this.setStatus("reconnecting");
        setTimeout(() => this.connect().catch(() => {}), this.backoff);
        this.backoff = Math.min(this.backoff * 2, 4000);
      };
    });
  }

  // After a reconnect: resume the session (or log in again), then catch every room up.
  async restore() {
    const rooms = [...this.rooms.entries()];
    if (this.player && this.resumeToken) {
      try {
        const resumed = await this.request({
          type: "resume",
          token: this.resumeToken,
          rooms: rooms.map(([room, r]) => ({ room, seq: r.seq })),
        });
        this.adoptSession(resumed);
        this.emit("resumed", resumed);
        if (this.lobby) await this.subscribeLobby();
        return;
      } catch (err) {
        if (!(err instanceof ArenaError) || err.code !== "unknown_session") throw err;
      }
    }
    this.resumeToken = this.welcome.resume_token;
    if (this.player && this.credentials) await this.login(this.credentials.name, this.credentials.token);
    for (const [room, r] of rooms) {
      try {
        await this.request({ type: "watch", room, since_seq: r.seq });
      } catch (err) {
        this.rooms.delete(room);
        this.emit("room_lost", { room, error: err });
      }
    }
    if (this.lobby) await this.subscribeLobby();
  }

  adoptSession(msg) {
    this.player = msg.player;
    if (msg.resume_token) this.resumeToken = msg.resume_token;
    sessionStorage.setItem(RESUME_KEY, this.resumeToken || "");
  }

  send(msg) {
    this.ws.send(JSON.stringify(msg));
  }

  request(msg) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(new ArenaError("closed", "not connected"));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.send({ ...msg, id });
    });
  }

  async login(name, token) {
    const msg = { type: "login", name };
    if (token) msg.token = token;
    const reply = await this.request(msg);
    this.credentials = { name, token };
    if (!reply.resume_token) reply.resume_token = this.welcome.resume_token;
    this.adoptSession(reply);
    this.emit("logged_in", reply);
    return reply;
  }

  async subscribeLobby() {
    this.lobby = true;
    const list = await this.request({ type: "lobby_subscribe" });
    this.emit("room_list", list);
    return list;
  }

  // Watch (or join) a room: from now on its events are tracked by seq.
  track(room) {
    if (!this.rooms.has(room)) this.rooms.set(room, { seq: 0, kept: new Map(), ready: false });
  }

  forget(room) {
    this.rooms.delete(room);
  }

  receive(text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (msg.type === "room_state") this.applyState(msg);
    else if (msg.type === "catch_up") for (const ev of msg.events || []) this.applyEvent(ev);
    else if (msg.room !== undefined && msg.seq !== undefined) this.applyEvent(msg);
    else if (msg.re === undefined || !this.pending.has(msg.re)) this.emit(msg.type, msg);
    if (msg.re !== undefined && this.pending.has(msg.re)) {
      const { resolve, reject } = this.pending.get(msg.re);
      if (msg.type === "catch_up" && msg.more) return; // the last page is the reply
      this.pending.delete(msg.re);
      if (msg.type === "error") reject(new ArenaError(msg.code, msg.message, msg.retry_after));
      else resolve(msg);
    }
  }

  applyState(state) {
    this.track(state.room);
    const r = this.rooms.get(state.room);
    r.seq = state.seq;
    r.ready = true;
    this.emit("room_state", state);
    this.drain(state.room);
  }

  applyEvent(ev) {
    const r = this.rooms.get(ev.room);
    if (!r) return;
    if (ev.type === "room_closed") {
      this.rooms.delete(ev.room);
      this.emit("room_event", ev);
      return;
    }
    if (!r.ready || ev.seq <= r.seq) return;
    if (ev.seq > r.seq + 1) {
      r.kept.set(ev.seq, ev);
      this.request({ type: "watch", room: ev.room, since_seq: r.seq }).catch(() => {});
      return;
    }
    r.seq = ev.seq;
    this.emit("room_event", ev);
    this.drain(ev.room);
  }

  drain(room) {
    const r = this.rooms.get(room);
    while (r && r.kept.has(r.seq + 1)) {
      const ev = r.kept.get(r.seq + 1);
      r.kept.delete(r.seq + 1);
      r.seq = ev.seq;
      this.emit("room_event", ev);
    }
    if (r) for (const seq of [...r.kept.keys()]) if (seq <= r.seq) r.kept.delete(seq);
  }
}

export function serverUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/`;
}
