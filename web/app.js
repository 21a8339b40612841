// The playground page: load a game, draw it, evaluate a position and every move from it,
// play the server. This module holds what each control does; the session (session.js) is
// the state, server.js asks the server, panels.js and board-view.js show the result.
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

import * as Board from "./board.js";
import { createBoardView } from "./board-view.js";
import * as loader from "./loader.js";
import { showControls, showMoves, showPanels } from "./panels.js";
import { emptyPosition, offsetsOf, positionText } from "./rules.js";
import * as server from "./server.js";
import * as Session from "./session.js";

const $ = (id) => document.getElementById(id);

const session = Session.createSession();
const boardView = createBoardView(
  Board.create($("board"), { onVertex: (v, remove) => busy(() => pressVertex(v, remove)) }));

function token() { return $("auth-token").value.trim(); }
function view() { return Session.currentView(session); }
function hintsShown() { return !session.play || !$("hide-hints").checked; }
function clickMode() {
  if (session.play) return "move";
  return document.querySelector("input[name=click-mode]:checked").value;
}
function analyse(position, where = session) { return server.analyse(position, where, token()); }

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

const onMove = (move) => busy(() => play(move));
const onGoTo = (index) => busy(() => goTo(index));

function draw() { return boardView.draw(session, { hints: hintsShown(), token: token() }); }

async function showAll() {
  showPanels(session, { hints: hintsShown(), clickMode: clickMode(), onMove, onGoTo });
  await draw();
}

// ---- loading ----
// Forgets the graph (after a Load that failed: nothing of the old game stays on screen).
function clearAll(message) {
  Session.clear(session);
  loader.fillSelects(session);
  showAll();
  boardView.clear(message);
}

async function load() {
  try {
    const { game, cases } = loader.readJudgeInput();
    await selectCase(cases, game, 0);
  } catch (error) {
    clearAll("Nothing to draw: the input could not be loaded (see the message on the left).");
    throw error;
  }
}

// Registers a test case's graph, gets its values and evaluates its first query; commits
// only if all of that succeeds.
async function selectCase(cases, game, caseIndex) {
  const c = cases[caseIndex];
  const graph = { outDegrees: c.outDegrees, targets: c.targets, splitCounts: c.splitCounts };
  const offsets = offsetsOf(graph);
  const misere = loader.chosenMisere();
  const values = await server.valuesOf(graph, token(), misere);
  const first = c.positions[0];
  const position = first ? [...first] : emptyPosition(game, graph);
  const start = await analyse(position, { game, graph, offsets, misere });
  Session.open(session, { cases, caseIndex, game, graph, offsets, values, start, misere });
  loader.fillSelects(session);
  await showAll();
}

// `grundy play FILE` hands its file to the page; otherwise the page draws its own sample.
// A server that wants a token gets a hint, not an error, on opening.
async function open() {
  const preloaded = await server.preload();
  if (preloaded) loader.fillPreload(preloaded);
  try {
    await load();
  } catch (error) {
    if (error instanceof server.GrpcError && error.code === 16) {
      clearAll("This server asks for a bearer token: enter it above, then press Load.");
      return;
    }
    throw error;
  }
}

// ---- moves and games ----
// Plays `move` from the current entry; in a game, the server's reply too. Both positions
// are evaluated before anything is committed.
async function play(move) {
  const entries = [];
  const next = await analyse(move.position);
  entries.push({ view: next, label: move.label, by: session.play ? "you" : null, from: move.from, to: move.to });
  if (session.play && !Session.resultAfter(session, entries[0])) {
    const reply = Session.engineChoice(next);
    const after = await analyse(reply.position);
    entries.push({ view: after, label: reply.label, by: "server", from: reply.from, to: reply.to });
  }
  Session.record(session, entries);
  await showAll();
}

async function startGame(humanFirst) {
  const entries = [];
  if (!humanFirst && view().moves.length > 0) {
    const reply = Session.engineChoice(view());
    const after = await analyse(reply.position);
    entries.push({ view: after, label: reply.label, by: "server", from: reply.from, to: reply.to });
  }
  Session.beginGame(session, humanFirst, entries);
  await showAll();
}

function goTo(index) {
  if (Session.goTo(session, index)) return showAll();
}

// A new position (typed, clicked or cleared): a fresh history from it, no game.
async function setPosition(position) {
  const next = await analyse(position);
  Session.stopGame(session);
  Session.record(session, [{ view: next, label: `set ${positionText(position) || "(empty)"}`, by: null }]);
  await showAll();
}

// A press on vertex v: edit the position, or pick a token and then its target.
async function pressVertex(v, remove) {
  const current = view();
  if (!current) return;
  if (clickMode() === "edit") {
    const position = [...current.position];
    if (session.game === "chess") {
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
  if (session.play && (Session.resultAt(session, session.cursor) || !Session.humanToMoveAt(session, session.cursor))) return;
  if (session.selected !== null) {
    const move = current.moves.find((m) => m.from === session.selected && m.to.length === 1 && m.to[0] === v);
    if (move && session.game === "chess") return play(move);
  }
  const hasMoves = current.moves.some((m) => m.from === v);
  session.selected = hasMoves && session.selected !== v ? v : null;
  boardView.mark(session.selected);
  showMoves(session, hintsShown(), onMove);
  $("selection").textContent = session.selected === null ? ""
    : (session.game === "chess" ? `Token on ${v} picked: click where it goes (or pick a move below).`
      : `Moves from vertex ${v} listed below.`);
}

// ---- wiring ----
loader.fillSample();
busy(open);
$("load").addEventListener("click", () => busy(load));
$("misere").addEventListener("change", () => busy(load));
$("case-select").addEventListener("change", (e) => busy(async () => {
  try {
    await selectCase(session.cases, session.game, Number(e.target.value));
  } catch (error) {
    loader.fillSelects(session); // back to the case still shown
    throw error;
  }
}));
$("query-select").addEventListener("change", (e) => busy(() =>
  setPosition([...session.cases[session.caseIndex].positions[Number(e.target.value)]])));
$("position-form").addEventListener("submit", (e) => {
  e.preventDefault();
  busy(() => setPosition(loader.parsePosition(session)));
});
$("clear-position").addEventListener("click", () => busy(() => setPosition(emptyPosition(session.game, session.graph))));
$("play-first").addEventListener("click", () => busy(() => startGame(true)));
$("play-second").addEventListener("click", () => busy(() => startGame(false)));
$("stop-game").addEventListener("click", () => busy(() => { Session.stopGame(session); return showAll(); }));
$("hide-hints").addEventListener("change", () => busy(showAll));
$("undo").addEventListener("click", () => busy(() => goTo(Session.undoTarget(session))));
$("redo").addEventListener("click", () => busy(() => goTo(Session.redoTarget(session))));
$("zoom-in").addEventListener("click", () => boardView.zoom(1.25));
$("zoom-out").addEventListener("click", () => boardView.zoom(0.8));
$("zoom-fit").addEventListener("click", () => boardView.fit());
$("radius").addEventListener("change", () => busy(draw));
$("whole-graph").addEventListener("change", () => busy(draw));
for (const input of document.querySelectorAll("input[name=click-mode]")) {
  input.addEventListener("change", () => {
    session.selected = null;
    boardView.mark(null);
    showControls(session, clickMode());
    showMoves(session, hintsShown(), onMove);
  });
}
document.addEventListener("keydown", (e) => {
  if (e.target.closest && e.target.closest("input, textarea, select")) return;
  if ((e.ctrlKey || e.metaKey) && e.key === "z") {
    e.preventDefault();
    busy(() => goTo(e.shiftKey ? Session.redoTarget(session) : Session.undoTarget(session)));
  }
});
for (const [id, edit] of Object.entries(loader.EDITS)) {
  $(id).addEventListener("click", () => busy(() => {
    loader.writeEditedGraph(session, edit);
    return load();
  }));
}
