// The playground page: load a game, draw it, evaluate a position and every move from it,
// play the server. This module wires the controls to the steps of actions.js, runs them one
// at a time (activity.js) and commits what they computed: the session (session.js), the
// panels (panels.js) and the board (board-view.js) change together, once every request of
// a step has succeeded, so a failed request changes nothing but the error line.
//
// For tests and people alike the page exposes its state in attributes: body[data-busy] while
// a step runs, #verdict[data-outcome][data-nim-sum][data-remoteness],
// #moves li[data-outcome][data-remoteness] ("hidden" while hints are hidden in a game),
// #game-status[data-result] ("you", "server", "draw" or "stopped") once a game is over,
// #position-shown (the position as text), #board[data-scale] (the zoom).
//
// The query parameter `timeout` sets the time limit of a step in seconds (60 by default).

import { createActions } from "./actions.js";
import { createActivity } from "./activity.js";
import * as Board from "./board.js";
import { createBoardView } from "./board-view.js";
import { showChart } from "./chart.js";
import * as loader from "./loader.js";
import { opponentMove } from "./opponent.js";
import { showControls, showMoves, showPanels } from "./panels.js";
import { emptyPosition } from "./rules.js";
import * as server from "./server.js";
import * as Session from "./session.js";
import * as share from "./share.js";

const $ = (id) => document.getElementById(id);
const REPLY_PAUSE_MS = 700;
const UNAUTHENTICATED = 16;

function timeLimit() {
  const asked = Number(new URLSearchParams(location.search).get("timeout"));
  return asked > 0 ? asked : 60;
}

const session = Session.createSession();
const activity = createActivity({ timeoutSeconds: timeLimit() });
const boardView = createBoardView(Board.create($("board"), {
  onVertex: (v, remove) => act((signal) => actions.pressVertex(v, remove, signal)),
}));

function token() { return $("auth-token").value.trim(); }
function hintsShown(s = session) { return !s.play || !$("hide-hints").checked; }
function clickMode(s = session) {
  if (s.play) return "move";
  return document.querySelector("input[name=click-mode]:checked").value;
}

// The settings as last committed: a step that fails puts its control back.
let settings = readSettings();
function readSettings() {
  return {
    hideHints: $("hide-hints").checked, radius: $("radius").value, whole: $("whole-graph").checked,
    misere: $("misere").checked,
  };
}
function restoreSettings() {
  $("misere").checked = settings.misere;
  $("hide-hints").checked = settings.hideHints;
  $("radius").value = settings.radius;
  $("whole-graph").checked = settings.whole;
  loader.fillSelects(session);
}

// Runs a step (refused while another runs); on failure the controls show the state again.
// An address changed meanwhile (the back button) is followed once the step ends.
async function act(step) {
  const done = await activity.run(step);
  if (!done && !activity.busy()) restoreSettings();
  if (addressChanged && !activity.busy()) followAddress();
}

// The back and forward buttons: the game in the address, shown.
let addressChanged = false;
function followAddress() {
  addressChanged = true;
  if (activity.busy()) return;
  addressChanged = false;
  act(async (signal) => {
    const record = await share.recordInHash(location.hash);
    if (record) await actions.reopen(record, signal, "no");
  });
}

const onMove = (move) => act((signal) => actions.play(move, signal));
const onGoTo = (index) => act((signal) => actions.goTo(index, signal));
const onSwitch = (index, id) => act((signal) => actions.switchTo(index, id, signal));

function showAll() {
  showPanels(session, { hints: hintsShown(), clickMode: clickMode(), onMove, onGoTo, onSwitch });
  showChart(session, { hints: hintsShown(), onGoTo });
  loader.fillSelects(session);
}

// The page's address follows the game (share.js): each step adds an entry to the browser's
// history, so a link reopens the game and the back button steps back. `remember`: "push",
// "replace" (the first) or "no" (a step that came from the address).
let remembering = Promise.resolve();
let remembered = false;
function remember(mode) {
  if (mode === "no" || !session.graph) return;
  const record = share.recordOf(session);
  const push = mode === "push" && remembered;
  remembered = true;
  remembering = remembering.then(async () => {
    const hash = await share.hashOf(record);
    if (hash !== location.hash) history[push ? "pushState" : "replaceState"](null, "", hash);
  }).catch(() => {});
}

// Commits `next` and its drawing together.
function commit(next, drawing, mode = "push") {
  Object.assign(session, next);
  $("misere").checked = session.misere; // the switch shows the convention played
  settings = readSettings();
  showAll();
  boardView.show(drawing);
  remember(mode);
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

const page = {
  session,
  clickMode,
  analyse: (position, where, signal) => server.analyse(position, where, { token: token(), signal }),
  analyseAll: (positions, where, signal) => server.analyseAll(positions, where, { token: token(), signal }),
  valuesOf: (graph, signal, misere) => server.valuesOf(graph, { token: token(), signal, misere }),
  reply: (view) => opponentMove(view, $("strength").value),
  // Fetches the drawing of `next`, then commits both. With `pauseBefore` (a move and the
  // server's reply), the move is shown first and the reply after a short pause (both
  // drawings fetched before anything is shown; Cancel during the pause shows the reply).
  async present(next, signal, { pauseBefore = false, remember: mode = "push" } = {}) {
    const prepare = (s) => boardView.prepare(s, { hints: hintsShown(s), token: token(), signal });
    const paused = pauseBefore && $("reply-pause").checked;
    const before = paused ? { ...next, history: next.history.slice(0, next.cursor), cursor: next.cursor - 1 } : null;
    const drawings = await Promise.all([prepare(next), ...(before ? [prepare(before)] : [])]);
    signal.throwIfAborted();
    if (before) {
      commit(before, drawings[1], "no");
      await pause(REPLY_PAUSE_MS, signal);
    }
    commit(next, drawings[0], mode);
  },
  // Forgets the graph: nothing of the old game stays beside an input that was refused.
  clear(message) {
    Session.clear(session);
    showAll();
    boardView.clear(message);
  },
  select(vertex) {
    session.selected = vertex;
    boardView.mark(vertex);
    showMoves(session, hintsShown(), onMove);
    $("selection").textContent = vertex === null ? ""
      : (session.game === "chess" ? `Token on ${vertex} picked: click where it goes (or pick a move below).`
        : `Moves from vertex ${vertex} listed below.`);
  },
};
const actions = createActions(page);

// A link with a game reopens it; else `grundy play FILE` hands its file to the page;
// otherwise the page draws its own sample. A server that wants a token gets a hint, not an
// error, on opening.
async function open(signal) {
  const record = await share.recordInHash(location.hash);
  const preloaded = record ? null : await server.preload();
  if (preloaded) loader.fillPreload(preloaded);
  if (record) loader.showGame(record.game, record.graph, record.nodes[0].position, record.misere);
  settings.misere = $("misere").checked; // the convention opened with stays if opening fails
  try {
    if (record) await actions.reopen(record, signal, "replace");
    else await actions.load(signal);
  } catch (error) {
    if (error instanceof server.GrpcError && error.code === UNAUTHENTICATED) {
      page.clear("This server asks for a bearer token: enter it above, then press Load.");
      return;
    }
    if (!session.graph) page.clear(`Nothing drawn yet: ${error.message || error}`);
    throw error;
  }
}

// ---- wiring ----
if (matchMedia("(max-width: 820px)").matches) $("legend").open = false; // the board first
loader.fillSample();
act(open);
$("cancel").addEventListener("click", () => activity.cancel());
window.addEventListener("popstate", followAddress);
$("save-game").addEventListener("click", () => { if (session.graph) share.download(share.recordOf(session)); });
$("open-game").addEventListener("change", (e) => {
  const [file] = e.target.files;
  e.target.value = ""; // the same file can be opened again
  if (file) act(async (signal) => actions.reopen(share.recordInFile(await file.text()), signal));
});
$("load").addEventListener("click", () => act(actions.load));
$("case-select").addEventListener("change", (e) => act((signal) =>
  actions.selectCase(session.cases, session.game, Number(e.target.value), signal)));
$("query-select").addEventListener("change", (e) => act((signal) =>
  actions.setPosition([...session.cases[session.caseIndex].positions[Number(e.target.value)]], signal)));
$("position-form").addEventListener("submit", (e) => {
  e.preventDefault();
  act((signal) => actions.setPosition(loader.parsePosition(session), signal));
});
$("clear-position").addEventListener("click", () => act((signal) =>
  actions.setPosition(emptyPosition(session.game, session.graph), signal)));
$("play-first").addEventListener("click", () => act((signal) => actions.startGame(true, signal)));
$("play-second").addEventListener("click", () => act((signal) => actions.startGame(false, signal)));
$("stop-game").addEventListener("click", () => act(actions.stopGame));
$("undo").addEventListener("click", () => act((signal) => actions.goTo(Session.undoTarget(session), signal)));
$("redo").addEventListener("click", () => act((signal) => actions.goTo(Session.redoTarget(session), signal)));
$("zoom-in").addEventListener("click", () => boardView.zoom(1.25));
$("zoom-out").addEventListener("click", () => boardView.zoom(0.8));
$("zoom-fit").addEventListener("click", () => boardView.fit());
// A setting changed: the position drawn again with it (the control goes back on failure).
const redraw = (signal) => page.present(Session.copy(session), signal);
for (const id of ["hide-hints", "radius", "whole-graph"]) {
  $(id).addEventListener("change", () => {
    if (activity.busy()) restoreSettings();
    else act(redraw);
  });
}
// The misère play switch: the input loaded again under the other convention (a game in
// progress ends; the switch goes back on failure).
$("misere").addEventListener("change", () => {
  if (activity.busy()) restoreSettings();
  else act(actions.load);
});
for (const input of document.querySelectorAll("input[name=click-mode]")) {
  input.addEventListener("change", () => {
    page.select(null);
    showControls(session, clickMode());
  });
}
// Escape cancels a running step; Ctrl+Z and Ctrl+Shift+Z undo and redo; ← and → step back
// and on along the line shown (in a game, from one of your turns to the next), ↑ and ↓
// switch to the variation before or after the current move.
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && activity.busy()) {
    activity.cancel();
    return;
  }
  if (e.target.closest && e.target.closest("input, textarea, select")) return;
  const back = () => (session.play ? Session.undoTarget(session) : session.cursor - 1);
  const on = () => (session.play ? Session.redoTarget(session) : session.cursor + 1);
  let target = null;
  if ((e.ctrlKey || e.metaKey) && e.key === "z") target = e.shiftKey ? Session.redoTarget(session) : Session.undoTarget(session);
  else if (e.key === "ArrowLeft" && !e.ctrlKey) target = back();
  else if (e.key === "ArrowRight" && !e.ctrlKey) target = on();
  else if (e.key === "ArrowUp" || e.key === "ArrowDown") {
    const { ids, at } = Session.variationsAt(session, session.cursor);
    const id = ids[at + (e.key === "ArrowDown" ? 1 : -1)];
    if (ids.length < 2) return;
    e.preventDefault();
    if (id !== undefined) act((signal) => actions.switchTo(session.cursor, id, signal));
    return;
  } else return;
  e.preventDefault();
  act((signal) => actions.goTo(target, signal));
});
for (const [id, edit] of Object.entries(loader.EDITS)) {
  $(id).addEventListener("click", () => act((signal) => {
    loader.writeEditedGraph(session, edit);
    return actions.load(signal);
  }));
}
