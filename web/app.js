// The playground page: load a game, draw it (POST /render, the renderer of `grundy render`),
// evaluate a position and every move from it (EvaluateBatch over gRPC-Web), play the server.
//
// For tests and people alike the page exposes its state in attributes: body[data-busy] while
// requests are in flight, #verdict[data-outcome][data-nim-sum], #moves li[data-outcome],
// #game-status[data-result] ("you", "server" or "draw") once a game is over.
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

const $ = (id) => document.getElementById(id);

const state = {
  cases: [],
  game: "chess",
  graph: null, // {outDegrees, targets, splitCounts?}
  offsets: [],
  values: [],
  position: [], // chess: token vertices; addsub: a value per vertex
  moves: [], // [{label, position, outcome}] from the current position
  verdict: null,
  play: null, // {humanToMove, seen: Set, plies}
};

function token() { return $("auth-token").value.trim(); }

function successors(v) {
  return state.graph.targets.slice(state.offsets[v], state.offsets[v] + state.graph.outDegrees[v]);
}

function setGraph(graph) {
  state.graph = graph;
  state.offsets = [0];
  for (const d of graph.outDegrees) state.offsets.push(state.offsets[state.offsets.length - 1] + d);
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
function load() {
  state.game = document.querySelector("input[name=game]:checked").value;
  const text = $("judge-input").value;
  const cases = state.game === "chess" ? Judge.parseChess(text) : Judge.parseAddsub(text);
  if (cases.length === 0) throw new Error("no test case in the input");
  state.cases = cases;
  $("case-select").replaceChildren(...cases.map((c, i) => {
    const option = document.createElement("option");
    option.value = i;
    option.textContent = `${i + 1}: ${c.outDegrees.length} vertices`;
    return option;
  }));
  return selectCase(0);
}

async function selectCase(index) {
  const c = state.cases[index];
  setGraph({ outDegrees: c.outDegrees, targets: c.targets, splitCounts: c.splitCounts });
  const first = c.positions[0];
  state.position = first ? [...first] : (state.game === "chess" ? [] : new Array(c.outDegrees.length).fill(0));
  await analyseGraph();
}

async function analyseGraph() {
  state.play = null;
  $("game-status").textContent = "";
  delete $("game-status").dataset.result;
  $("game-log").replaceChildren();
  $("position-hint").textContent = state.game === "chess"
    ? "Click a vertex to add a token, shift-click to remove one."
    : "Click a vertex to add 1 to its value, shift-click to subtract 1.";
  const { graphId } = await Grpc.putGraph(state.graph, token());
  const { values } = await Grpc.getValues(graphId, token());
  state.values = values;
  await refresh();
}

// ---- positions and moves ----
function positionText() { return state.position.join(" "); }

function candidateMoves() {
  const moves = [];
  const n = state.graph.outDegrees.length;
  if (state.game === "chess") {
    const done = new Set();
    state.position.forEach((v, index) => {
      if (done.has(v)) return; // tokens on one vertex have the same moves
      done.add(v);
      for (const w of new Set(successors(v))) {
        const position = [...state.position];
        position[index] = w;
        moves.push({ label: `token ${v} → ${w}`, from: v, to: [w], position });
      }
    });
    return moves;
  }
  for (let v = 0; v < n && moves.length < MAX_LISTED_MOVES; v++) {
    const targets = [...new Set(successors(v))];
    const k = state.graph.splitCounts[v];
    if (state.position[v] <= 0 || targets.length === 0) continue;
    // Only parity matters: a move is a set S of targets picked an odd number of times,
    // |S| <= K and |S| = K mod 2, the other picks in pairs on the first target.
    for (let mask = 0; mask < 2 ** Math.min(targets.length, 16) && moves.length < MAX_LISTED_MOVES; mask++) {
      const odd = targets.filter((_, i) => mask & (1 << i));
      if (odd.length > k || (k - odd.length) % 2 !== 0) continue;
      const pairs = (k - odd.length) / 2;
      const position = [...state.position];
      position[v] -= 1;
      for (const w of odd) position[w] += 1;
      if (pairs > 0) position[targets[0]] += 2 * pairs;
      const label = `${v} → {${odd.join(" ")}}` + (pairs > 0 ? ` + ${pairs}×2 on ${targets[0]}` : "");
      moves.push({ label, from: v, to: odd, position });
    }
  }
  return moves;
}

function positionMessage(position) {
  return state.game === "chess" ? { tokens: position } : { dense: position };
}

// The server's move (from an explained verdict) as a position and a highlight.
function applyServerMove(move) {
  const position = [...state.position];
  if (move.token) {
    const { tokenIndex, sourceVertex, targetVertex } = move.token;
    position[tokenIndex] = targetVertex;
    return { position, from: sourceVertex, to: [targetVertex], label: `token ${sourceVertex} → ${targetVertex}` };
  }
  const split = move.split;
  position[split.vertex] -= 1;
  for (const w of split.oddTargets) position[w] += 1;
  if (split.pairCount > 0) position[split.pairTarget] += 2 * split.pairCount;
  const pairs = split.pairCount > 0 ? ` + ${split.pairCount}×2 on ${split.pairTarget}` : "";
  return { position, from: split.vertex, to: split.oddTargets, label: `${split.vertex} → {${split.oddTargets.join(" ")}}${pairs}` };
}

// Evaluates the position and every move, then redraws.
async function refresh() {
  const moves = candidateMoves();
  const positions = [state.position, ...moves.map((m) => m.position)].map(positionMessage);
  const [verdict, ...after] = await Grpc.evaluate(state.graph, positions, token());
  if (verdict.error) throw new Error(`${verdict.error.field}: ${verdict.error.message}`);
  // A move is as good for its player as the position it leads to is bad for the other.
  const forMover = { LOSE: "win", WIN: "lose", DRAW: "draw" };
  moves.forEach((m, i) => { m.outcome = forMover[after[i].outcome] || "draw"; });
  state.moves = moves;
  state.verdict = verdict;
  const best = verdict.bestMove;
  state.suggestion = best && (best.token || best.split) ? applyServerMove(best) : null;
  $("position").value = positionText();
  showVerdict();
  showMoves();
  await draw();
}

function showVerdict() {
  const v = state.verdict;
  const element = $("verdict");
  element.dataset.outcome = v.outcome;
  element.dataset.nimSum = v.nimSum;
  const names = { WIN: "WIN", LOSE: "LOSE", DRAW: "DRAW" };
  const css = { WIN: "win", LOSE: "lose", DRAW: "draw" }[v.outcome];
  element.innerHTML = "";
  const badge = document.createElement("span");
  badge.className = `badge outcome-${css}`;
  badge.textContent = names[v.outcome] || v.outcome;
  element.append("Verdict: ", badge, ` for the player to move · nim-sum ${v.nimSum}`);
  if (state.suggestion) element.append(` · server's move: ${state.suggestion.label}`);
}

function showMoves() {
  const list = $("moves");
  list.replaceChildren(...state.moves.map((m, i) => {
    const li = document.createElement("li");
    li.dataset.outcome = m.outcome;
    const button = document.createElement("button");
    button.className = `outcome-${m.outcome}`;
    const said = { win: "wins", lose: "loses", draw: "draws" }[m.outcome];
    button.textContent = `${m.label}: ${said} for you`;
    button.addEventListener("click", () => busy(() => humanMove(i)));
    li.append(button);
    return li;
  }));
  if (state.moves.length === 0) {
    const li = document.createElement("li");
    li.textContent = "No move: the player to move has lost.";
    list.append(li);
  }
}

async function draw() {
  const n = state.graph.outDegrees.length;
  let tokens = state.position;
  if (state.game === "chess") {
    tokens = new Array(n).fill(0);
    for (const v of state.position) tokens[v] += 1;
  }
  const body = {
    out_degrees: state.graph.outDegrees,
    targets: state.graph.targets,
    split_counts: state.graph.splitCounts || [],
    values: state.values.map((v) => (v.infinite ? { infinite: v.infinite } : { finite: v.finite })),
    tokens,
    highlight: state.suggestion ? { from: state.suggestion.from, to: state.suggestion.to } : null,
    caption: `${state.game} · position ${positionText() || "(empty)"}: ${state.verdict.outcome}, nim-sum ${state.verdict.nimSum}`,
  };
  const headers = { "content-type": "application/json" };
  if (token()) headers.authorization = `Bearer ${token()}`;
  const response = await fetch("/render", { method: "POST", headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) {
    $("drawing").textContent = text;
    return;
  }
  // Our own server's SVG: every label in it is escaped by the renderer.
  $("drawing").innerHTML = text;
}

// ---- playing ----
function log(text) {
  const li = document.createElement("li");
  li.textContent = text;
  $("game-log").append(li);
}

function endGame(result, text) {
  const status = $("game-status");
  status.dataset.result = result;
  status.textContent = text;
  status.className = "over";
  state.play = null;
}

// After a move: the game ends when the player to move has none, or a position repeats.
function gameOver() {
  const play = state.play;
  const key = `${play.humanToMove}:${state.position.join(",")}`;
  if (state.moves.length === 0) {
    if (play.humanToMove) endGame("server", "The server wins: you have no move left.");
    else endGame("you", "You win: the server has no move left.");
    return true;
  }
  if (play.seen.has(key) || play.plies >= MAX_PLIES) {
    endGame("draw", "Draw: the position repeated, so best play goes on for ever.");
    return true;
  }
  play.seen.add(key);
  return false;
}

async function startGame(humanFirst) {
  await refresh();
  state.play = { humanToMove: humanFirst, seen: new Set(), plies: 0 };
  $("game-log").replaceChildren();
  $("game-status").className = "";
  delete $("game-status").dataset.result;
  if (gameOver()) return;
  if (!humanFirst) await serverMove();
  else $("game-status").textContent = "Your move: pick one in the list.";
}

async function humanMove(index) {
  const move = state.moves[index];
  if (!move) return;
  state.position = move.position;
  if (!state.play) { await refresh(); return; }
  if (!state.play.humanToMove) return;
  log(`you: ${move.label}`);
  state.play.plies += 1;
  state.play.humanToMove = false;
  await refresh();
  if (!gameOver()) await serverMove();
}

// The server's reply: its winning (or draw-keeping) move when it has one, otherwise the
// first legal move (every move loses against best play; it holds out).
async function serverMove() {
  const chosen = state.suggestion || state.moves[0];
  log(`server: ${chosen.label}`);
  state.position = chosen.position;
  state.play.plies += 1;
  state.play.humanToMove = true;
  await refresh();
  if (!gameOver()) $("game-status").textContent = "Your move: pick one in the list.";
}

// ---- wiring ----
function parsePosition() {
  const numbers = $("position").value.trim().split(/\s+/).filter(Boolean).map((t, i) => {
    if (!/^\d+$/.test(t)) throw new Error(`position, item ${i + 1}: not a number: "${t.slice(0, 20)}"`);
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

function clickVertex(v, remove) {
  if (state.play) throw new Error("a game is in progress: play a move from the list");
  if (state.game === "chess") {
    if (!remove) state.position.push(v);
    else {
      const at = state.position.lastIndexOf(v);
      if (at >= 0) state.position.splice(at, 1);
    }
  } else {
    state.position[v] = Math.max(0, state.position[v] + (remove ? -1 : 1));
  }
  return refresh();
}

function buildGraph(edit) {
  if (state.play) throw new Error("a game is in progress");
  state.game = document.querySelector("input[name=game]:checked").value;
  edit();
  const n = state.graph.outDegrees.length;
  if (state.game === "addsub") {
    if (!state.graph.splitCounts || state.graph.splitCounts.length !== n) {
      setGraph({ ...state.graph, splitCounts: new Array(n).fill(1) });
    }
    if (state.position.length !== n) state.position = new Array(n).fill(0);
  }
  const text = state.game === "chess"
    ? Judge.chessText(state.graph, state.position)
    : Judge.addsubText(state.graph, state.position);
  $("judge-input").value = text;
  return load();
}

function edgeInputs() {
  const n = state.graph.outDegrees.length;
  const from = Number($("edge-from").value), to = Number($("edge-to").value);
  if (!(from < n && to < n)) throw new Error(`edge: vertices are 0..${n - 1}`);
  return [from, to];
}

function editEdges(change) {
  const n = state.graph.outDegrees.length;
  const lists = Array.from({ length: n }, (_, v) => successors(v));
  change(lists);
  setGraph({ outDegrees: lists.map((l) => l.length), targets: lists.flat(),
    splitCounts: state.graph.splitCounts });
}

// `grundy play FILE` hands its file to the page; a plain `--web` server has none (404).
async function preload() {
  const response = await fetch("/preload");
  if (!response.ok) return;
  const { game, text } = await response.json();
  document.querySelector(`input[name=game][value=${game === "addsub" ? "addsub" : "chess"}]`).checked = true;
  $("judge-input").value = text;
  await load();
}

window.addEventListener("DOMContentLoaded", () => {
  if (!$("judge-input").value) $("judge-input").value = SAMPLE;
  busy(preload);
  $("load").addEventListener("click", () => busy(load));
  $("case-select").addEventListener("change", (e) => busy(() => selectCase(Number(e.target.value))));
  $("set-position").addEventListener("click", () => busy(() => { state.position = parsePosition(); state.play = null; return refresh(); }));
  $("clear-position").addEventListener("click", () => busy(() => {
    state.play = null;
    state.position = state.game === "chess" ? [] : new Array(state.graph.outDegrees.length).fill(0);
    return refresh();
  }));
  $("drawing").addEventListener("click", (e) => {
    const vertex = e.target.closest && e.target.closest("g.vertex");
    if (vertex && state.graph) busy(() => clickVertex(Number(vertex.dataset.vertex), e.shiftKey));
  });
  $("play-first").addEventListener("click", () => busy(() => startGame(true)));
  $("play-second").addEventListener("click", () => busy(() => startGame(false)));
  $("new-graph").addEventListener("click", () => busy(() => buildGraph(() => {
    setGraph({ outDegrees: [0], targets: [], splitCounts: [1] });
    state.position = state.game === "chess" ? [] : [0];
  })));
  $("add-vertex").addEventListener("click", () => busy(() => buildGraph(() => {
    if (!state.graph) setGraph({ outDegrees: [], targets: [], splitCounts: [] });
    const splitCounts = [...(state.graph.splitCounts || state.graph.outDegrees.map(() => 1)), 1];
    setGraph({ outDegrees: [...state.graph.outDegrees, 0], targets: state.graph.targets, splitCounts });
    if (state.game === "addsub") state.position = [...state.position, 0];
  })));
  $("add-edge").addEventListener("click", () => busy(() => buildGraph(() => {
    const [from, to] = edgeInputs();
    editEdges((lists) => lists[from].push(to));
  })));
  $("remove-edge").addEventListener("click", () => busy(() => buildGraph(() => {
    const [from, to] = edgeInputs();
    editEdges((lists) => {
      const at = lists[from].indexOf(to);
      if (at < 0) throw new Error(`edge: there is no edge ${from} → ${to}`);
      lists[from].splice(at, 1);
    });
  })));
});
