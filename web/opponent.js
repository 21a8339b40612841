// The server as an opponent: its move from a position whose moves are listed best first.
// A perfect player plays the first (its fastest win, a draw-keeping move, or the longest
// resistance); a player that errs plays, with the given chance, one of the moves that are
// worse than the best instead. Pure: the chance comes from `random` (Math.random).

export const STRENGTHS = {
  perfect: 0,
  errs: 0.25, // errs one move in four
  weak: 0.5, // errs one move in two
};

// Moves as good as the first: same outcome and, when known, the same remoteness.
function asGood(a, b) {
  return a.outcome === b.outcome && a.remoteness === b.remoteness;
}

// The move the opponent of `strength` plays from `view` (which has at least one move).
export function opponentMove(view, strength, random = Math.random) {
  const [best, ...rest] = view.moves;
  const chance = STRENGTHS[strength] || 0;
  const worse = rest.filter((m) => !asGood(m, best));
  if (worse.length === 0 || !(random() < chance)) return best;
  return worse[Math.min(worse.length - 1, Math.floor(random() * worse.length))];
}
