// The board's glue: which part of the graph is drawn (all of it, or around the position on
// a big graph), the render request for the position shown, and the SVG handed to the board
// (board.js), keeping its zoom and pan when only the tokens changed. The drawing is fetched
// first (`prepare`, which changes nothing on screen) and shown when the page commits the
// state it was drawn for (`show`), so that a failed drawing leaves the board as it was.

import { moveTargets, positionText, successors } from "./rules.js";
import { currentView } from "./session.js";
import * as server from "./server.js";

const AROUND_FROM = 40; // graphs with more vertices are drawn around the position
const DRAWABLE = 300; // the renderer's limit (src/render MAX_SVG_VERTICES)

const $ = (id) => document.getElementById(id);

// The part of the graph drawn: all of it (null), or (big graphs) the vertices within
// `radius` moves of the tokens, and the last move's source and targets.
function drawnPart(session, view) {
  const { graph, offsets } = session;
  const n = graph.outDegrees.length;
  const whole = n <= AROUND_FROM || ($("whole-graph").checked && n <= DRAWABLE);
  if (whole) return null;
  const entry = session.history[session.cursor];
  const last = session.cursor > 0 && entry.from !== undefined ? [entry.from, ...moveTargets(entry)] : [];
  const radius = Number($("radius").value);
  let centre = session.game === "chess" ? [...new Set(view.position)]
    : view.position.flatMap((x, i) => (x > 0 ? [i] : []));
  if (centre.length === 0) centre = [0];
  const distance = new Map(centre.map((c) => [c, 0]));
  let frontier = centre;
  for (let d = 1; d <= radius && distance.size < DRAWABLE; d++) {
    const next = [];
    for (const u of frontier) {
      for (const w of successors(u, graph, offsets)) {
        if (!distance.has(w) && distance.size < DRAWABLE) { distance.set(w, d); next.push(w); }
      }
    }
    frontier = next;
  }
  for (const v of last) distance.set(v, 0);
  return [...distance.keys()].sort((a, b) => a - b);
}

// The render request for the position shown: the part drawn renumbered, its tokens, the
// server's move (with hints) and the last move.
function renderRequest(session, view, hints) {
  const { graph, offsets } = session;
  const n = graph.outDegrees.length;
  let perVertex = view.position;
  if (session.game === "chess") {
    perVertex = new Array(n).fill(0);
    for (const t of view.position) perVertex[t] += 1;
  }
  const part = drawnPart(session, view);
  const ids = part || [...Array(n).keys()];
  const index = new Map(ids.map((id, i) => [id, i]));
  const outDegrees = [], targets = [], partial = [];
  for (const id of ids) {
    const all = successors(id, graph, offsets);
    const kept = all.filter((w) => index.has(w));
    outDegrees.push(kept.length);
    for (const w of kept) targets.push(index.get(w));
    if (kept.length < all.length) partial.push(index.get(id));
  }
  const move = (m) => {
    if (!m || m.from === undefined) return null;
    const to = moveTargets(m);
    if (!index.has(m.from) || !to.every((w) => index.has(w))) return null;
    return { from: index.get(m.from), to: to.map((w) => index.get(w)) };
  };
  const entry = session.history[session.cursor];
  const unit = session.game === "chess" ? "tokens" : "values";
  const outcome = !hints ? "" : session.misere ? `: ${view.verdict.outcome} (misère)`
    : `: ${view.verdict.outcome}, nim-sum ${view.verdict.nimSum}`;
  const body = {
    out_degrees: outDegrees,
    targets,
    split_counts: graph.splitCounts ? ids.map((id) => graph.splitCounts[id]) : [],
    values: ids.map((id) => session.values[id])
      .map((x) => (x.misere ? { misere: x.misere } : x.infinite ? { infinite: x.infinite } : { finite: x.finite })),
    tokens: ids.map((id) => perVertex[id]),
    highlight: hints ? move(view.suggestion) : null,
    last_move: session.cursor > 0 ? move(entry) : null,
    vertex_ids: part ? ids : [],
    partial,
    legend: false, // the page explains the board beside it (#legend)
    caption: `${session.game} · ${unit} ${positionText(view.position) || "(none)"}${outcome}`
      + (part ? ` · ${ids.length} of ${n} vertices, within ${$("radius").value} moves` : ""),
  };
  return { body, shape: JSON.stringify([ids, outDegrees, targets]), focus: ids.filter((id) => perVertex[id] > 0) };
}

const SVG = "http://www.w3.org/2000/svg";

// The position's moves on the board (with hints): each edge of a listed move gets the
// class of what its best move there leads to for the mover (move-win, move-draw,
// move-lose; the list is best first), "best" when that move is as good as the first, and
// a title that says so. The server's move and the last move keep their own look.
function markMoves(svg, view) {
  const [first] = view.moves;
  const byEdge = new Map();
  for (const m of view.moves) {
    for (const w of moveTargets(m)) if (!byEdge.has(`${m.from}>${w}`)) byEdge.set(`${m.from}>${w}`, m);
  }
  for (const path of svg.querySelectorAll("path.edge:not(.move):not(.last)")) {
    const m = byEdge.get(`${path.dataset.from}>${path.dataset.to}`);
    if (!m) continue;
    path.classList.add(`move-${m.outcome}`);
    const best = m.outcome === first.outcome && m.remoteness === first.remoteness;
    if (best) path.classList.add("best");
    const title = document.createElementNS(SVG, "title");
    title.textContent = `${m.label}: ${m.outcome}s for the mover${best ? " (a best move)" : ""}`;
    path.append(title);
  }
}

// Says why "whole graph" cannot apply to a graph over the renderer's limit.
function showAroundControls(session) {
  const n = session.graph ? session.graph.outDegrees.length : 0;
  $("around-controls").hidden = n <= AROUND_FROM;
  const tooBig = n > DRAWABLE;
  $("whole-graph").disabled = tooBig;
  if (tooBig) $("whole-graph").checked = false;
  $("whole-note").textContent = tooBig ? `(up to ${DRAWABLE} vertices: this graph has ${n}, so it is drawn around the position)` : "";
}

// Draws the session's position on `board`.
export function createBoardView(board) {
  let drawnShape = null; // what the board shows, to keep zoom and pan when only tokens change

  // The drawing of `session`'s position, fetched; nothing changes on screen. Throws when
  // the server cannot draw it.
  async function prepare(session, { hints, token, signal }) {
    const view = currentView(session);
    if (!session.graph || !view) return { session, empty: true };
    const { body, shape, focus } = renderRequest(session, view, hints);
    const text = await server.render(body, { token, signal });
    return { session, text, shape, focus, hints };
  }

  // Shows a prepared drawing (the session it was drawn for is the page's now).
  function show({ session, empty, text, shape, focus, hints }) {
    showAroundControls(session);
    if (empty) return;
    board.show(text, { keepView: shape === drawnShape, focus, hints });
    drawnShape = shape;
    const svg = board.element();
    if (hints && svg) markMoves(svg, currentView(session));
    board.mark(session.selected);
  }

  function clear(message) {
    drawnShape = null;
    showAroundControls({ graph: null });
    board.clear(message);
  }

  return { prepare, show, clear, mark: board.mark, zoom: board.zoom, fit: board.fit };
}
