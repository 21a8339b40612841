// What each control does, as steps that ask the server and then commit: a step computes
// the whole next state on a copy of the session (session.js), asks for everything it needs
// (the analyses, then the drawing, through `page.present`), and only then commits it. A
// failed, cancelled or timed-out step changes nothing. Steps run one at a time (activity.js)
// and get the AbortSignal of their run.
//
// `page` is the app's (app.js): {session, analyse(position, where, signal), analyseAll(
// positions, where, signal), valuesOf(graph, signal, misere), present(next, signal, options),
// clear(message), clickMode(), select(vertex), reply(view)}.

import * as loader from "./loader.js";
import { emptyPosition, offsetsOf, positionKey, positionText } from "./rules.js";
import * as server from "./server.js";
import * as Session from "./session.js";

const INVALID_ARGUMENT = 3;

// The history entry of `move` played, leading to `view`.
function entryOf(view, move, by) {
  const entry = { view, label: move.label, by, from: move.from, to: move.to };
  if (move.pairTarget !== undefined) entry.pairTarget = move.pairTarget;
  return entry;
}

export function createActions(page) {
  const { session } = page;
  const view = () => Session.currentView(session);

  // Load: the judge input's first test case, under the convention chosen (the misère play
  // switch). An input the page or the server rejects clears the board (nothing of the old
  // game stays beside the error); a request that fails for another reason (no server,
  // cancelled, a wrong token) changes nothing, and so does misère play asked for addsub.
  async function load(signal) {
    const misere = loader.chosenMisere();
    let parsed;
    try {
      parsed = loader.readJudgeInput();
    } catch (error) {
      page.clear(`Nothing to draw: ${error.message}`);
      throw error;
    }
    try {
      await selectCase(parsed.cases, parsed.game, 0, signal, misere);
    } catch (error) {
      if (error instanceof server.GrpcError && error.code === INVALID_ARGUMENT) {
        page.clear(`Nothing to draw: ${error.message}`);
      }
      throw error;
    }
  }

  // A test case: its graph registered, its values and its first query's analysis, under
  // misère play or not (by default, as the session plays).
  async function selectCase(cases, game, caseIndex, signal, misere = session.misere) {
    const c = cases[caseIndex];
    const graph = { outDegrees: c.outDegrees, targets: c.targets, splitCounts: c.splitCounts };
    const offsets = offsetsOf(graph);
    const values = await page.valuesOf(graph, signal, misere);
    const first = c.positions[0];
    const position = first ? [...first] : emptyPosition(game, graph);
    const start = await page.analyse(position, { game, graph, offsets, misere }, signal);
    const next = Session.copy(session);
    Session.open(next, { cases, caseIndex, game, graph, offsets, values, start, misere });
    await page.present(next, signal);
  }

  // A saved game (a file, a link, the back button): its graph and every position of its
  // tree analysed in one request (on the same graph and convention, what the page knows is
  // not asked again), the position shown, under the record's convention. `remember`: how
  // the page's address follows (app.js).
  async function reopen(record, signal, remember = "push") {
    const { game, graph, nodes, cursor, play, misere = false } = record;
    const offsets = offsetsOf(graph);
    const shape = (g) => JSON.stringify([g.outDegrees, g.targets, g.splitCounts || null]);
    const same = session.graph && session.game === game && session.misere === misere
      && shape(session.graph) === shape(graph);
    const key = (position) => positionKey(game, position);
    const known = new Map(same ? session.nodes.map((n) => [key(n.view.position), n.view]) : []);
    const values = same ? session.values : await page.valuesOf(graph, signal, misere);
    const missing = [...new Map(nodes.filter((n) => !known.has(key(n.position)))
      .map((n) => [key(n.position), n.position])).values()];
    if (missing.length > 0) {
      const views = await page.analyseAll(missing, { game, graph, offsets, misere }, signal);
      for (const view of views) known.set(key(view.position), view);
    }
    const root = nodes[0].position;
    const next = Session.copy(session);
    Session.open(next, {
      cases: same ? session.cases : [{ game, ...graph, positions: [root] }], caseIndex: same ? session.caseIndex : 0,
      game, graph, offsets, values, start: known.get(key(root)), misere,
    });
    Session.restore(next, nodes.map((n) => ({ ...n, view: known.get(key(n.position)) })), cursor);
    const start = play ? next.history.findIndex((n) => n.id === play.startNode) : -1;
    if (start >= 0 && start <= next.cursor) next.play = { humanFirst: play.humanFirst, start };
    await page.present(next, signal, { remember });
    if (!same) loader.showGame(game, graph, root, misere);
  }

  // Plays `move` of the position shown; in a game, the server's reply too.
  async function play(move, signal) {
    const current = view();
    if (!current || !current.moves.includes(move)) {
      throw new Error(`${move.label} is a move of a position no longer shown: nothing played`);
    }
    const entries = [entryOf(await page.analyse(move.position, session, signal), move, session.play ? "you" : null)];
    if (session.play && !Session.resultAfter(session, entries[0])) {
      const reply = page.reply(entries[0].view);
      entries.push(entryOf(await page.analyse(reply.position, session, signal), reply, "server"));
    }
    const next = Session.copy(session);
    Session.record(next, entries);
    await page.present(next, signal, { pauseBefore: entries.length === 2 });
  }

  async function startGame(humanFirst, signal) {
    const entries = [];
    if (!humanFirst && view().moves.length > 0) {
      const reply = page.reply(view());
      entries.push(entryOf(await page.analyse(reply.position, session, signal), reply, "server"));
    }
    const next = Session.copy(session);
    Session.beginGame(next, humanFirst, entries);
    await page.present(next, signal);
  }

  async function goTo(index, signal) {
    const next = Session.copy(session);
    if (Session.goTo(next, index)) await page.present(next, signal);
  }

  // Another variation at history[index]: node `id`, one of its siblings.
  async function switchTo(index, id, signal) {
    const next = Session.copy(session);
    if (Session.goTo(next, index) && Session.switchTo(next, id)) await page.present(next, signal);
  }

  async function stopGame(signal) {
    const next = Session.copy(session);
    Session.stopGame(next);
    await page.present(next, signal);
  }

  // A new position (typed, clicked or cleared): a fresh history from it, no game.
  async function setPosition(position, signal) {
    const analysed = await page.analyse(position, session, signal);
    const next = Session.copy(session);
    Session.stopGame(next);
    Session.record(next, [{ view: analysed, label: `set ${positionText(position) || "(empty)"}`, by: null }]);
    await page.present(next, signal);
  }

  // A press on vertex v: edit the position, or pick a token and then its target.
  async function pressVertex(v, remove, signal) {
    const current = view();
    if (!current) return;
    if (page.clickMode() === "edit") {
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
      await setPosition(position, signal);
      return;
    }
    if (session.play && (Session.resultAt(session, session.cursor) || !Session.humanToMoveAt(session, session.cursor))) return;
    if (session.selected !== null) {
      const move = current.moves.find((m) => m.from === session.selected && m.to.length === 1 && m.to[0] === v);
      if (move && session.game === "chess") {
        await play(move, signal);
        return;
      }
    }
    const hasMoves = current.moves.some((m) => m.from === v);
    page.select(hasMoves && session.selected !== v ? v : null);
  }

  return { load, selectCase, reopen, play, startGame, goTo, switchTo, stopGame, setPosition, pressVertex };
}
