// The playground page: load a game, draw it (POST /render, the renderer of `grundy render`),
// evaluate a position and every move from it (EvaluateBatch over gRPC-Web), play the server.
//
// Every step that asks the server something computes the whole next state first and
// commits it only when every request has succeeded: a failed request changes nothing (the
// error is shown, the position, the history and a game in progress stay as they were).
//
// For tests and people alike the page exposes its state in attributes: body[data-busy] while
// requests are in flight, #verdict[data-outcome][data-nim-sum][data-remoteness],
// #moves li[data-outcome][data-remoteness] ("hidden" while hints are hidden in a game),
// #game-status[data-result] ("you", "server", "draw" or "stopped") once a game is over,
// #position-shown (the position as text), #board[data-scale] (the zoom).
"use strict";

const SAMPLE = `4
2 1 2
0
1 3
0
1 0
2 0 2
0

4
1 1
1 2
0
0
2 0 1
2 1 1
3 0 1 3
0
`;

const MAX_LISTED_MOVES = 256; // Addition-Subtraction moves grow as 2^out-degree
const MAX_PLIES = 400; // a game on a cyclic graph can go on for ever
const AROUND_FROM = 40; // graphs with more vertices are drawn around the position
const DRAWABLE = 300; // the renderer's limit (src/render MAX_SVG_VERTICES)

const $ = (id) => document.getElementById(id);

const state = {
  cases: [],
  game: "chess",
  graph: null, // {outDegrees, targets, splitCounts?}
  offsets: [],
  values: [],
  // history[i] = {view, label, by, from, to}: view = {position, verdict, moves, suggestion,
  // omitted}; entry 0 is where the history starts, each later one a move.
  history: [],
  cursor: 0,
  play: null, // {humanFirst, start}: a game from history[start]
  selected: null, // the vertex picked on the board as the source of a move
  drawnGraph: null, // what the board shows, to keep zoom and pan when only tokens change
};

function token() { return $("auth-token").value.trim(); }
function view() { return state.history[state.cursor] && state.history[state.cursor].view; }
function hintsShown() { return !state.play || !$("hide-hints").checked; }

function offsetsOf(graph) {
  const offsets = [0];
  for (const d of graph.outDegrees) offsets.push(offsets[offsets.length - 1] + d);
  return offsets;
}
function successors(v, graph = state.graph, offsets = state.offsets) {
  return graph.targets.slice(offsets[v], offsets[v] + graph.outDegrees[v]);
}

// Runs an async step with the busy flag set and errors shown.
async function busy(step) {
  document.body.dataset.busy = "1";
  $("input-error").textContent = "";
  try {
    await step();
  } catch (error) {
    $("input-error").textContent = String(error.message || error);
  } finally {
    delete document.body.dataset.busy;
  }
}

// ---- loading ----
// Forgets the graph (after a Load that failed: nothing of the old game stays on screen).
function clearAll(message) {
  state.graph = null;
  state.cases = [];
  state.history = [];
  state.cursor = 0;
  state.play = null;
  state.selected = null;
  state.drawnGraph = null;
  $("case-select").replaceChildren();
  $("query-select").replaceChildren();
  showAll();
  board.clear(message);
}

async function load() {
  const game = document.querySelector("input[name=game]:checked").value;
  const text = $("judge-input").value;
  let cases;
  try {
    cases = game === "chess" ? Judge.parseChess(text) : Judge.parseAddsub(text);
    if (cases.length === 0) throw new Error("no test case in the input");
    await selectCase(cases, game, 0);
  } catch (error) {
    clearAll("Nothing to draw: the input could not be loaded (see the message on the left).");
    throw error;
  }
}

// Registers a test case's graph, gets its values and evaluates its first query; commits
// only if all of that succeeds.
async function selectCase(cases, game, index) {
  const c = cases[index];
  const graph = { outDegrees: c.outDegrees, targets: c.targets, splitCounts: c.splitCounts };
  const offsets = offsetsOf(graph);
  const { graphId } = await Grpc.putGraph(graph, token());
  const { values } = await Grpc.getValues(graphId, token());
  const first = c.positions[0];
  const position = first ? [...first] : emptyPosition(game, graph);
  const start = await analyse(position, { game, graph, offsets });
  Object.assign(state, { cases, game, graph, offsets, values, play: null, selected: null });
  state.caseIndex = index;
  state.history = [{ view: start, label: "start", by: null }];
  state.cursor = 0;
  fillSelects();
  await showAll();
}

function emptyPosition(game, graph) {
  return game === "chess" ? [] : new Array(graph.outDegrees.length).fill(0);
}

function fillSelects() {
  $("case-select").replaceChildren(...state.cases.map((c, i) => {
    const option = document.createElement("option");
    option.value = i;
    option.textContent = `${i + 1}: ${c.outDegrees.length} vertices`;
    option.selected = i === state.caseIndex;
    return option;
  }));
  const queries = state.cases[state.caseIndex].positions;
  const unit = state.game === "chess" ? "tokens" : "values";
  $("query-select").replaceChildren(...queries.map((q, i) => {
    const option = document.createElement("option");
    option.value = i;
    const text = q.join(" ");
    option.textContent = `${i + 1}: ${unit} ${text.length > 40 ? text.slice(0, 40) + "…" : text}`;
    return option;
  }));
  $("query-select").disabled = queries.length === 0;
}

// ---- positions and moves ----
function positionText(position) { return position.join(" "); }
function positionKey(position) {
  return state.game === "chess" ? [...position].sort((a, b) => a - b).join(",") : position.join(",");
}

// Addition-Subtraction: the moves from v as sets of targets picked an odd number of times,
// |S| <= K and |S| = K mod 2, the other picks in pairs on the first target.
function splitMoveCount(targets, k) {
  let total = 0n, binomial = 1n;
  const t = BigInt(targets);
  for (let j = 0n; j <= t && j <= BigInt(k); j++) {
    if ((BigInt(k) - j) % 2n === 0n) total += binomial;
    binomial = binomial * (t - j) / (j + 1n);
  }
  return total;
}

// Every move from `position` (up to MAX_LISTED_MOVES), and how many were left out.
function candidateMoves(position, { game, graph, offsets }) {
  const moves = [];
  const n = graph.outDegrees.length;
  if (game === "chess") {
    const done = new Set();
    position.forEach((v, index) => {
      if (done.has(v)) return; // tokens on one vertex have the same moves
      done.add(v);
      for (const w of new Set(successors(v, graph, offsets))) {
        const next = [...position];
        next[index] = w;
        moves.push({ label: `token ${v} → ${w}`, from: v, to: [w], position: next });
      }
    });
    return { moves, omitted: 0n };
  }
  let total = 0n;
  for (let v = 0; v < n; v++) {
    const targets = [...new Set(successors(v, graph, offsets))];
    const k = graph.splitCounts[v];
    if (position[v] <= 0 || targets.length === 0) continue;
    total += splitMoveCount(targets.length, k);
    const bits = Math.min(targets.length, 20);
    for (let mask = 0; mask < 2 ** bits && moves.length < MAX_LISTED_MOVES; mask++) {
      const odd = targets.filter((_, i) => i < bits && (mask & (1 << i)));
      if (odd.length > k || (k - odd.length) % 2 !== 0) continue;
      const pairs = (k - odd.length) / 2;
      const next = [...position];
      next[v] -= 1;
      for (const w of odd) next[w] += 1;
      if (pairs > 0) next[targets[0]] += 2 * pairs;
      const label = `${v} → {${odd.join(" ")}}` + (pairs > 0 ? ` + ${pairs}×2 on ${targets[0]}` : "");
      moves.push({ label, from: v, to: odd, position: next });
    }
  }
  return { moves, omitted: total - BigInt(moves.length) };
}

function positionMessage(game, position) {
  return game === "chess" ? { tokens: position } : { dense: position };
}

// The server's move (from an explained verdict) as a position and a highlight.
function serverMoveOf(move, position) {
  const next = [...position];
  if (move.token) {
    const { tokenIndex, sourceVertex, targetVertex } = move.token;
    next[tokenIndex] = targetVertex;
    return { position: next, from: sourceVertex, to: [targetVertex] };
  }
  const split = move.split;
  next[split.vertex] -= 1;
  for (const w of split.oddTargets) next[w] += 1;
  if (split.pairCount > 0) next[split.pairTarget] += 2 * split.pairCount;
  return { position: next, from: split.vertex, to: split.oddTargets };
}

const CLASS_ORDER = { win: 0, draw: 1, lose: 2 };

// Best first for the player making the move: wins (fastest first), draws, losses (longest
// resistance first). Without remoteness the server's own move leads its class.
function sortMoves(moves, suggestion) {
  const same = (m) => suggestion && positionKey(m.position) === positionKey(suggestion.position);
  const rank = (m) => {
    if (m.remoteness === undefined) return same(m) ? -1 : 0;
    return m.outcome === "lose" ? -m.remoteness : m.remoteness;
  };
  return moves
    .map((m, i) => ({ m, i }))
    .sort((a, b) => (CLASS_ORDER[a.m.outcome] - CLASS_ORDER[b.m.outcome])
      || (rank(a.m) - rank(b.m)) || (a.i - b.i))
    .map(({ m }) => m);
}

// Evaluates `position` and every move from it: the view of the position, committed by the
// caller. Throws on any failure.
async function analyse(position, where = state) {
  const { moves, omitted } = candidateMoves(position, where);
  const positions = [position, ...moves.map((m) => m.position)].map((p) => positionMessage(where.game, p));
  const [verdict, ...after] = await Grpc.evaluate(where.graph, positions, token());
  if (verdict.error) throw new Error(`${verdict.error.field}: ${verdict.error.message}`);
  // A move is as good for its player as the position it leads to is bad for the other.
  const forMover = { LOSE: "win", WIN: "lose", DRAW: "draw" };
  moves.forEach((m, i) => {
    m.outcome = forMover[after[i].outcome] || "draw";
    if (after[i].remoteness !== undefined) m.remoteness = after[i].remoteness;
  });
  const best = verdict.bestMove;
  const suggestion = best && (best.token || best.split) ? serverMoveOf(best, position) : null;
  if (suggestion) {
    const listed = moves.find((m) => positionKey(m.position) === positionKey(suggestion.position));
    suggestion.label = listed ? listed.label : `${suggestion.from} → {${suggestion.to.join(" ")}}`;
  }
  return { position, verdict, moves: sortMoves(moves, suggestion), suggestion, omitted };
}

// ---- the game ----
function humanToMoveAt(index) {
  const play = state.play;
  return play && index >= play.start && ((index - play.start) % 2 === 0) === play.humanFirst;
}

// Whether the game is over at history[index]: {result, text} or null. A repetition ends
// the game as a draw only when the position is a DRAW: a won position repeated is still
// won, and the winner is steered to the win.
function resultAt(index) {
  const play = state.play;
  if (!play || index < play.start) return null;
  const { view: v } = state.history[index];
  const humanToMove = humanToMoveAt(index);
  if (v.moves.length === 0) {
    return humanToMove
      ? { result: "server", text: "The server wins: you have no move left." }
      : { result: "you", text: "You win: the server has no move left." };
  }
  if (v.verdict.outcome === "DRAW") {
    const key = positionKey(v.position);
    for (let j = index - 2; j >= play.start; j -= 2) {
      if (positionKey(state.history[j].view.position) === key) {
        return { result: "draw", text: "Draw: a drawn position repeated; best play goes on for ever." };
      }
    }
  }
  if (index - play.start >= MAX_PLIES) {
    return { result: "stopped", text: `Stopped after ${MAX_PLIES} moves.` };
  }
  return null;
}

// The engine's choice: the fastest win, else a draw, else the longest resistance (the
// moves are sorted so; without remoteness, the server's winning or draw-keeping move).
function engineChoice(v) { return v.moves[0]; }

// Plays `move` from the current entry; in a game, the server's reply too. Both positions
// are evaluated before anything is committed.
async function play(move) {
  const entries = [];
  const next = await analyse(move.position);
  entries.push({ view: next, label: move.label, by: state.play ? "you" : null, from: move.from, to: move.to });
  if (state.play) {
    const index = state.cursor + 1;
    const over = (() => {
      const saved = state.history;
      state.history = [...saved.slice(0, index), entries[0]];
      try { return resultAt(index); } finally { state.history = saved; }
    })();
    if (!over) {
      const reply = engineChoice(next);
      const after = await analyse(reply.position);
      entries.push({ view: after, label: reply.label, by: "server", from: reply.from, to: reply.to });
    }
  }
  state.history = [...state.history.slice(0, state.cursor + 1), ...entries];
  state.cursor = state.history.length - 1;
  state.selected = null;
  await showAll();
}

async function startGame(humanFirst) {
  const entries = [];
  if (!humanFirst && view().moves.length > 0) {
    const reply = engineChoice(view());
    const after = await analyse(reply.position);
    entries.push({ view: after, label: reply.label, by: "server", from: reply.from, to: reply.to });
  }
  state.history = [...state.history.slice(0, state.cursor + 1), ...entries];
  state.play = { humanFirst, start: state.cursor };
  state.cursor = state.history.length - 1;
  state.selected = null;
  await showAll();
}

function stopGame() { state.play = null; }

// ---- history ----
function undoTarget() {
  if (!state.play) return state.cursor > 0 ? state.cursor - 1 : null;
  for (let j = state.cursor - 1; j >= state.play.start; j--) if (humanToMoveAt(j)) return j;
  return null;
}
function redoTarget() {
  const last = state.history.length - 1;
  if (!state.play) return state.cursor < last ? state.cursor + 1 : null;
  for (let j = state.cursor + 1; j <= last; j++) if (humanToMoveAt(j) || j === last) return j;
  return null;
}
function goTo(index) {
  if (index === null || index < 0 || index >= state.history.length) return;
  if (state.play && index < state.play.start) stopGame();
  state.cursor = index;
  state.selected = null;
  return showAll();
}

// ---- showing ----
async function showAll() {
  if (state.selected === null) $("selection").textContent = "";
  showVerdict();
  showMoves();
  showHistory();
  showStatus();
  showControls();
  await draw();
}

function movePhrase(m) {
  const said = { win: "wins", lose: "loses", draw: "draws" }[m.outcome];
  // remoteness of the position after the move, in moves; the mover's game ends one later.
  return m.remoteness === undefined || m.outcome === "draw" ? said : `${said} in ${m.remoteness + 1}`;
}

function showVerdict() {
  const element = $("verdict");
  const v = view();
  element.replaceChildren();
  delete element.dataset.outcome;
  delete element.dataset.nimSum;
  delete element.dataset.remoteness;
  $("position-shown").textContent = v ? positionText(v.position) || "(empty)" : "";
  if (!v) return;
  if (!hintsShown()) {
    element.append("Verdict hidden while you play (untick “hide hints” to see it).");
    return;
  }
  const verdict = v.verdict;
  element.dataset.outcome = verdict.outcome;
  element.dataset.nimSum = verdict.nimSum;
  const css = { WIN: "win", LOSE: "lose", DRAW: "draw" }[verdict.outcome];
  const badge = document.createElement("span");
  badge.className = `badge outcome-${css}`;
  badge.textContent = verdict.outcome;
  element.append("Verdict: ", badge, " for the player to move");
  if (verdict.remoteness !== undefined && verdict.outcome !== "DRAW") {
    element.dataset.remoteness = verdict.remoteness;
    const verb = verdict.outcome === "WIN" ? "wins" : "loses";
    element.append(` (${verb} in ${verdict.remoteness} with best play)`);
  }
  element.append(` · nim-sum ${verdict.nimSum}`);
  if (v.suggestion) element.append(` · server's move: ${v.suggestion.label}`);
}

function showMoves() {
  const list = $("moves");
  const v = view();
  const hadFocus = list.contains(document.activeElement);
  list.replaceChildren();
  if (!v) return;
  const over = state.play && resultAt(state.cursor);
  const waiting = state.play && !over && !humanToMoveAt(state.cursor);
  const shown = state.selected === null ? v.moves : v.moves.filter((m) => m.from === state.selected);
  const hints = hintsShown();
  for (const m of shown) {
    const li = document.createElement("li");
    li.dataset.outcome = hints ? m.outcome : "hidden";
    if (hints && m.remoteness !== undefined) li.dataset.remoteness = m.remoteness;
    const button = document.createElement("button");
    button.className = hints ? `outcome-${m.outcome}` : "outcome-hidden";
    button.textContent = hints ? `${m.label}: ${movePhrase(m)} for the mover` : m.label;
    button.disabled = Boolean(over || waiting);
    button.addEventListener("click", () => busy(() => play(m)));
    li.append(button);
    list.append(li);
  }
  if (v.moves.length === 0) {
    const li = document.createElement("li");
    li.textContent = "No move: the player to move has lost.";
    list.append(li);
  }
  if (v.omitted > 0n) {
    const li = document.createElement("li");
    li.className = "hint";
    li.id = "moves-omitted";
    li.textContent = `… and ${v.omitted} more moves, not listed (the list stops at ${MAX_LISTED_MOVES}).`;
    list.append(li);
  }
  if (hadFocus) {
    const first = list.querySelector("button:not([disabled])");
    if (first) first.focus();
  }
}

function showHistory() {
  const list = $("history");
  list.replaceChildren();
  state.history.forEach((entry, i) => {
    const li = document.createElement("li");
    const button = document.createElement("button");
    const who = entry.by ? `${entry.by}: ` : "";
    button.textContent = i === 0 ? `start: ${positionText(entry.view.position) || "(empty)"}` : `${who}${entry.label}`;
    button.dataset.index = i;
    if (i === state.cursor) { button.setAttribute("aria-current", "step"); li.className = "current"; }
    button.disabled = Boolean(state.play && i >= state.play.start && !humanToMoveAt(i)
      && i !== state.history.length - 1);
    button.addEventListener("click", () => busy(() => goTo(i)));
    li.append(button);
    list.append(li);
  });
}

function showStatus() {
  const status = $("game-status");
  status.replaceChildren();
  delete status.dataset.result;
  status.className = "";
  if (!state.play) return;
  const over = resultAt(state.cursor);
  if (over) {
    status.dataset.result = over.result;
    status.className = "over";
    status.textContent = over.text;
  } else if (humanToMoveAt(state.cursor)) {
    status.textContent = "Your move: pick one in the list, or click a token on the board and then where it goes.";
  } else {
    status.textContent = "The server is to move.";
  }
}

function showControls() {
  $("undo").disabled = undoTarget() === null;
  $("redo").disabled = redoTarget() === null;
  const loaded = Boolean(state.graph);
  for (const id of ["play-first", "play-second", "set-position", "clear-position"]) $(id).disabled = !loaded;
  $("stop-game").hidden = !state.play;
  const chess = state.game === "chess";
  $("position").placeholder = chess ? "token vertices, e.g. 0 1" : "one value per vertex, e.g. 1 0 2";
  $("position-label").textContent = chess ? "Tokens (vertices):" : "Values (one per vertex):";
  $("position-hint").textContent = state.play || clickMode() === "move"
    ? (chess ? "Click a token on the board, then the vertex it moves to."
      : "Click a vertex with a positive value to list its moves.")
    : (chess ? "Click a vertex to add a token, shift-click to remove one."
      : "Click a vertex to add 1 to its value, shift-click to subtract 1.");
  if (document.activeElement !== $("position")) $("position").value = view() ? positionText(view().position) : "";
  const big = loaded && state.graph.outDegrees.length > AROUND_FROM;
  $("around-controls").hidden = !big;
  $("legend-infinite").hidden = !(loaded && state.values.some((v) => v.infinite));
  $("legend-split").hidden = chess;
}

function clickMode() {
  if (state.play) return "move";
  return document.querySelector("input[name=click-mode]:checked").value;
}

// The part of the graph drawn: all of it, or (big graphs) the vertices within `radius`
// moves of the tokens.
function drawnPart(v) {
  const n = state.graph.outDegrees.length;
  const whole = n <= AROUND_FROM || ($("whole-graph").checked && n <= DRAWABLE);
  if (whole) return null;
  const radius = Number($("radius").value);
  let centre = state.game === "chess" ? [...new Set(v.position)] : v.position.flatMap((x, i) => (x > 0 ? [i] : []));
  if (centre.length === 0) centre = [0];
  const distance = new Map(centre.map((c) => [c, 0]));
  let frontier = centre;
  for (let d = 1; d <= radius && distance.size < DRAWABLE; d++) {
    const next = [];
    for (const u of frontier) {
      for (const w of successors(u)) {
        if (!distance.has(w) && distance.size < DRAWABLE) { distance.set(w, d); next.push(w); }
      }
    }
    frontier = next;
  }
  return [...distance.keys()].sort((a, b) => a - b);
}

async function draw() {
  const v = view();
  if (!state.graph || !v) return;
  const n = state.graph.outDegrees.length;
  let perVertex = v.position;
  if (state.game === "chess") {
    perVertex = new Array(n).fill(0);
    for (const t of v.position) perVertex[t] += 1;
  }
  const part = drawnPart(v);
  const ids = part || [...Array(n).keys()];
  const index = new Map(ids.map((id, i) => [id, i]));
  const outDegrees = [], targets = [], partial = [];
  for (const id of ids) {
    const all = successors(id);
    const kept = all.filter((w) => index.has(w));
    outDegrees.push(kept.length);
    for (const w of kept) targets.push(index.get(w));
    if (kept.length < all.length) partial.push(index.get(id));
  }
  const move = (m) => {
    if (!m || !index.has(m.from) || !m.to.every((w) => index.has(w))) return null;
    return { from: index.get(m.from), to: m.to.map((w) => index.get(w)) };
  };
  const entry = state.history[state.cursor];
  const last = state.cursor > 0 ? move(entry) : null;
  const unit = state.game === "chess" ? "tokens" : "values";
  const outcome = hintsShown() ? `: ${v.verdict.outcome}, nim-sum ${v.verdict.nimSum}` : "";
  const body = {
    out_degrees: outDegrees,
    targets,
    split_counts: state.graph.splitCounts ? ids.map((id) => state.graph.splitCounts[id]) : [],
    values: ids.map((id) => state.values[id]).map((x) => (x.infinite ? { infinite: x.infinite } : { finite: x.finite })),
    tokens: ids.map((id) => perVertex[id]),
    highlight: hintsShown() ? move(v.suggestion) : null,
    last_move: last,
    vertex_ids: part ? ids : [],
    partial,
    legend: false, // the page explains the board beside it (#legend)
    caption: `${state.game} · ${unit} ${positionText(v.position) || "(none)"}${outcome}`
      + (part ? ` · ${ids.length} of ${n} vertices, within ${$("radius").value} moves` : ""),
  };
  const headers = { "content-type": "application/json" };
  if (token()) headers.authorization = `Bearer ${token()}`;
  const response = await fetch("/render", { method: "POST", headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) {
    board.clear(text);
    state.drawnGraph = null;
    return;
  }
  const shape = JSON.stringify([ids, outDegrees, targets]);
  board.show(text, { keepView: shape === state.drawnGraph, focus: ids.filter((id) => perVertex[id] > 0) });
  state.drawnGraph = shape;
  board.mark(state.selected);
}

// ---- the board ----
// A press on vertex v: edit the position, or pick a token and then its target.
async function pressVertex(v, remove) {
  const current = view();
  if (!current) return;
  if (clickMode() === "edit") {
    const position = [...current.position];
    if (state.game === "chess") {
      if (!remove) position.push(v);
      else {
        const at = position.lastIndexOf(v);
        if (at < 0) return;
        position.splice(at, 1);
      }
    } else {
      position[v] = Math.max(0, position[v] + (remove ? -1 : 1));
    }
    return setPosition(position);
  }
  if (state.play && (resultAt(state.cursor) || !humanToMoveAt(state.cursor))) return;
  if (state.selected !== null) {
    const move = current.moves.find((m) => m.from === state.selected && m.to.length === 1 && m.to[0] === v);
    if (move && state.game === "chess") return play(move);
  }
  const hasMoves = current.moves.some((m) => m.from === v);
  state.selected = hasMoves && state.selected !== v ? v : null;
  board.mark(state.selected);
  showMoves();
  $("selection").textContent = state.selected === null ? ""
    : (state.game === "chess" ? `Token on ${v} picked: click where it goes (or pick a move below).`
      : `Moves from vertex ${v} listed below.`);
}

// A new position (typed, clicked or cleared): a fresh history from it, no game.
async function setPosition(position) {
  const next = await analyse(position);
  state.play = null;
  state.selected = null;
  state.history = [...state.history.slice(0, state.cursor + 1), { view: next, label: `set ${positionText(position) || "(empty)"}`, by: null }];
  state.cursor = state.history.length - 1;
  await showAll();
}

// ---- wiring ----
function parsePosition() {
  const numbers = $("position").value.trim().split(/\s+/).filter(Boolean).map((t, i) => {
    if (!/^\d+$/.test(t)) throw new Error(`position, item ${i + 1}: not a number: "${t.slice(0, 20)}"`);
    if (!Number.isSafeInteger(Number(t))) {
      throw new Error(`position, item ${i + 1}: ${t.slice(0, 24)} is above 2^53 − 1, the largest number the page holds exactly (only its parity matters: use ${BigInt(t) % 2n === 0n ? 2 : 1}, or the command-line judge, which takes values up to 2^64 − 1)`);
    }
    return Number(t);
  });
  const n = state.graph.outDegrees.length;
  if (state.game === "chess") {
    numbers.forEach((v, i) => { if (v >= n) throw new Error(`position, token ${i + 1}: vertex ${v} is out of range (0..${n - 1})`); });
  } else if (numbers.length !== n) {
    throw new Error(`position: ${numbers.length} values, expected one per vertex (${n})`);
  }
  return numbers;
}

// The graph builder edits a copy of the graph, writes it back as judge text and loads it.
function buildGraph(edit) {
  if (state.play) throw new Error("a game is in progress: stop it first");
  const game = document.querySelector("input[name=game]:checked").value;
  const base = state.graph || { outDegrees: [], targets: [], splitCounts: [] };
  const lists = base.outDegrees.map((_, v) => successors(v, base, offsetsOf(base)));
  let position = view() ? [...view().position] : [];
  const splitCounts = [...(base.splitCounts || base.outDegrees.map(() => 1))];
  const edited = edit({ lists, splitCounts, position }) || {};
  const finalLists = edited.lists || lists;
  position = edited.position || position;
  const n = finalLists.length;
  while (splitCounts.length < n) splitCounts.push(1);
  splitCounts.length = n;
  const graph = { outDegrees: finalLists.map((l) => l.length), targets: finalLists.flat(), splitCounts };
  if (game === "addsub" && position.length !== n) position = new Array(n).fill(0).map((_, i) => position[i] || 0);
  if (game === "chess") position = position.filter((t) => t < n);
  $("judge-input").value = game === "chess" ? Judge.chessText(graph, position) : Judge.addsubText(graph, position);
  return load();
}

function edgeInputs(n) {
  const from = Number($("edge-from").value), to = Number($("edge-to").value);
  if (!(Number.isInteger(from) && Number.isInteger(to) && from >= 0 && to >= 0 && from < n && to < n)) {
    throw new Error(`edge: vertices are 0..${n - 1}`);
  }
  return [from, to];
}

// `grundy play FILE` hands its file to the page (200); otherwise (204) the page draws its
// own sample. A server that wants a token gets a hint, not an error, on opening.
async function open() {
  const response = await fetch("/preload");
  if (response.status === 200) {
    const { game, text } = await response.json();
    document.querySelector(`input[name=game][value=${game === "addsub" ? "addsub" : "chess"}]`).checked = true;
    $("judge-input").value = text;
  }
  try {
    await load();
  } catch (error) {
    if (error instanceof Grpc.GrpcError && error.code === 16) {
      clearAll("This server asks for a bearer token: enter it above, then press Load.");
      return;
    }
    throw error;
  }
}

let board;

window.addEventListener("DOMContentLoaded", () => {
  board = Board.create($("board"), { onVertex: (v, remove) => busy(() => pressVertex(v, remove)) });
  if (!$("judge-input").value) $("judge-input").value = SAMPLE;
  busy(open);
  $("load").addEventListener("click", () => busy(load));
  $("case-select").addEventListener("change", (e) => busy(async () => {
    try {
      await selectCase(state.cases, state.game, Number(e.target.value));
    } catch (error) {
      fillSelects(); // back to the case still shown
      throw error;
    }
  }));
  $("query-select").addEventListener("change", (e) => busy(() =>
    setPosition([...state.cases[state.caseIndex].positions[Number(e.target.value)]])));
  $("position-form").addEventListener("submit", (e) => {
    e.preventDefault();
    busy(() => setPosition(parsePosition()));
  });
  $("clear-position").addEventListener("click", () => busy(() => setPosition(emptyPosition(state.game, state.graph))));
  $("play-first").addEventListener("click", () => busy(() => startGame(true)));
  $("play-second").addEventListener("click", () => busy(() => startGame(false)));
  $("stop-game").addEventListener("click", () => busy(() => { stopGame(); return showAll(); }));
  $("hide-hints").addEventListener("change", () => busy(showAll));
  $("undo").addEventListener("click", () => busy(() => goTo(undoTarget())));
  $("redo").addEventListener("click", () => busy(() => goTo(redoTarget())));
  $("zoom-in").addEventListener("click", () => board.zoom(1.25));
  $("zoom-out").addEventListener("click", () => board.zoom(0.8));
  $("zoom-fit").addEventListener("click", () => board.fit());
  $("radius").addEventListener("change", () => busy(draw));
  $("whole-graph").addEventListener("change", () => busy(draw));
  for (const input of document.querySelectorAll("input[name=click-mode]")) {
    input.addEventListener("change", () => { state.selected = null; board.mark(null); showControls(); showMoves(); });
  }
  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("input, textarea, select")) return;
    if ((e.ctrlKey || e.metaKey) && e.key === "z") { e.preventDefault(); busy(() => goTo(e.shiftKey ? redoTarget() : undoTarget())); }
  });
  $("new-graph").addEventListener("click", () => busy(() => buildGraph(() => ({ lists: [[]], position: [] }))));
  $("add-vertex").addEventListener("click", () => busy(() => buildGraph(({ lists }) => {
    lists.push([]);
    return { lists };
  })));
  $("add-edge").addEventListener("click", () => busy(() => buildGraph(({ lists }) => {
    const [from, to] = edgeInputs(lists.length);
    lists[from].push(to);
    return { lists };
  })));
  $("remove-edge").addEventListener("click", () => busy(() => buildGraph(({ lists }) => {
    const [from, to] = edgeInputs(lists.length);
    const at = lists[from].indexOf(to);
    if (at < 0) throw new Error(`edge: there is no edge ${from} → ${to}`);
    lists[from].splice(at, 1);
    return { lists };
  })));
});
