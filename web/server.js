// The page's requests to its server: a graph registered and its values (PutGraph, GetValues),
// a position analysed (EvaluateBatch), a picture drawn (POST /render, the renderer of
// `grundy render`) and the judge file `grundy play FILE` hands over (GET /preload). Each
// throws on failure; nothing here changes the session.

import * as Grpc from "./grpc-web.js";
import {
  MAX_LISTED_MOVES, analysedMoveOf, positionKey, positionMessage, serverMoveOf, sortMoves, splitMoves,
} from "./rules.js";

export const { GrpcError } = Grpc;

// Registers `graph` and returns the value of every vertex.
export async function valuesOf(graph, token) {
  const { graphId } = await Grpc.putGraph(graph, token);
  const { values } = await Grpc.getValues(graphId, token);
  return values;
}

// Evaluates `position` and every move from it: the view of the position (see session.js),
// its moves best first for the player to move, with what each leads to.
export function analyse(position, where, token) {
  return where.game === "chess" ? analyseTokens(position, where, token) : analyseSplits(position, where, token);
}

// Token sliding: the verdict lists every move best first (fastest win first, longest
// resistance last), each with its outcome for the mover and the remoteness after it.
async function analyseTokens(position, { game, graph }, token) {
  const [verdict] = await Grpc.evaluate(graph, [positionMessage(game, position)], token,
    { maxMoves: MAX_LISTED_MOVES });
  if (verdict.error) throw new Error(`${verdict.error.field}: ${verdict.error.message}`);
  const moves = verdict.moves.map((analysed) => analysedMoveOf(analysed, position));
  const omitted = BigInt(verdict.movesOmitted);
  return { position, verdict, moves, suggestion: suggestionOf(verdict, position, game, moves), omitted };
}

// Addition-Subtraction: the verdict names one winning move per vertex, so the page lists
// the moves itself and learns where each leads from the verdicts of the positions after
// them, asked in the same request.
async function analyseSplits(position, { game, graph, offsets }, token) {
  const { moves, omitted } = splitMoves(position, { graph, offsets });
  const positions = [position, ...moves.map((m) => m.position)].map((p) => positionMessage(game, p));
  const [verdict, ...after] = await Grpc.evaluate(graph, positions, token, { maxMoves: 1 });
  if (verdict.error) throw new Error(`${verdict.error.field}: ${verdict.error.message}`);
  // A move is as good for its player as the position it leads to is bad for the other.
  const forMover = { LOSE: "win", WIN: "lose", DRAW: "draw" };
  moves.forEach((m, i) => { m.outcome = forMover[after[i].outcome] || "draw"; });
  const suggestion = suggestionOf(verdict, position, game, moves);
  return { position, verdict, moves: sortMoves(game, moves, suggestion), suggestion, omitted };
}

// The server's move of a verdict, labelled as in the move list.
function suggestionOf(verdict, position, game, moves) {
  const best = verdict.bestMove;
  if (!best || !(best.token || best.split)) return null;
  const suggestion = serverMoveOf(best, position);
  const key = positionKey(game, suggestion.position);
  const listed = moves.find((m) => positionKey(game, m.position) === key);
  suggestion.label = listed ? listed.label : `${suggestion.from} → {${suggestion.to.join(" ")}}`;
  return suggestion;
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
