// The panel beside the board: the verdict, the moves best first, the history, the game's
// status and which controls are enabled, all read from the session. A click on a move, on a
// history entry or on another variation is handed to the caller (`onMove`, `onGoTo`,
// `onSwitch`).

import { positionText } from "./rules.js";
import { currentView, humanToMoveAt, redoTarget, resultAt, undoTarget, variationsAt } from "./session.js";

const $ = (id) => document.getElementById(id);

// `hints`: whether outcomes are shown; `clickMode`: "edit" or "move" (what a click on the
// board does).
export function showPanels(session, { hints, clickMode, onMove, onGoTo, onSwitch }) {
  if (session.selected === null) $("selection").textContent = "";
  showVerdict(session, hints);
  showMoves(session, hints, onMove);
  showHistory(session, onGoTo, onSwitch);
  showStatus(session);
  showControls(session, clickMode);
}

function movePhrase(m) {
  const said = { win: "wins", lose: "loses", draw: "draws" }[m.outcome];
  // remoteness of the position after the move, in moves; the mover's game ends one later.
  return m.remoteness === undefined || m.outcome === "draw" ? said : `${said} in ${m.remoteness + 1}`;
}

function showVerdict(session, hints) {
  const element = $("verdict");
  const view = currentView(session);
  element.replaceChildren();
  delete element.dataset.outcome;
  delete element.dataset.nimSum;
  delete element.dataset.remoteness;
  $("position-shown").textContent = view ? positionText(view.position) || "(empty)" : "";
  if (!view) return;
  if (!hints) {
    element.append("Verdict hidden while you play (untick “hide hints” to see it).");
    return;
  }
  const verdict = view.verdict;
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
  // Under misère play the nim-sum decides nothing (the server sends 0).
  element.append(session.misere ? " · misère play" : ` · nim-sum ${verdict.nimSum}`);
  if (view.suggestion) element.append(` · server's move: ${view.suggestion.label}`);
}

// The moves of the position (only those from the picked vertex, if one is picked).
export function showMoves(session, hints, onMove) {
  const list = $("moves");
  const view = currentView(session);
  const hadFocus = list.contains(document.activeElement);
  list.replaceChildren();
  if (!view) return;
  const over = session.play && resultAt(session, session.cursor);
  const waiting = session.play && !over && !humanToMoveAt(session, session.cursor);
  const shown = session.selected === null ? view.moves : view.moves.filter((m) => m.from === session.selected);
  for (const m of shown) {
    const li = document.createElement("li");
    li.dataset.outcome = hints ? m.outcome : "hidden";
    if (hints && m.remoteness !== undefined) li.dataset.remoteness = m.remoteness;
    const button = document.createElement("button");
    button.className = hints ? `outcome-${m.outcome}` : "outcome-hidden";
    button.textContent = hints ? `${m.label}: ${movePhrase(m)} for the mover` : m.label;
    button.disabled = Boolean(over || waiting);
    button.addEventListener("click", () => onMove(m));
    li.append(button);
    list.append(li);
  }
  if (view.moves.length === 0) {
    const li = document.createElement("li");
    li.textContent = session.misere ? "No move: the player to move has won (misère play)."
      : "No move: the player to move has lost.";
    list.append(li);
  }
  if (view.omitted > 0n) {
    const li = document.createElement("li");
    li.className = "hint";
    li.id = "moves-omitted";
    li.textContent = `… and ${view.omitted} more moves, not listed (the list stops at ${view.moves.length}).`;
    list.append(li);
  }
  if (hadFocus) {
    const first = list.querySelector("button:not([disabled])");
    if (first) first.focus();
  }
}

const said = (entry) => `${entry.by ? `${entry.by}: ` : ""}${entry.label}`;

// The line shown, each entry a button; an entry with other variations beside it lists them
// ("or token 0 → 2"), each a button that switches to it (so do ↑ and ↓ on the current one).
function showHistory(session, onGoTo, onSwitch) {
  const list = $("history");
  list.replaceChildren();
  session.history.forEach((entry, i) => {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.textContent = i === 0 ? `start: ${positionText(entry.view.position) || "(empty)"}` : said(entry);
    button.dataset.index = i;
    if (i === session.cursor) { button.setAttribute("aria-current", "step"); li.className = "current"; }
    button.disabled = Boolean(session.play && i >= session.play.start && !humanToMoveAt(session, i)
      && i !== session.history.length - 1);
    button.addEventListener("click", () => onGoTo(i));
    li.append(button);
    const { ids } = variationsAt(session, i);
    for (const id of ids.filter((other) => other !== entry.id)) {
      const other = document.createElement("button");
      other.className = "variation";
      other.dataset.node = id;
      other.textContent = `or ${said(session.nodes[id])}`;
      other.addEventListener("click", () => onSwitch(i, id));
      li.append(" ", other);
    }
    list.append(li);
  });
  keepInView(list, list.querySelector("li.current"));
}

// Scrolls `list` (not the page) so that `item` shows.
function keepInView(list, item) {
  if (!item) return;
  const box = list.getBoundingClientRect(), at = item.getBoundingClientRect();
  if (at.top < box.top) list.scrollTop -= box.top - at.top;
  else if (at.bottom > box.bottom) list.scrollTop += at.bottom - box.bottom;
}

function showStatus(session) {
  const status = $("game-status");
  status.replaceChildren();
  delete status.dataset.result;
  status.className = "";
  if (!session.play) return;
  // The status is a live region: the server's move is read out with what follows it.
  const entry = session.history[session.cursor];
  const played = entry.by === "server" ? `The server played ${entry.label}. ` : "";
  const over = resultAt(session, session.cursor);
  if (over) {
    status.dataset.result = over.result;
    status.className = "over";
    status.textContent = played + over.text;
  } else if (humanToMoveAt(session, session.cursor)) {
    status.textContent = `${played}Your move: pick one in the list, or click a token on the board and then where it goes.`;
  } else {
    status.textContent = "The server is to move…";
  }
}

export function showControls(session, clickMode) {
  const view = currentView(session);
  $("undo").disabled = undoTarget(session) === null;
  $("redo").disabled = redoTarget(session) === null;
  const loaded = Boolean(session.graph);
  for (const id of ["play-first", "play-second", "set-position", "clear-position", "save-game"]) $(id).disabled = !loaded;
  $("stop-game").hidden = !session.play;
  const chess = session.game === "chess";
  $("position").placeholder = chess ? "token vertices, e.g. 0 1" : "one value per vertex, e.g. 1 0 2";
  $("position-label").textContent = chess ? "Tokens (vertices):" : "Values (one per vertex):";
  $("position-hint").textContent = session.play || clickMode === "move"
    ? (chess ? "Click a token on the board, then the vertex it moves to."
      : "Click a vertex with a positive value to list its moves.")
    : (chess ? "Click a vertex to add a token, shift-click to remove one."
      : "Click a vertex to add 1 to its value, shift-click to subtract 1.");
  if (document.activeElement !== $("position")) $("position").value = view ? positionText(view.position) : "";
  $("legend-infinite").hidden = !(loaded && !session.misere && session.values.some((v) => v.infinite));
  $("legend-split").hidden = chess;
  $("legend-misere").hidden = !session.misere;
  $("legend-nim").hidden = session.misere;
}
