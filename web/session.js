// The session: the game loaded, the tree of positions played, and a game against the server
// played from one of them. Pure (no DOM, no requests): the page computes every next state
// first and commits it here only when all its requests have succeeded.
//
// The positions form a tree: a move played from a position that already has moves after it
// starts a variation beside them instead of erasing them. `nodes[i]` = {parent, children,
// active, view, label, by, from, to, pairTarget?}: `active` is the child the line follows.
// `history` is the line shown: from the root to the cursor's node, then on through the
// active children to the end; `cursor` is the index of the position shown in it.

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
    misere: false, // misère play: the player who cannot move wins (token sliding only)
    // The nodes; history[i] is one of them (with its index as `id`): view = {position,
    // verdict, moves, suggestion, omitted}; entry 0 is the root, each later one a move.
    nodes: [],
    history: [],
    cursor: 0,
    play: null, // {humanFirst, start}: a game from history[start]
    selected: null, // the vertex picked on the board as the source of a move
  };
}

// A copy to compute a next state on: every change below replaces the arrays and objects it
// changes instead of editing them, so the copy shares the rest safely.
export function copy(session) { return { ...session }; }

// The view of the position shown.
export function currentView(session) {
  const entry = session.history[session.cursor];
  return entry && entry.view;
}

// Forgets the graph (after a Load that failed: nothing of the old game stays).
export function clear(session) {
  Object.assign(session, { graph: null, cases: [], nodes: [], history: [], cursor: 0, play: null, selected: null });
}

// The line through node `id`: its ancestors, itself, then its active descendants.
function lineThrough(nodes, id) {
  const line = [];
  for (let at = id; at !== -1; at = nodes[at].parent) line.unshift(nodes[at]);
  for (let at = nodes[id]; at.children.length > 0;) {
    at = nodes[at.children[at.active]];
    line.push(at);
  }
  return line;
}

// Shows node `id`: the line through it, the cursor on it.
function showNode(session, id) {
  session.history = lineThrough(session.nodes, id);
  session.cursor = session.history.findIndex((node) => node.id === id);
}

// Sets a tree: `nodes` as {parent, view, label, by, from, to, pairTarget?, active?} with
// parents before children, node `cursor` shown. (A saved game reopened.)
export function restore(session, nodes, cursor) {
  const tree = nodes.map((node, id) => ({ ...node, id, children: [], active: 0 }));
  for (const node of tree) if (node.parent !== -1) tree[node.parent].children.push(node.id);
  nodes.forEach((node, id) => {
    if (node.active >= 0 && node.active < tree[id].children.length) tree[id].active = node.active;
  });
  session.nodes = tree;
  session.selected = null;
  showNode(session, cursor);
}

// A test case opened: its graph, values and first position start a fresh history.
export function open(session, { cases, caseIndex, game, graph, offsets, values, start, misere = false }) {
  Object.assign(session, { cases, caseIndex, game, graph, offsets, values, misere, play: null, selected: null });
  restore(session, [{ parent: -1, view: start, label: "start", by: null }], 0);
}

// Plays `entries` one after the other from the position shown: each follows a child that
// leads to the same position (same mover), or starts a new variation.
export function record(session, entries) {
  const nodes = [...session.nodes];
  let at = session.history[session.cursor].id;
  for (const entry of entries) {
    const parent = nodes[at];
    const key = positionKey(session.game, entry.view.position);
    const same = parent.children.findIndex((c) =>
      nodes[c].by === entry.by && positionKey(session.game, nodes[c].view.position) === key);
    if (same >= 0) {
      nodes[at] = { ...parent, active: same };
      at = parent.children[same];
    } else {
      const id = nodes.length;
      nodes.push({ ...entry, parent: at, id, children: [], active: 0 });
      nodes[at] = { ...parent, children: [...parent.children, id], active: parent.children.length };
      at = id;
    }
  }
  session.nodes = nodes;
  session.selected = null;
  showNode(session, at);
}

// The variations at history[index]: its node and its siblings, {ids, at} (at: its place).
export function variationsAt(session, index) {
  const node = session.history[index];
  if (!node || node.parent === -1) return { ids: [node ? node.id : 0], at: 0 };
  const ids = session.nodes[node.parent].children;
  return { ids, at: ids.indexOf(node.id) };
}

// Shows the sibling `id` of the position shown (another variation), following its line; a
// game in progress stops. False when there is no such sibling.
export function switchTo(session, id) {
  const node = session.nodes[id];
  const shown = session.history[session.cursor];
  if (!node || node.parent === -1 || node.parent !== shown.parent || id === shown.id) return false;
  const nodes = [...session.nodes];
  const parent = nodes[node.parent];
  nodes[node.parent] = { ...parent, active: parent.children.indexOf(id) };
  session.nodes = nodes;
  stopGame(session);
  session.selected = null;
  showNode(session, id);
  return true;
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

// Whether the game is over at history[index]: {result, text} or null. The player left
// without a move loses, or under misère play wins. A repetition ends
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

