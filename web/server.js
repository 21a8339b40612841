// The page's requests to its server: a graph registered and its values (PutGraph, GetValues),
// a position analysed (EvaluateBatch), a picture drawn (POST /render, the renderer of
// `grundy render`) and the judge file `grundy play FILE` hands over (GET /preload). Each
// throws on failure; nothing here changes the session.
//
// Every call takes `{token, signal}`: the bearer token, and the AbortSignal that cancels it
// (the page's Cancel button and time limit); a cancelled call throws the signal's reason.
// A server that cannot be reached throws an Unreachable error that says so plainly.
//
// The gRPC calls go through vendor/grundy-rpc.js (scripts/web-bundle.sh builds it): the
// grundy.v1 messages generated from proto/ and Connect's gRPC-Web transport, to this page's
// own origin. The messages are turned here into the plain objects the other modules read.

import * as Rpc from "./vendor/grundy-rpc.js";
import {
  MAX_LISTED_MOVES, analysedMoveOf, positionKey, positionMessage, serverMoveOf, sortMoves, splitMoves,
} from "./rules.js";

const transport = Rpc.createGrpcWebTransport({ baseUrl: "" });
const client = Rpc.createClient(Rpc.GrundyService, transport);

// A call that failed with a gRPC status: `code` is the status number (16 UNAUTHENTICATED),
// the message starts with the status name, as the server and the CLI spell it.
export class GrpcError extends Error {
  constructor(code, message) {
    const name = (Rpc.Code[code] || `code ${code}`).replace(/(?<=[a-z])(?=[A-Z])/g, "_").toUpperCase();
    super(`${name}: ${message}`);
    this.code = code;
  }
}

// A request that got no answer at all: the server is down, or the network is.
export class Unreachable extends Error {
  constructor() {
    super(`cannot reach the server at ${location.origin}: check that it is running and reachable`);
  }
}

// The error to throw for `error`, caught from a call made with `signal`.
function failure(error, signal) {
  if (signal && signal.aborted) return signal.reason;
  if (error instanceof TypeError) return new Unreachable(); // fetch() found no server
  const connect = Rpc.ConnectError.from(error);
  if (connect.cause instanceof TypeError) return new Unreachable();
  return new GrpcError(connect.code, connect.rawMessage);
}

// Runs `call` with the bearer token's headers; a failure thrown as failure() names it.
async function withToken({ token, signal }, call) {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  try {
    return await call(headers);
  } catch (error) {
    throw failure(error, signal);
  }
}

function graphMessage(graph) {
  return {
    vertexCount: graph.outDegrees.length,
    outDegrees: graph.outDegrees,
    targets: graph.targets,
    splitCounts: graph.splitCounts || [],
  };
}

// VertexValue -> {finite: n} | {infinite: [K...]}, plus counter when present (numbers: the
// page's values stay below 2^53), and under misère play {misere: {outcome, remoteness}}
// (the outcome of one token on the vertex, "win", "lose" or "draw"; remoteness or null).
function valueOf(message) {
  const value = {};
  if (message.outcome) {
    const remoteness = message.remoteness === undefined ? null : Number(message.remoteness);
    value.misere = { outcome: outcomeOf(message.outcome).toLowerCase(), remoteness };
  }
  if (message.value.case === "infinite") value.infinite = message.value.value.finiteFollowers.map(Number);
  else value.finite = Number(message.value.value ?? 0n);
  if (message.counter !== undefined) value.counter = Number(message.counter);
  return value;
}

// Move -> {token: TokenMove} | {split: SplitMove} (empty when the kind is unset).
function moveOf(message) {
  return message && message.kind.case ? { [message.kind.case]: message.kind.value } : {};
}

const OUTCOMES = { [Rpc.Outcome.WIN]: "WIN", [Rpc.Outcome.LOSE]: "LOSE", [Rpc.Outcome.DRAW]: "DRAW" };
const outcomeOf = (outcome) => OUTCOMES[outcome] || "UNSPECIFIED";

// The request's play convention: misère play (the player who cannot move wins) or normal.
const convention = (misere) => (misere ? Rpc.PlayConvention.MISERE : Rpc.PlayConvention.UNSPECIFIED);

// Verdict -> the verdict with its outcomes as names, its moves as moveOf gives them.
function verdictOf(message) {
  return {
    ...message,
    outcome: outcomeOf(message.outcome),
    bestMove: message.bestMove && moveOf(message.bestMove),
    moves: message.moves.map((analysed) => ({
      ...analysed, move: moveOf(analysed.move), outcome: outcomeOf(analysed.outcome),
    })),
  };
}

// Registers `graph` and returns the value of every vertex (`options.misere`: under misère
// play, with the misère outcome of one token on it).
export async function valuesOf(graph, options) {
  const { signal, misere = false } = options;
  return withToken(options, async (headers) => {
    // PutGraph streams its request, which fetch() cannot do: the whole graph goes in one
    // chunk, so the call is one request message and one response, which the transport's
    // unary call sends and reads (Connect's client refuses client-streaming methods).
    const request = Rpc.create(Rpc.PutGraphRequestSchema, { chunk: graphMessage(graph) });
    const put = await transport.unary(Rpc.GrundyService.method.putGraph, signal, undefined, headers, request);
    const values = [];
    const asked = { graphId: put.message.graphId, playConvention: convention(misere) };
    for await (const page of client.getValues(asked, { headers, signal })) {
      page.values.forEach((value, i) => { values[page.firstVertex + i] = valueOf(value); });
    }
    return values;
  });
}

// EvaluateBatch with explain and the analysis: each verdict carries the position's remoteness
// and up to `maxMoves` of its moves best first (0 is the server's cap). Positions are
// {tokens: [...]} or {dense: [...]}; returns their verdicts in order. `misere`: under misère
// play (the verdicts, moves and remoteness are the misère ones).
async function evaluate(graph, positions, options, maxMoves, misere = false) {
  const queries = positions.map((position, id) => ({
    id: BigInt(id),
    position: position.dense
      ? { case: "denseValues", value: { values: position.dense.map(BigInt) } }
      : { case: "tokens", value: { vertices: position.tokens } },
  }));
  const request = {
    start: {
      graphSource: { case: "graph", value: graphMessage(graph) },
      explain: true,
      analysis: { maxMoves },
      playConvention: convention(misere),
    },
    queries,
  };
  const verdicts = [];
  await withToken(options, async (headers) => {
    for await (const response of client.evaluateBatch(request, { headers, signal: options.signal })) {
      for (const verdict of response.verdicts) verdicts[Number(verdict.queryId)] = verdictOf(verdict);
    }
  });
  const answered = verdicts.filter(Boolean).length;
  if (answered !== positions.length) {
    throw new Error(`the server answered ${answered} of ${positions.length} positions`);
  }
  return verdicts;
}

// Evaluates `position` and every move from it: the view of the position (see session.js),
// its moves best first for the player to move, with what each leads to.
export async function analyse(position, where, options) {
  const [view] = await analyseAll([position], where, options);
  return view;
}

// The views of several positions, in one request (a saved game reopened). `where`: {game,
// graph, offsets, misere}.
export function analyseAll(positions, where, options) {
  return where.game === "chess" ? analyseTokens(positions, where, options) : analyseSplits(positions, where, options);
}

function checked(verdict) {
  if (verdict.error) throw new Error(`${verdict.error.field}: ${verdict.error.message}`);
  return verdict;
}

// Token sliding: the verdict lists every move best first (fastest win first, longest
// resistance last), each with its outcome for the mover and the remoteness after it.
async function analyseTokens(positions, { game, graph, misere }, options) {
  const messages = positions.map((p) => positionMessage(game, p));
  const verdicts = await evaluate(graph, messages, options, MAX_LISTED_MOVES, Boolean(misere));
  return verdicts.map((verdict, i) => {
    const position = positions[i];
    const moves = checked(verdict).moves.map((analysed) => analysedMoveOf(analysed, position));
    const omitted = BigInt(verdict.movesOmitted);
    return { position, verdict, moves, suggestion: suggestionOf(verdict, position, game, moves), omitted };
  });
}

// Addition-Subtraction: the verdict names one winning move per vertex, so the page lists
// the moves itself and learns where each leads from the verdicts of the positions after
// them, asked in the same request.
async function analyseSplits(positions, { game, graph, offsets }, options) {
  const listed = positions.map((position) => splitMoves(position, { graph, offsets }));
  const asked = positions.flatMap((position, i) => [position, ...listed[i].moves.map((m) => m.position)]);
  const verdicts = await evaluate(graph, asked.map((p) => positionMessage(game, p)), options, 1);
  // A move is as good for its player as the position it leads to is bad for the other.
  const forMover = { LOSE: "win", WIN: "lose", DRAW: "draw" };
  let at = 0;
  return positions.map((position, i) => {
    const { moves, omitted } = listed[i];
    const verdict = checked(verdicts[at]);
    moves.forEach((m, j) => { m.outcome = forMover[verdicts[at + 1 + j].outcome] || "draw"; });
    at += 1 + moves.length;
    const suggestion = suggestionOf(verdict, position, game, moves);
    return { position, verdict, moves: sortMoves(game, moves, suggestion), suggestion, omitted };
  });
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

// The SVG of a render request; the server's message (its status and text) is thrown.
export async function render(body, { token, signal }) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  try {
    const response = await fetch("/render", { method: "POST", headers, body: JSON.stringify(body), signal });
    const text = await response.text();
    if (!response.ok) throw new Error(`drawing refused (HTTP ${response.status}): ${text.slice(0, 300)}`);
    return text;
  } catch (error) {
    if (signal && signal.aborted) throw signal.reason;
    throw error instanceof TypeError ? new Unreachable() : error;
  }
}

// The judge file to open with, {game, text, misere}, or null: 204 is the normal answer of a plain
// `--web` server.
export async function preload() {
  const response = await fetch("/preload");
  return response.status === 200 ? response.json() : null;
}
