// Judge-format parsers for the playground (the formats of README.md, "Judge formats"):
// a pasted file becomes a list of test cases, each a graph in CSR form plus its positions.
// Errors name the line and column, like the CLI's.
// Splits text into numbers, remembering where each one is.
class Numbers {
  constructor(text) {
    this.items = [];
    const lines = text.split("\n");
    lines.forEach((line, i) => {
      const re = /\S+/g;
      let m;
      while ((m = re.exec(line)) !== null) {
        this.items.push({ text: m[0], line: i + 1, column: m.index + 1 });
      }
    });
    this.pos = 0;
  }
  atEnd() { return this.pos >= this.items.length; }
  next(what, max = Number.MAX_SAFE_INTEGER) {
    if (this.atEnd()) {
      const last = this.items[this.items.length - 1];
      throw new Error(`line ${last ? last.line : 1}: the input ends too early: expected ${what} after it`);
    }
    const item = this.items[this.pos++];
    if (/^\d+$/.test(item.text) && !Number.isSafeInteger(Number(item.text)) && max === Number.MAX_SAFE_INTEGER) {
      const excerpt = item.text.length > 24 ? item.text.slice(0, 24) + "…" : item.text;
      throw new Error(`line ${item.line}, column ${item.column}: ${what}: ${excerpt} is above 2^53 − 1, `
        + "the largest number the page holds exactly (a value's parity is all that matters: "
        + "write 0 or 1, or use the command-line judge, which takes values up to 2^64 − 1)");
    }
    if (!/^\d+$/.test(item.text) || Number(item.text) > max) {
      const excerpt = item.text.length > 20 ? item.text.slice(0, 20) + "…" : item.text;
      throw new Error(`line ${item.line}, column ${item.column}: expected ${what}, found "${excerpt}"`);
    }
    return Number(item.text);
  }
}

const MAX_VERTICES = 100000; // the page draws at most a few hundred; the server says why

// POJ 2425: test cases until end of input: N, N adjacency lines, queries until "0".
function parseChess(text) {
  const input = new Numbers(text);
  const cases = [];
  while (!input.atEnd()) {
    const n = input.next("the vertex count N", MAX_VERTICES);
    if (n === 0) throw new Error(`test case ${cases.length + 1}: a graph needs at least one vertex`);
    const outDegrees = [], targets = [];
    for (let v = 0; v < n; v++) {
      const degree = input.next(`the out-degree of vertex ${v}`, n * 16);
      outDegrees.push(degree);
      for (let i = 0; i < degree; i++) targets.push(input.next(`an out-neighbour of vertex ${v} (0..${n - 1})`, n - 1));
    }
    const positions = [];
    for (;;) {
      const m = input.next("the number of tokens M of a query, or 0");
      if (m === 0) break;
      const tokens = [];
      for (let i = 0; i < m; i++) tokens.push(input.next(`a token position (0..${n - 1})`, n - 1));
      positions.push(tokens);
    }
    cases.push({ game: "chess", outDegrees, targets, positions });
  }
  return cases;
}

// LA 4411: T, then T games: V E, E edges u v, V split counts, R, R rounds of V values.
function parseAddsub(text) {
  const input = new Numbers(text);
  const games = input.next("the number of games T");
  const cases = [];
  for (let g = 1; g <= games; g++) {
    const n = input.next(`game ${g}: the vertex count V`, MAX_VERTICES);
    if (n === 0) throw new Error(`game ${g}: a graph needs at least one vertex`);
    const edgeCount = input.next(`game ${g}: the edge count E`, n * 16);
    const lists = Array.from({ length: n }, () => []);
    for (let e = 0; e < edgeCount; e++) {
      const u = input.next(`an edge's tail (0..${n - 1})`, n - 1);
      const v = input.next(`an edge's head (0..${n - 1})`, n - 1);
      if (!lists[u].includes(v)) lists[u].push(v); // duplicate edges count once
    }
    const splitCounts = [];
    for (let v = 0; v < n; v++) splitCounts.push(input.next(`the split count K of vertex ${v}`, 2 ** 32 - 1));
    const rounds = input.next(`game ${g}: the number of rounds R`);
    const positions = [];
    for (let r = 0; r < rounds; r++) {
      const values = [];
      for (let v = 0; v < n; v++) values.push(input.next(`round ${r + 1}: the value of vertex ${v}`));
      positions.push(values);
    }
    cases.push({
      game: "addsub",
      outDegrees: lists.map((l) => l.length),
      targets: lists.flat(),
      splitCounts,
      positions,
    });
  }
  return cases;
}

// The graph of a case written back as a chess-format case (for the graph builder).
function chessText(graph, tokens) {
  const lines = [String(graph.outDegrees.length)];
  let offset = 0;
  graph.outDegrees.forEach((degree) => {
    lines.push([degree, ...graph.targets.slice(offset, offset + degree)].join(" "));
    offset += degree;
  });
  if (tokens && tokens.length) lines.push([tokens.length, ...tokens].join(" "));
  lines.push("0");
  return lines.join("\n") + "\n";
}

// The graph and one round written back in the addsub format.
function addsubText(graph, values) {
  const n = graph.outDegrees.length;
  const edges = [];
  let offset = 0;
  graph.outDegrees.forEach((degree, u) => {
    for (const v of graph.targets.slice(offset, offset + degree)) edges.push(`${u} ${v}`);
    offset += degree;
  });
  const round = values && values.length === n ? values : new Array(n).fill(0);
  return ["1", `${n} ${edges.length}`, ...edges, graph.splitCounts.join(" "), "1", round.join(" ")].join("\n") + "\n";
}

export { parseChess, parseAddsub, chessText, addsubText };
