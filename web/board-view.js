// The board's glue: which part of the graph is drawn (all of it, or around the position on
// a big graph), the render request for the position shown, and the SVG handed to the board
// (board.js), keeping its zoom and pan when only the tokens changed.

import { positionText, successors } from "./rules.js";
import { currentView } from "./session.js";
import * as server from "./server.js";

const AROUND_FROM = 40; // graphs with more vertices are drawn around the position
const DRAWABLE = 300; // the renderer's limit (src/render MAX_SVG_VERTICES)

const $ = (id) => document.getElementById(id);

// The part of the graph drawn: all of it (null), or (big graphs) the vertices within
// `radius` moves of the tokens.
function drawnPart(session, view) {
  const { graph, offsets } = session;
  const n = graph.outDegrees.length;
  const whole = n <= AROUND_FROM || ($("whole-graph").checked && n <= DRAWABLE);
  if (whole) return null;
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
    if (!m || !index.has(m.from) || !m.to.every((w) => index.has(w))) return null;
    return { from: index.get(m.from), to: m.to.map((w) => index.get(w)) };
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

// Draws the session's position on `board`.
export function createBoardView(board) {
  let drawnShape = null; // what the board shows, to keep zoom and pan when only tokens change

  async function draw(session, { hints, token }) {
    $("around-controls").hidden = !(session.graph && session.graph.outDegrees.length > AROUND_FROM);
    const view = currentView(session);
    if (!session.graph || !view) return;
    const { body, shape, focus } = renderRequest(session, view, hints);
    const { ok, text } = await server.render(body, token);
    if (!ok) {
      board.clear(text);
      drawnShape = null;
      return;
    }
    board.show(text, { keepView: shape === drawnShape, focus });
    drawnShape = shape;
    board.mark(session.selected);
  }

  function clear(message) {
    drawnShape = null;
    board.clear(message);
  }

  return { draw, clear, mark: board.mark, zoom: board.zoom, fit: board.fit };
}
