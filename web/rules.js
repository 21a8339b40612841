// The two games as the page needs them, pure (no DOM, no requests): the graph's successor
// lists, positions as text and as keys, the moves of an Addition-Subtraction position, a
// server's move (or a move of its analysis) applied to a position, and the move list's order.

export const MAX_LISTED_MOVES = 256; // Addition-Subtraction moves grow as 2^out-degree

// Where each vertex's successors start in `graph.targets` (CSR form).
export function offsetsOf(graph) {
  const offsets = [0];
  for (const d of graph.outDegrees) offsets.push(offsets[offsets.length - 1] + d);
  return offsets;
}

export function successors(v, graph, offsets) {
  return graph.targets.slice(offsets[v], offsets[v] + graph.outDegrees[v]);
}

export function emptyPosition(game, graph) {
  return game === "chess" ? [] : new Array(graph.outDegrees.length).fill(0);
}

export function positionText(position) { return position.join(" "); }

// Equal for positions that are the same game: tokens in any order, values as they are.
export function positionKey(game, position) {
  return game === "chess" ? [...position].sort((a, b) => a - b).join(",") : position.join(",");
}

// The position as EvaluateBatch takes it.
export function positionMessage(game, position) {
  return game === "chess" ? { tokens: position } : { dense: position };
}

// Addition-Subtraction: the moves from v as sets of targets picked an odd number of times,
// |S| <= K and |S| = K mod 2, the other picks in pairs on the first target.
function splitMoveCount(targets, k) {
  let total = 0n, binomial = 1n;
  const t = BigInt(targets);
  for (let j = 0n; j <= t && j <= BigInt(k); j++) {
    if ((BigInt(k) - j) % 2n === 0n) total += binomial;
    binomial = binomial * (t - j) / (j + 1n);
  }
  return total;
}

// Every move of an Addition-Subtraction position (up to MAX_LISTED_MOVES), and how many
// were left out. (Token sliding lists the server's analysis instead: every move, best
// first; here the server names only one winning move per vertex.)
export function splitMoves(position, { graph, offsets }) {
  const moves = [];
  const n = graph.outDegrees.length;
  let total = 0n;
  for (let v = 0; v < n; v++) {
    const targets = [...new Set(successors(v, graph, offsets))];
    const k = graph.splitCounts[v];
    if (position[v] <= 0 || targets.length === 0) continue;
    total += splitMoveCount(targets.length, k);
    const bits = Math.min(targets.length, 20);
    for (let mask = 0; mask < 2 ** bits && moves.length < MAX_LISTED_MOVES; mask++) {
      const odd = targets.filter((_, i) => i < bits && (mask & (1 << i)));
      if (odd.length > k || (k - odd.length) % 2 !== 0) continue;
      const pairs = (k - odd.length) / 2;
      const next = [...position];
      next[v] -= 1;
      for (const w of odd) next[w] += 1;
      if (pairs > 0) next[targets[0]] += 2 * pairs;
      const label = `${v} → {${odd.join(" ")}}` + (pairs > 0 ? ` + ${pairs}×2 on ${targets[0]}` : "");
      const move = { label, from: v, to: odd, position: next };
      if (pairs > 0) move.pairTarget = targets[0];
      moves.push(move);
    }
  }
  return { moves, omitted: total - BigInt(moves.length) };
}

const FOR_MOVER = { WIN: "win", LOSE: "lose", DRAW: "draw" };

// A move of the server's analysis (an AnalysedMove of token sliding) as a listed move.
export function analysedMoveOf(analysed, position) {
  const { from, to, position: next } = serverMoveOf(analysed.move, position);
  const move = { label: `token ${from} → ${to[0]}`, from, to, position: next };
  move.outcome = FOR_MOVER[analysed.outcome] || "draw";
  if (analysed.remoteness !== undefined) move.remoteness = analysed.remoteness;
  return move;
}

// A server's move (a grundy.v1 Move) as the position it leads to and a highlight.
export function serverMoveOf(move, position) {
  const next = [...position];
  if (move.token) {
    const { tokenIndex, sourceVertex, targetVertex } = move.token;
    next[tokenIndex] = targetVertex;
    return { position: next, from: sourceVertex, to: [targetVertex] };
  }
  const split = move.split;
  next[split.vertex] -= 1;
  for (const w of split.oddTargets) next[w] += 1;
  if (split.pairCount > 0) next[split.pairTarget] += 2 * split.pairCount;
  const played = { position: next, from: split.vertex, to: split.oddTargets };
  if (split.pairCount > 0) played.pairTarget = split.pairTarget;
  return played;
}

// Every vertex a move adds to (a split's odd targets and the target of its pairs): the
// arrows that draw it.
export function moveTargets(move) {
  const targets = [...move.to];
  if (move.pairTarget !== undefined && !targets.includes(move.pairTarget)) targets.push(move.pairTarget);
  return targets;
}

const CLASS_ORDER = { win: 0, draw: 1, lose: 2 };

// Best first for the player making the move: wins (fastest first), draws, losses (longest
// resistance first). Without remoteness (the Addition-Subtraction game) the server's own
// move leads its class.
export function sortMoves(game, moves, suggestion) {
  const same = (m) => suggestion && positionKey(game, m.position) === positionKey(game, suggestion.position);
  const rank = (m) => {
    if (m.remoteness === undefined) return same(m) ? -1 : 0;
    return m.outcome === "lose" ? -m.remoteness : m.remoteness;
  };
  return moves
    .map((m, i) => ({ m, i }))
    .sort((a, b) => (CLASS_ORDER[a.m.outcome] - CLASS_ORDER[b.m.outcome])
      || (rank(a.m) - rank(b.m)) || (a.i - b.i))
    .map(({ m }) => m);
}
