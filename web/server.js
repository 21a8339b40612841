// The page's requests to its server: a graph registered and its values (PutGraph, GetValues),
// a position analysed (EvaluateBatch), a picture drawn (POST /render, the renderer of
// `grundy render`) and the judge file `grundy play FILE` hands over (GET /preload). Each
// throws on failure; nothing here changes the session.

import * as Grpc from "./grpc-web.js";
import { candidateMoves, positionKey, positionMessage, serverMoveOf, sortMoves } from "./rules.js";

export const { GrpcError } = Grpc;

// Registers `graph` and returns the value of every vertex.
export async function valuesOf(graph, token) {
  const { graphId } = await Grpc.putGraph(graph, token);
  const { values } = await Grpc.getValues(graphId, token);
  return values;
}

// Evaluates `position` and every move from it: the view of the position (see session.js).
export async function analyse(position, { game, graph, offsets }, token) {
  const { moves, omitted } = candidateMoves(position, { game, graph, offsets });
  const positions = [position, ...moves.map((m) => m.position)].map((p) => positionMessage(game, p));
  const [verdict, ...after] = await Grpc.evaluate(graph, positions, token);
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
    const key = positionKey(game, suggestion.position);
    const listed = moves.find((m) => positionKey(game, m.position) === key);
    suggestion.label = listed ? listed.label : `${suggestion.from} → {${suggestion.to.join(" ")}}`;
  }
  return { position, verdict, moves: sortMoves(game, moves, suggestion), suggestion, omitted };
}

// The SVG of a render request, or the server's message: {ok, text}.
export async function render(body, token) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch("/render", { method: "POST", headers, body: JSON.stringify(body) });
  return { ok: response.ok, text: await response.text() };
}

// The judge file to open with, {game, text}, or null: 204 is the normal answer of a plain
// `--web` server.
export async function preload() {
  const response = await fetch("/preload");
  return response.status === 200 ? response.json() : null;
}
