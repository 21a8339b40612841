// The loader and builder panel: the judge text pasted (or the sample), its test cases and
// queries in the selects, a typed position checked, and the graph builder, which edits the
// graph shown and writes it back as judge text for the page to load.

import * as Judge from "./judge.js";
import { offsetsOf, successors } from "./rules.js";
import { currentView } from "./session.js";

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

const $ = (id) => document.getElementById(id);

function chosenGame() { return document.querySelector("input[name=game]:checked").value; }

// The sample, unless something is in the input already.
export function fillSample() {
  if (!$("judge-input").value) $("judge-input").value = SAMPLE;
}

// A judge file handed over by the server (`grundy play FILE`), and its convention
// (`--misere`).
export function fillPreload({ game, text, misere }) {
  document.querySelector(`input[name=game][value=${game === "addsub" ? "addsub" : "chess"}]`).checked = true;
  if (text) $("judge-input").value = text;
  $("misere").checked = Boolean(misere);
}

// Whether misère play is chosen (the player who cannot move wins); throws when the game
// chosen has no misère answer (addsub).
export function chosenMisere() {
  const misere = $("misere").checked;
  if (misere && chosenGame() !== "chess") {
    throw new Error("misère play is for chess (token sliding) only: untick “misère play” to load addsub");
  }
  return misere;
}

// A game reopened (a file, a link): its graph and start written as the judge input, its
// convention chosen.
export function showGame(game, graph, position, misere = false) {
  document.querySelector(`input[name=game][value=${game}]`).checked = true;
  $("misere").checked = misere;
  $("judge-input").value = game === "chess" ? Judge.chessText(graph, position) : Judge.addsubText(graph, position);
}

// The test cases of the input: {game, cases}. Throws with the line and column of an error.
export function readJudgeInput() {
  const game = chosenGame();

  const text = $("judge-input").value;
  const cases = game === "chess" ? Judge.parseChess(text) : Judge.parseAddsub(text);
  if (cases.length === 0) throw new Error("no test case in the input");
  return { game, cases };
}

// The test case and query selects, for the session's cases (empty without a graph).
export function fillSelects(session) {
  if (!session.graph) {
    $("case-select").replaceChildren();
    $("query-select").replaceChildren();
    return;
  }
  $("case-select").replaceChildren(...session.cases.map((c, i) => {
    const option = document.createElement("option");
    option.value = i;
    option.textContent = `${i + 1}: ${c.outDegrees.length} vertices`;
    option.selected = i === session.caseIndex;
    return option;
  }));
  const queries = session.cases[session.caseIndex].positions;
  const unit = session.game === "chess" ? "tokens" : "values";
  $("query-select").replaceChildren(...queries.map((q, i) => {
    const option = document.createElement("option");
    option.value = i;
    const text = q.join(" ");
    option.textContent = `${i + 1}: ${unit} ${text.length > 40 ? text.slice(0, 40) + "…" : text}`;
    return option;
  }));
  $("query-select").disabled = queries.length === 0;
}

// The position typed in #position, checked against the graph.
export function parsePosition(session) {
  const numbers = $("position").value.trim().split(/\s+/).filter(Boolean).map((t, i) => {
    if (!/^\d+$/.test(t)) throw new Error(`position, item ${i + 1}: not a number: "${t.slice(0, 20)}"`);
    if (!Number.isSafeInteger(Number(t))) {
      throw new Error(`position, item ${i + 1}: ${t.slice(0, 24)} is above 2^53 − 1, the largest number the page holds exactly (only its parity matters: use ${BigInt(t) % 2n === 0n ? 2 : 1}, or the command-line judge, which takes values up to 2^64 − 1)`);
    }
    return Number(t);
  });
  const n = session.graph.outDegrees.length;
  if (session.game === "chess") {
    numbers.forEach((v, i) => { if (v >= n) throw new Error(`position, token ${i + 1}: vertex ${v} is out of range (0..${n - 1})`); });
  } else if (numbers.length !== n) {
    throw new Error(`position: ${numbers.length} values, expected one per vertex (${n})`);
  }
  return numbers;
}

function edgeInputs(n) {
  const from = Number($("edge-from").value), to = Number($("edge-to").value);
  if (!(Number.isInteger(from) && Number.isInteger(to) && from >= 0 && to >= 0 && from < n && to < n)) {
    throw new Error(`edge: vertices are 0..${n - 1}`);
  }
  return [from, to];
}

// The builder's edits of the successor lists, by the id of their button.
export const EDITS = {
  "new-graph": () => ({ lists: [[]], position: [] }),
  "add-vertex": ({ lists }) => {
    lists.push([]);
    return { lists };
  },
  "add-edge": ({ lists }) => {
    const [from, to] = edgeInputs(lists.length);
    lists[from].push(to);
    return { lists };
  },
  "remove-edge": ({ lists }) => {
    const [from, to] = edgeInputs(lists.length);
    const at = lists[from].indexOf(to);
    if (at < 0) throw new Error(`edge: there is no edge ${from} → ${to}`);
    lists[from].splice(at, 1);
    return { lists };
  },
};

// Applies `edit` to a copy of the session's graph and position and writes the result into
// the judge input (the caller loads it).
export function writeEditedGraph(session, edit) {
  if (session.play) throw new Error("a game is in progress: stop it first");
  const game = chosenGame();
  const base = session.graph || { outDegrees: [], targets: [], splitCounts: [] };
  const baseOffsets = offsetsOf(base);
  const lists = base.outDegrees.map((_, v) => successors(v, base, baseOffsets));
  const view = currentView(session);
  let position = view ? [...view.position] : [];
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
}
