// gRPC-Web for the playground: a minimal protobuf encoder/decoder for the few grundy.v1
// messages the page uses (proto/grundy/v1/grundy.proto is the reference for every field
// number below), and unary / server-streaming calls over fetch() to the page's own origin.
//
// Protobuf wire format in brief: each field is a varint key (field_number << 3 | wire_type);
// wire type 0 is a varint, 2 is length-delimited (bytes, strings, sub-messages, packed
// repeated scalars). gRPC-Web frames every message as 1 flag byte (0 data, 0x80 trailers),
// a 4-byte big-endian length and the bytes.
// ---- encoding ----
class Writer {
  constructor() { this.bytes = []; }
  varint(value) {
    // Numbers up to 2^53 (vertex ids, counts, the playground's values).
    let v = Number(value);
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`not a protobuf uint: ${value}`);
    while (v >= 0x80) { this.bytes.push((v % 0x80) | 0x80); v = Math.floor(v / 0x80); }
    this.bytes.push(v);
    return this;
  }
  key(field, wireType) { return this.varint(field * 8 + wireType); }
  uint(field, value) { return value ? this.key(field, 0).varint(value) : this; }
  bool(field, value) { return value ? this.key(field, 0).varint(1) : this; }
  bytesField(field, bytes) {
    this.key(field, 2).varint(bytes.length);
    for (const b of bytes) this.bytes.push(b);
    return this;
  }
  string(field, text) { return text ? this.bytesField(field, new TextEncoder().encode(text)) : this; }
  message(field, writeFn) {
    const inner = new Writer();
    writeFn(inner);
    return this.bytesField(field, inner.bytes);
  }
  packed(field, values) {
    if (!values || values.length === 0) return this;
    const inner = new Writer();
    for (const v of values) inner.varint(v);
    return this.bytesField(field, inner.bytes);
  }
  finish() { return Uint8Array.from(this.bytes); }
}

// ---- decoding ----
class Reader {
  constructor(bytes) { this.bytes = bytes; this.pos = 0; }
  done() { return this.pos >= this.bytes.length; }
  varint() {
    let result = 0, scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.bytes.length) throw new Error("truncated varint");
      const b = this.bytes[this.pos++];
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result; // exact up to 2^53, which is all the page meets
      scale *= 0x80;
    }
    throw new Error("varint too long");
  }
  chunk() {
    const length = this.varint();
    if (this.pos + length > this.bytes.length) throw new Error("truncated field");
    const out = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }
  // Calls fn(field, wireType, reader) for each field; skips what fn does not read.
  fields(fn) {
    while (!this.done()) {
      const key = this.varint();
      const field = Math.floor(key / 8), wireType = key & 7;
      const start = this.pos;
      if (fn(field, wireType, this) === undefined && this.pos === start) this.skip(wireType);
    }
  }
  skip(wireType) {
    if (wireType === 0) this.varint();
    else if (wireType === 2) this.chunk();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
  }
  // A repeated varint field, packed or not.
  repeated(wireType, into) {
    if (wireType === 0) { into.push(this.varint()); return into; }
    const inner = new Reader(this.chunk());
    while (!inner.done()) into.push(inner.varint());
    return into;
  }
  string() { return new TextDecoder().decode(this.chunk()); }
  sub() { return new Reader(this.chunk()); }
}

// ---- grundy.v1 messages ----
function writeGraph(w, graph) {
  w.uint(1, graph.outDegrees.length)
    .packed(2, graph.outDegrees)
    .packed(3, graph.targets)
    .packed(4, graph.splitCounts || []);
}

function readSummary(r) {
  const summary = { vertexCount: 0, edgeCount: 0, cyclic: false, hasSplitCounts: false, graphId: "" };
  r.fields((f, t, r) => {
    if (f === 1) summary.vertexCount = r.varint();
    else if (f === 2) summary.edgeCount = r.varint();
    else if (f === 3) summary.cyclic = r.varint() !== 0;
    else if (f === 4) summary.hasSplitCounts = r.varint() !== 0;
    else if (f === 5) summary.maxValue = r.varint();
    else if (f === 6) summary.graphId = r.string();
  });
  return summary;
}

// VertexValue -> {finite: n} | {infinite: [K...]}, plus counter when present.
function readValue(r) {
  const value = {};
  r.fields((f, t, r) => {
    if (f === 1) value.finite = r.varint();
    else if (f === 2) {
      value.infinite = [];
      r.sub().fields((g, u, s) => { if (g === 1) s.repeated(u, value.infinite); });
    } else if (f === 3) value.counter = r.varint();
  });
  if (value.finite === undefined && value.infinite === undefined) value.finite = 0;
  return value;
}

function readMove(r) {
  const move = {};
  r.fields((f, t, r) => {
    const m = r.sub();
    if (f === 1) {
      const token = { tokenIndex: 0, sourceVertex: 0, targetVertex: 0 };
      m.fields((g, u, s) => {
        if (g === 1) token.tokenIndex = s.varint();
        else if (g === 2) token.sourceVertex = s.varint();
        else if (g === 3) token.targetVertex = s.varint();
      });
      move.token = token;
    } else if (f === 2) {
      const split = { vertex: 0, oddTargets: [], pairTarget: 0, pairCount: 0 };
      m.fields((g, u, s) => {
        if (g === 1) split.vertex = s.varint();
        else if (g === 2) s.repeated(u, split.oddTargets);
        else if (g === 3) split.pairTarget = s.varint();
        else if (g === 4) split.pairCount = s.varint();
      });
      move.split = split;
    }
    return true;
  });
  return move;
}

const OUTCOMES = ["UNSPECIFIED", "WIN", "LOSE", "DRAW"];

// AnalysedMove -> {move, outcome (for the player making it), remoteness?, overBudget}.
function readAnalysedMove(r) {
  const analysed = { move: {}, outcome: "UNSPECIFIED", overBudget: false };
  r.fields((f, t, r) => {
    if (f === 1) analysed.move = readMove(r.sub());
    else if (f === 2) analysed.outcome = OUTCOMES[r.varint()] || "UNSPECIFIED";
    else if (f === 3) analysed.remoteness = r.varint(); // optional: of the position after
    else if (f === 4) analysed.overBudget = r.varint() !== 0;
  });
  return analysed;
}

function readVerdict(r) {
  const verdict = { queryId: 0, outcome: "UNSPECIFIED", nimSum: 0, moves: [], movesOmitted: 0 };
  r.fields((f, t, r) => {
    if (f === 1) verdict.queryId = r.varint();
    else if (f === 2) verdict.outcome = OUTCOMES[r.varint()] || "UNSPECIFIED";
    else if (f === 3) verdict.nimSum = r.varint();
    else if (f === 4) {
      verdict.error = { field: "", message: "" };
      r.sub().fields((g, u, s) => {
        if (g === 1) verdict.error.field = s.string();
        else if (g === 2) verdict.error.message = s.string();
      });
    } else if (f === 5) verdict.bestMove = readMove(r.sub());
    else if (f === 6) verdict.remoteness = r.varint(); // optional: present when known
    else if (f === 7) verdict.remotenessUnknown = r.varint();
    else if (f === 8) verdict.moves.push(readAnalysedMove(r.sub())); // best first
    else if (f === 9) verdict.movesOmitted = r.varint();
  });
  return verdict;
}

// ---- transport ----
class GrpcError extends Error {
  constructor(code, message) {
    super(`${CODES[code] || "code " + code}: ${message}`);
    this.code = code;
  }
}
const CODES = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
  "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
  "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"];

function parseTrailers(text, into) {
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) into[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
}

function statusOf(trailers) {
  const code = Number(trailers["grpc-status"] ?? 2);
  let message = trailers["grpc-message"] || "";
  try { message = decodeURIComponent(message); } catch (e) { /* keep it as sent */ }
  return { code, message };
}

// One call: `method` of grundy.v1.GrundyService, one request message; returns the
// response messages' bytes. Throws GrpcError for a non-OK status.
async function call(method, requestBytes, token) {
  const frame = new Uint8Array(5 + requestBytes.length);
  new DataView(frame.buffer).setUint32(1, requestBytes.length);
  frame.set(requestBytes, 5);
  const headers = { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" };
  if (token) headers["authorization"] = `Bearer ${token}`;
  const response = await fetch(`/grundy.v1.GrundyService/${method}`, {
    method: "POST", headers, body: frame,
  });
  const trailers = {};
  for (const name of ["grpc-status", "grpc-message"]) {
    if (response.headers.has(name)) trailers[name] = response.headers.get(name);
  }
  if (!response.ok) throw new GrpcError(2, `HTTP ${response.status} from the server`);
  const body = new Uint8Array(await response.arrayBuffer());
  const messages = [];
  let pos = 0;
  while (pos + 5 <= body.length) {
    const flag = body[pos];
    const length = new DataView(body.buffer, body.byteOffset + pos + 1, 4).getUint32(0);
    const payload = body.subarray(pos + 5, pos + 5 + length);
    pos += 5 + length;
    if (flag & 0x80) parseTrailers(new TextDecoder().decode(payload), trailers);
    else messages.push(payload);
  }
  const status = statusOf(trailers);
  if (status.code !== 0) throw new GrpcError(status.code, status.message);
  return messages;
}

// PutGraph with the whole graph in one chunk: {graphId, summary}.
async function putGraph(graph, token) {
  const request = new Writer().message(1, (w) => writeGraph(w, graph)).finish();
  const [bytes] = await call("PutGraph", request, token);
  const result = { graphId: "", summary: null };
  new Reader(bytes || new Uint8Array()).fields((f, t, r) => {
    if (f === 1) result.graphId = r.string();
    else if (f === 2) result.summary = readSummary(r.sub());
  });
  return result;
}

// GetValues of a registered graph: {summary, values[vertex]}.
async function getValues(graphId, token) {
  const request = new Writer().string(1, graphId).finish();
  const messages = await call("GetValues", request, token);
  const result = { summary: null, values: [] };
  for (const bytes of messages) {
    let first = 0;
    const page = [];
    new Reader(bytes).fields((f, t, r) => {
      if (f === 1) result.summary = readSummary(r.sub());
      else if (f === 2) first = r.varint();
      else if (f === 3) page.push(readValue(r.sub()));
    });
    page.forEach((value, i) => { result.values[first + i] = value; });
  }
  return result;
}

// EvaluateBatch with explain and the analysis (EvaluateStart.analysis = 4): each verdict
// carries the position's remoteness and up to `maxMoves` of its moves best first
// (AnalysisOptions.max_moves = 1; 0 is the server's cap). Positions are {tokens: [...]} or
// {dense: [...]}; returns the verdicts (field 1 of each EvaluateBatchResponse) in order.
async function evaluate(graph, positions, token, { maxMoves = 0 } = {}) {
  const w = new Writer().message(1, (s) => {
    s.message(1, (g) => writeGraph(g, graph)).bool(3, true).message(4, (a) => a.uint(1, maxMoves));
  });
  positions.forEach((position, id) => {
    w.message(2, (q) => {
      q.uint(1, id);
      if (position.dense) q.message(3, (d) => d.packed(1, position.dense));
      else q.message(2, (t) => t.packed(1, position.tokens));
    });
  });
  const messages = await call("EvaluateBatch", w.finish(), token);
  const verdicts = [];
  for (const bytes of messages) {
    new Reader(bytes).fields((f, t, r) => {
      if (f === 1) verdicts.push(readVerdict(r.sub()));
    });
  }
  if (verdicts.length !== positions.length) {
    throw new Error(`the server answered ${verdicts.length} of ${positions.length} positions`);
  }
  return verdicts;
}

export { putGraph, getValues, evaluate, GrpcError, Writer, Reader };
