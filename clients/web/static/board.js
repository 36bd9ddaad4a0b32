// Boards drawn as SVG from the server's structured `view` (PROTOCOL.md, Game payloads).
// Every cell and pawn carries data-* attributes with what it shows, so tests (and
// assistive tools) can read the board back from the page.

const SVG = "http://www.w3.org/2000/svg";
export const SEAT_COLOURS = { red: "#d33b3b", blue: "#2f6fdb", green: "#2e9e4f", yellow: "#e0b000", player: "#8a4fd6" };
const BALL_COLOURS = { 1: "#2f6fdb", 2: "#f2c200", 3: "#d33b3b", 4: "#f08a24", 5: "#8a4fd6", 6: "#2e9e4f" };
const BALL_LETTERS = { 1: "B", 2: "Y", 3: "R", 4: "O", 5: "P", 6: "G" };

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

export function seatColour(label) {
  return SEAT_COLOURS[label] || "#666";
}

// Collapsi: cards, collapsed cards, pawns, legal destinations, the last move's path.
// onCell(cell) is called for a click on a legal destination (null: read only).
export function drawCollapsi(view, { lastPath = null, onCell = null, selected = null } = {}) {
  const size = 64;
  const pad = 18;
  const w = view.width;
  const h = view.height;
  const svg = el("svg", {
    viewBox: `0 0 ${w * size + 2 * pad} ${h * size + 2 * pad}`,
    class: "board collapsi",
    role: "img",
    "aria-label": `Collapsi board, ${view.position}`,
    "data-position": view.position,
  });
  const collapsed = new Set(view.collapsed);
  const legal = new Set(onCell ? view.legal_cells || [] : []);
  const pawnAt = new Map();
  (view.pawns || []).forEach((cell, seat) => {
    if (cell !== null && cell !== undefined) pawnAt.set(cell, seat);
  });
  for (let c = 0; c < w; c++) svg.append(el("text", { x: pad + c * size + size / 2, y: 13, class: "coord" }, String.fromCharCode(97 + c)));
  for (let r = 0; r < h; r++) svg.append(el("text", { x: 8, y: pad + r * size + size / 2 + 4, class: "coord" }, String(h - r)));
  for (let cell = 0; cell < w * h; cell++) {
    const x = pad + (cell % w) * size;
    const y = pad + Math.floor(cell / w) * size;
    const card = view.cards[cell];
    const isCollapsed = collapsed.has(cell);
    const g = el("g", {
      class: `cell${isCollapsed ? " collapsed" : ""}${legal.has(cell) ? " legal" : ""}${selected === cell ? " selected" : ""}`,
      "data-cell": cell,
      "data-card": card,
      "data-collapsed": isCollapsed ? 1 : 0,
      "data-legal": legal.has(cell) ? 1 : 0,
    });
    g.append(el("rect", { x: x + 3, y: y + 3, width: size - 6, height: size - 6, rx: 7 }));
    if (!isCollapsed) g.append(el("text", { x: x + size / 2, y: y + size / 2 + 9, class: "card" }, card));
    g.append(el("text", { x: x + 8, y: y + 15, class: "cellno" }, String(cell)));
    if (view.exit === cell) g.append(el("text", { x: x + size - 10, y: y + 15, class: "exit" }, "exit"));
    if (legal.has(cell)) {
      g.addEventListener("click", () => onCell(cell));
      g.setAttribute("tabindex", "0");
      g.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") onCell(cell);
      });
    }
    svg.append(g);
  }
  if (lastPath && lastPath.length > 1) {
    const pts = [];
    for (let i = 0; i < lastPath.length; i++) {
      const cell = lastPath[i];
      const cx = pad + (cell % w) * size + size / 2;
      const cy = pad + Math.floor(cell / w) * size + size / 2;
      if (i > 0) {
        const prev = lastPath[i - 1];
        const dx = Math.abs((prev % w) - (cell % w));
        const dy = Math.abs(Math.floor(prev / w) - Math.floor(cell / w));
        if (dx > 1 || dy > 1) {
          // a step across the torus's edge: start a new segment
          svg.append(el("polyline", { points: pts.join(" "), class: "path" }));
          pts.length = 0;
        }
      }
      pts.push(`${cx},${cy}`);
    }
    svg.append(el("polyline", { points: pts.join(" "), class: "path", "data-path": lastPath.join(",") }));
  }
  for (const [cell, seat] of pawnAt) {
    const label = view.seats[seat];
    svg.append(
      el("circle", {
        cx: pad + (cell % w) * size + size / 2,
        cy: pad + Math.floor(cell / w) * size + size / 2,
        r: size * 0.26,
        fill: seatColour(label),
        class: `pawn${view.to_move === seat ? " to-move" : ""}`,
        "data-seat": seat,
        "data-cell": cell,
      }),
    );
  }
  return svg;
}

// Collecto: balls in colour with a letter each, push arrows with their numbers.
// onPush(push) is called for a click on a push that is legal now (first of a pair too).
export function drawCollecto(view, { onPush = null, firstPush = null } = {}) {
  const size = 52;
  const pad = 40;
  const n = 7;
  const svg = el("svg", {
    viewBox: `0 0 ${n * size + 2 * pad} ${n * size + 2 * pad}`,
    class: "board collecto",
    role: "img",
    "aria-label": "Collecto board",
    "data-position": view.board,
  });
  svg.append(el("rect", { x: pad, y: pad, width: n * size, height: n * size, class: "felt", rx: 6 }));
  for (let cell = 0; cell < n * n; cell++) {
    const colour = Number(view.board[cell]);
    const x = pad + (cell % n) * size + size / 2;
    const y = pad + Math.floor(cell / n) * size + size / 2;
    const g = el("g", { class: "ball-cell", "data-cell": cell, "data-ball": colour });
    if (colour) {
      g.append(el("circle", { cx: x, cy: y, r: size * 0.4, fill: BALL_COLOURS[colour], class: "ball" }));
      g.append(el("text", { x, y: y + 5, class: "ball-letter" }, BALL_LETTERS[colour]));
    }
    svg.append(g);
  }
  const legal = legalPushes(view, firstPush);
  const arrow = (push, x, y, glyph) => {
    const ok = onPush && legal.has(push);
    const g = el("g", { class: `push${ok ? " legal" : ""}${firstPush === push ? " selected" : ""}`, "data-push": push, "data-legal": ok ? 1 : 0 });
    g.append(el("rect", { x: x - 15, y: y - 15, width: 30, height: 30, rx: 5 }));
    g.append(el("text", { x, y: y - 1, class: "glyph" }, glyph));
    g.append(el("text", { x, y: y + 11, class: "pushno" }, String(push)));
    if (ok) {
      g.addEventListener("click", () => onPush(push));
      g.setAttribute("tabindex", "0");
    }
    svg.append(g);
  };
  for (let i = 0; i < n; i++) {
    const mid = pad + i * size + size / 2;
    arrow(i, pad / 2, mid, "◀"); // row i left
    arrow(7 + i, pad + n * size + pad / 2, mid, "▶"); // row i right
    arrow(14 + i, mid, pad / 2, "▲"); // column i up
    arrow(21 + i, mid, pad + n * size + pad / 2, "▼"); // column i down
  }
  return svg;
}

// Pushes that can be clicked now: the single moves, or the first (then second) of a double.
function legalPushes(view, firstPush) {
  const legal = view.legal || { single: [], double: [] };
  if (legal.single && legal.single.length) return new Set(legal.single);
  const pairs = legal.double || [];
  if (firstPush === null || firstPush === undefined) return new Set(pairs.map((p) => p[0]));
  return new Set(pairs.filter((p) => p[0] === firstPush).map((p) => p[1]));
}

export function ballColour(digit) {
  return BALL_COLOURS[digit];
}
