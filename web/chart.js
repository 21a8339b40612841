// The value chart: the line shown, one point per position, at the outcome for the player who
// moved first (win up, draw in the middle, lose down), and each blunder marked: a move that
// turned its player's win into a draw or a loss, or a draw into a loss. Inline SVG, drawn
// from the session; a click on a point goes to that position (`onGoTo`). Hidden with the
// hints (it tells the verdicts).

const SVG = "http://www.w3.org/2000/svg";
const STEP = 22; // pixels per ply
const LEVEL = { WIN: 1, DRAW: 0, LOSE: -1 };
const FLIP = { WIN: "LOSE", LOSE: "WIN", DRAW: "DRAW" };
const COLOUR = { WIN: "#009E73", DRAW: "#56B4E9", LOSE: "#D55E00" };

function node(name, attributes, text) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

// Whether the move into history[i] was a blunder: what its mover had before, what it left.
export function blunderAt(history, i) {
  if (i === 0 || history[i].from === undefined) return null; // the start, or a position set
  const had = history[i - 1].view.verdict.outcome;
  const left = FLIP[history[i].view.verdict.outcome]; // the mover's outcome after the move
  return LEVEL[left] < LEVEL[had] ? { had, left } : null;
}

export function showChart(session, { hints, onGoTo }) {
  const figure = document.getElementById("chart");
  figure.replaceChildren();
  const line = session.history;
  if (line.length === 0) return;
  if (!hints) {
    figure.append(node("text", { x: 4, y: 16, class: "chart-note" }, "Value chart hidden with the hints."));
    figure.setAttribute("viewBox", "0 0 300 24");
    figure.setAttribute("height", "24");
    figure.setAttribute("aria-label", "Value chart hidden with the hints");
    return;
  }
  const width = 36 + Math.max(line.length - 1, 8) * STEP;
  const y = (outcome) => 40 - LEVEL[outcome] * 26;
  figure.setAttribute("viewBox", `0 0 ${width} 84`);
  figure.setAttribute("height", "84");
  for (const [label, outcome] of [["win", "WIN"], ["draw", "DRAW"], ["lose", "LOSE"]]) {
    figure.append(node("text", { x: 0, y: y(outcome) + 4, class: "chart-axis" }, label));
  }
  const x = (i) => 34 + i * STEP;
  const forFirst = line.map((entry, i) => (i % 2 === 0 ? entry.view.verdict.outcome : FLIP[entry.view.verdict.outcome]));
  figure.append(node("polyline", {
    points: forFirst.map((o, i) => `${x(i)},${y(o)}`).join(" "), fill: "none", stroke: "#555", "stroke-width": 1.5,
  }));
  forFirst.forEach((outcome, i) => {
    const blunder = blunderAt(line, i);
    const point = node("g", { class: "chart-point", "data-ply": i, "data-value": outcome });
    if (blunder) point.classList.add("blunder");
    const what = i === 0 ? "start" : `move ${i} (${line[i].label})`;
    point.append(node("title", {}, `${what}: ${outcome.toLowerCase()} for the first player`
      + (blunder ? `; a blunder: ${blunder.had.toLowerCase()} became ${blunder.left.toLowerCase()} for its player` : "")));
    point.append(node("circle", {
      cx: x(i), cy: y(outcome), r: i === session.cursor ? 7 : 5, fill: COLOUR[outcome], stroke: "#000",
      "stroke-width": i === session.cursor ? 2.5 : 1,
    }));
    if (blunder) point.append(node("text", { x: x(i), y: y(outcome) - 10, class: "chart-blunder" }, "?!"));
    point.addEventListener("click", () => onGoTo(i));
    figure.append(point);
  });
  const blunders = line.map((_, i) => i).filter((i) => blunderAt(line, i));
  figure.setAttribute("aria-label", `Value chart of ${line.length} positions: `
    + (blunders.length ? `blunders at moves ${blunders.join(", ")}` : "no blunder"));
}
