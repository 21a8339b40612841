// The session: the game loaded, the history of positions shown, and a game against the
// server played from one of them. Pure (no DOM, no requests): the page computes every
// next state first and commits it here only when all its requests have succeeded.

import { positionKey } from "./rules.js";

export const MAX_PLIES = 400; // a game on a cyclic graph can go on for ever

export function createSession() {
  return {
    cases: [],
    caseIndex: 0,
    game: "chess",
    graph: null, // {outDegrees, targets, splitCounts?}
    offsets: [],
    values: [],
    misere: false, // misère play: the player who cannot move wins
    // history[i] = {view, label, by, from, to}: view = {position, verdict, moves, suggestion,
    // omitted}; entry 0 is where the history starts, each later one a move.
    history: [],
    cursor: 0,
    play: null, // {humanFirst, start}: a game from history[start]
    selected: null, // the vertex picked on the board as the source of a move
  };
}

// The view of the position shown.
export function currentView(session) {
  const entry = session.history[session.cursor];
  return entry && entry.view;
}

// Forgets the graph (after a Load that failed: nothing of the old game stays).
export function clear(session) {
  Object.assign(session, { graph: null, cases: [], history: [], cursor: 0, play: null, selected: null });
}

// A test case opened: its graph, values and first position start a fresh history.
export function open(session, { cases, caseIndex, game, graph, offsets, values, start, misere = false }) {
  Object.assign(session, { cases, caseIndex, game, graph, offsets, values, misere, play: null, selected: null });
  session.history = [{ view: start, label: "start", by: null }];
  session.cursor = 0;
}

// Appends `entries` after the position shown (dropping what was redone from there).
export function record(session, entries) {
  session.history = [...session.history.slice(0, session.cursor + 1), ...entries];
  session.cursor = session.history.length - 1;
  session.selected = null;
}

// A game from the position shown, with the server's first move in `entries` if it has one.
export function beginGame(session, humanFirst, entries) {
  const start = session.cursor;
  record(session, entries);
  session.play = { humanFirst, start };
}

export function stopGame(session) { session.play = null; }

export function humanToMoveAt(session, index) {
  const play = session.play;
  return Boolean(play) && index >= play.start && ((index - play.start) % 2 === 0) === play.humanFirst;
}

// Whether the game is over at history[index]: {result, text} or null. A repetition ends
// the game as a draw only when the position is a DRAW: a won position repeated is still
// won, and the winner is steered to the win.
export function resultAt(session, index) {
  const play = session.play;
  if (!play || index < play.start) return null;
  const { view } = session.history[index];
  const humanToMove = humanToMoveAt(session, index);
  if (view.moves.length === 0) {
    if (session.misere) {
      return humanToMove
        ? { result: "you", text: "You win (misère play): you have no move left." }
        : { result: "server", text: "The server wins (misère play): it has no move left." };
    }
    return humanToMove
      ? { result: "server", text: "The server wins: you have no move left." }
      : { result: "you", text: "You win: the server has no move left." };
  }
  if (view.verdict.outcome === "DRAW") {
    const key = positionKey(session.game, view.position);
    for (let j = index - 2; j >= play.start; j -= 2) {
      if (positionKey(session.game, session.history[j].view.position) === key) {
        return { result: "draw", text: "Draw: a drawn position repeated; best play goes on for ever." };
      }
    }
  }
  if (index - play.start >= MAX_PLIES) {
    return { result: "stopped", text: `Stopped after ${MAX_PLIES} moves.` };
  }
  return null;
}

// Whether the game would be over after `entry` is played from the position shown.
export function resultAfter(session, entry) {
  const index = session.cursor + 1;
  return resultAt({ ...session, history: [...session.history.slice(0, index), entry] }, index);
}

// Where Undo and Redo go: in a game, to the human's previous (next) turn, or the end.
export function undoTarget(session) {
  if (!session.play) return session.cursor > 0 ? session.cursor - 1 : null;
  for (let j = session.cursor - 1; j >= session.play.start; j--) if (humanToMoveAt(session, j)) return j;
  return null;
}
export function redoTarget(session) {
  const last = session.history.length - 1;
  if (!session.play) return session.cursor < last ? session.cursor + 1 : null;
  for (let j = session.cursor + 1; j <= last; j++) if (humanToMoveAt(session, j) || j === last) return j;
  return null;
}

// Moves the cursor to history[index]; before the game's start, the game stops. False when
// there is no such entry.
export function goTo(session, index) {
  if (index === null || index < 0 || index >= session.history.length) return false;
  if (session.play && index < session.play.start) stopGame(session);
  session.cursor = index;
  session.selected = null;
  return true;
}

// The engine's choice: the fastest win, else a draw, else the longest resistance (the
// moves are listed so; without remoteness, the server's winning or draw-keeping move first).
export function engineChoice(view) { return view.moves[0]; }
