// A game as a file or a link: the graph, the tree of positions played (every variation),
// the position shown and a game in progress, as JSON
//   {format: "grundy-game", version: 1, game, misere, graph: {outDegrees, targets, splitCounts?},
//    nodes: [{parent, position, label, by, from?, to?, pairTarget?, active}], cursor, play}
// (`cursor` and `play.startNode` are node indices; `misere`: misère play, chess only; a
// record without it, as the first files were written, is normal play). In the page's address it is that JSON,
// deflated and base64url-encoded, after "#game=". Reading checks every field and names the
// one that is wrong. Pure but for the compression streams.

const FORMAT = "grundy-game";
const PREFIX = "#game=";
const MAX_NODES = 10000;
const MAX_VERTICES = 100000;
const MAX_LABEL = 120;

// The record of the session's game.
export function recordOf(session) {
  const { game, graph, nodes, history, cursor, play, misere } = session;
  return {
    format: FORMAT,
    version: 1,
    game,
    misere: Boolean(misere),
    graph: game === "chess" ? { outDegrees: graph.outDegrees, targets: graph.targets }
      : { outDegrees: graph.outDegrees, targets: graph.targets, splitCounts: graph.splitCounts },
    nodes: nodes.map((n) => {
      const node = { parent: n.parent, position: n.view.position, label: n.label, by: n.by, active: n.active };
      if (n.from !== undefined) Object.assign(node, { from: n.from, to: n.to });
      if (n.pairTarget !== undefined) node.pairTarget = n.pairTarget;
      return node;
    }),
    cursor: history[cursor].id,
    play: play ? { humanFirst: play.humanFirst, startNode: history[play.start].id } : null,
  };
}

function fail(field, message) { throw new Error(`saved game, ${field}: ${message}`); }

function count(value, field, below = Number.MAX_SAFE_INTEGER) {
  if (!Number.isSafeInteger(value) || value < 0 || value >= below) {
    fail(field, `expected a whole number${below < Number.MAX_SAFE_INTEGER ? ` below ${below}` : ""}, found ${JSON.stringify(value)}`.slice(0, 160));
  }
  return value;
}

function counts(value, field, below, length) {
  if (!Array.isArray(value)) fail(field, "expected a list of numbers");
  if (length !== undefined && value.length !== length) fail(field, `expected ${length} numbers, found ${value.length}`);
  value.forEach((x, i) => count(x, `${field}[${i}]`, below));
  return value;
}

// The checked record of `value` (parsed JSON): {game, misere, graph, nodes, cursor, play}.
export function readRecord(value) {
  if (!value || value.format !== FORMAT) fail("format", `expected "${FORMAT}"`);
  if (value.version !== 1) fail("version", "expected 1");
  const game = value.game;
  if (game !== "chess" && game !== "addsub") fail("game", 'expected "chess" or "addsub"');
  const misere = value.misere ?? false;
  if (typeof misere !== "boolean") fail("misere", "expected true or false");
  if (misere && game !== "chess") fail("misere", "misère play is for chess (token sliding) only");
  const g = value.graph || fail("graph", "missing");
  const outDegrees = counts(g.outDegrees, "graph.outDegrees");
  const n = outDegrees.length;
  if (n === 0 || n > MAX_VERTICES) fail("graph.outDegrees", `expected 1 to ${MAX_VERTICES} vertices, found ${n}`);
  const targets = counts(g.targets, "graph.targets", n, outDegrees.reduce((a, d) => a + d, 0));
  const graph = { outDegrees, targets };
  if (game === "addsub") graph.splitCounts = counts(g.splitCounts, "graph.splitCounts", 2 ** 32, n);
  if (!Array.isArray(value.nodes) || value.nodes.length === 0 || value.nodes.length > MAX_NODES) {
    fail("nodes", `expected a list of 1 to ${MAX_NODES} positions`);
  }
  const nodes = value.nodes.map((node, i) => {
    const field = `nodes[${i}]`;
    if (!node || typeof node !== "object") fail(field, "expected an object");
    const parent = i === 0 ? (node.parent === -1 ? -1 : fail(`${field}.parent`, "expected -1 (the start)"))
      : count(node.parent, `${field}.parent`, i);
    const position = game === "chess" ? counts(node.position, `${field}.position`, n)
      : counts(node.position, `${field}.position`, undefined, n);
    if (![null, "you", "server"].includes(node.by ?? null)) fail(`${field}.by`, 'expected null, "you" or "server"');
    const checked = { parent, position, by: node.by ?? null, label: String(node.label ?? "").slice(0, MAX_LABEL),
      active: node.active === undefined ? 0 : count(node.active, `${field}.active`) };
    if (node.from !== undefined) {
      checked.from = count(node.from, `${field}.from`, n);
      checked.to = counts(node.to, `${field}.to`, n);
    }
    if (node.pairTarget !== undefined) checked.pairTarget = count(node.pairTarget, `${field}.pairTarget`, n);
    return checked;
  });
  const cursor = count(value.cursor, "cursor", nodes.length);
  let play = null;
  if (value.play) {
    if (typeof value.play.humanFirst !== "boolean") fail("play.humanFirst", "expected true or false");
    play = { humanFirst: value.play.humanFirst, startNode: count(value.play.startNode, "play.startNode", nodes.length) };
  }
  return { game, misere, graph, nodes, cursor, play };
}

async function piped(bytes, stream) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

// The page address's fragment for `record`.
export async function hashOf(record) {
  const bytes = await piped(new TextEncoder().encode(JSON.stringify(record)), new CompressionStream("deflate-raw"));
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return PREFIX + btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// The record in a page address's fragment, checked; null when it holds none.
export async function recordInHash(hash) {
  if (!hash.startsWith(PREFIX)) return null;
  let json;
  try {
    const text = atob(hash.slice(PREFIX.length).replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
    json = new TextDecoder().decode(await piped(bytes, new DecompressionStream("deflate-raw")));
  } catch {
    throw new Error("the link's game cannot be read (cut short?): copy the whole link");
  }
  return readRecord(JSON.parse(json));
}

// The record in a saved file's text, checked.
export function recordInFile(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`saved game: not JSON (${String(error.message).slice(0, 100)})`);
  }
  return readRecord(value);
}

// Offers `record` as a file to save.
export function download(record) {
  const blob = new Blob([JSON.stringify(record, null, 1) + "\n"], { type: "application/json" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = "grundy-game.json";
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 0);
}
