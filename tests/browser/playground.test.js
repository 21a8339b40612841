// Real-browser test of the playground: Debian's Chromium, driven by playwright-core, against
// a real grundy-server --web with bearer-token auth (scripts/browser-test.sh starts it).
//
// Checks, on the POJ 2425 sample pasted into the page:
//  - without the token the page reports UNAUTHENTICATED; with it, it loads;
//  - every drawn value equals the Sprague-Grundy value computed here independently (mex over
//    the sample's acyclic graphs), and every vertex colour equals the CLI's verdict
//    (`grundy judge chess --server`) on a single token there;
//  - the verdict of every sample query equals the CLI's output line;
//  - every listed move is coloured by the CLI's verdict of the position it leads to;
//  - a game from a winning position, playing winning moves, ends with "you" winning, and one
//    where the server moves first ends with the server winning;
//  - misère play (the convention switch): misère values on the board, as the CLI's
//    `--misere` verdicts, moves listed by their misère outcome, and a game to its end won by
//    the player who cannot move;
//  - on a cyclic graph, a drawn position played out ends in a draw;
//  - the server steers: its fastest win when winning, its longest resistance when losing;
//  - regressions: a won position repeated is not a draw; failed requests (a wrong token)
//    change neither the position nor a game in progress; a failed Load leaves nothing stale
//    on screen; a plain --web server's page opens with the sample drawn and no failed request
//    or console error;
//  - the board at 1280x800 and 390x844 (no sideways scroll, a drawing of readable size):
//    undo/redo, the history, moves by clicking the board, hidden hints, zoom, a 50-vertex
//    graph drawn around the position, addsub wording and limits, and axe-core (pinned,
//    evaluated in the page) finds no serious or critical accessibility violation.
// Screenshots go to $SCREENSHOT_DIR. Every wait is bounded.
"use strict";

const assert = require("node:assert/strict");
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const {
  env, axeViolations, clickMove, idle, launch, loadText, moveLabels, plainServer, playOut, setPosition,
  showHints, tokensOutsideView,
} = require("./lib.js");

const { URL, CLI, TOKEN_FILE, SAMPLE, CYCLIC, SHOTS } = env;
const WAIT_MS = 20000;

// The CLI's verdicts (one per query line) for a chess judge input (`extra`: e.g. --misere).
function cliVerdicts(input, extra = []) {
  const out = execFileSync(CLI, ["judge", "chess", "--server", URL.replace(/\/$/, ""),
    "--auth-token-file", TOKEN_FILE, ...extra], { input, encoding: "utf8" });
  return out.trim().split("\n");
}

// The sample's test cases, parsed here (not by the page).
function parseCases(text) {
  const numbers = text.split(/\s+/).filter(Boolean).map(Number);
  let pos = 0;
  const cases = [];
  while (pos < numbers.length) {
    const n = numbers[pos++];
    const lists = [];
    for (let v = 0; v < n; v++) {
      const degree = numbers[pos++];
      lists.push(numbers.slice(pos, pos + degree));
      pos += degree;
    }
    const queries = [];
    for (let m = numbers[pos++]; m !== 0; m = numbers[pos++]) {
      queries.push(numbers.slice(pos, pos + m));
      pos += m;
    }
    cases.push({ lists, queries });
  }
  return cases;
}

// Grundy values of an acyclic graph: mex of the successors' values, sinks first.
function grundyValues(lists) {
  const values = new Array(lists.length).fill(undefined);
  for (let round = 0; round < lists.length; round++) {
    lists.forEach((successors, v) => {
      if (values[v] === undefined && successors.every((w) => values[w] !== undefined)) {
        const seen = new Set(successors.map((w) => values[w]));
        let mex = 0;
        while (seen.has(mex)) mex++;
        values[v] = mex;
      }
    });
  }
  return values;
}

function chessInput(lists, queries) {
  const lines = [String(lists.length), ...lists.map((l) => [l.length, ...l].join(" "))];
  for (const q of queries) lines.push([q.length, ...q].join(" "));
  lines.push("0");
  return lines.join("\n") + "\n";
}

async function drawnVertices(page) {
  return page.$$eval("#board g.vertex", (nodes) => nodes.map((n) => ({
    vertex: Number(n.dataset.vertex), value: n.dataset.value, outcome: n.dataset.outcome,
  })));
}

// Misère play (the convention switch): the player who cannot move wins. On the worked
// example of docs/games.md (0 -> 1, 1 -> {2, 3}, 2 -> 3) the board shows each vertex's misère
// outcome and remoteness, coloured as the CLI's `--misere` verdicts, the moves are listed by
// their misère outcome, and a game played to its end declares the player left without a
// move the winner.
async function misereGamePlayedOut(page) {
  const lists = [[1], [2, 3], [3], []];
  assert.equal(await loadText(page, chessInput(lists, [[0]])), "");
  await page.check("#misere");
  assert.equal(await idle(page), "", "switching to misère play");
  assert.equal(await page.getAttribute("#verdict", "data-outcome"), "LOSE");
  const drawn = (await drawnVertices(page)).sort((a, b) => a.vertex - b.vertex);
  assert.deepEqual(drawn.map((d) => d.value), ["L3", "W2", "L1", "W0"]);
  const single = cliVerdicts(chessInput(lists, lists.map((_, v) => [v])), ["--misere"]);
  assert.deepEqual(drawn.map((d) => d.outcome.toUpperCase()), single);
  // From 1, moving to 3 leaves the other player without a move: under misère play it loses.
  await setPosition(page, [1]);
  assert.deepEqual(await page.$$eval("#moves li[data-outcome]", (items) => items.map((li) => li.dataset.outcome)),
    ["win", "lose"]);
  assert.match(await moveLabels(page).then((labels) => labels[0]), /^token 1 → 2: wins in 2/);
  await page.screenshot({ path: path.join(SHOTS, "playground-misere.png"), fullPage: true });
  // The server must move 0 -> 1; we answer 1 -> 2; it must move 2 -> 3; we cannot move: we win.
  await setPosition(page, [0]);
  await page.click("#play-second");
  assert.equal(await idle(page), "");
  assert.equal(await playOut(page, "playground-misere-game.png"), "you");
  assert.match(await page.textContent("#game-status"), /You win \(misère play\): you have no move left/);
  // addsub has no misère answer: Load says so and changes nothing.
  await page.check("input[name=game][value=addsub]");
  await page.click("#load");
  assert.match(await idle(page), /misère play is for chess \(token sliding\) only/);
  assert.equal(await page.textContent("#position-shown"), "3");
  await page.check("input[name=game][value=chess]");
  await page.uncheck("#misere"); // loads the input again: the game is over
  assert.equal(await idle(page), "", "back to normal play");
  assert.equal(await page.getAttribute("#verdict", "data-outcome"), "LOSE"); // g(0) = 0
  assert.deepEqual((await drawnVertices(page)).sort((a, b) => a.vertex - b.vertex).map((d) => d.value),
    ["0", "2", "1", "0"]);
}

// Bug: a WIN position with a move whose reply returns to it (0 -> 1 -> 0, exit 0 -> 2) was
// declared a draw by repetition. Now the game goes on, and ends in a win.
async function wonPositionRepeated(page) {
  assert.equal(await loadText(page, "3\n2 1 2\n1 0\n0\n1 0\n0\n"), "");
  assert.equal(await page.getAttribute("#verdict", "data-outcome"), "WIN");
  await page.click("#play-first");
  assert.equal(await idle(page), "");
  await showHints(page);
  // 0 -> 1 wins too (1 only goes back to 0): the server's reply repeats the position.
  await clickMove(page, "token 0 → 1");
  assert.equal(await idle(page), "");
  assert.equal(await page.textContent("#position-shown"), "0");
  assert.equal(await page.getAttribute("#game-status", "data-result"), null, "a won position repeated is no draw");
  assert.match(await page.textContent("#game-status"), /Your move/);
  await clickMove(page, "token 0 → 2");
  assert.equal(await idle(page), "");
  assert.equal(await page.getAttribute("#game-status", "data-result"), "you");
  // The server, moving first from the won position, wins, by the fastest win: 0 -> 2.
  await page.click("#undo");
  assert.equal(await idle(page), "");
  await page.click("#history li:first-child button");
  assert.equal(await idle(page), "");
  await showHints(page);
  assert.equal(await page.getAttribute("#verdict", "data-remoteness"), "1", "0 wins in 1 (to the sink)");
  const [best] = await moveLabels(page);
  assert.match(best, /^token 0 → 2: wins in 1/, "the fastest win is listed first");
  await page.click("#play-second");
  assert.equal(await idle(page), "");
  assert.equal(await page.getAttribute("#game-status", "data-result"), "server");
  assert.match(await page.textContent("#history li:last-child"), /server: token 0 → 2/);
}

// Losing, the server resists as long as it can. From 0 it can move to 1 (lost in 2: 1 -> 2)
// or to 3 (lost in 4: 3 -> 4 -> 5 -> 6); 0 -> 1 comes first by vertex, 0 -> 3 lasts longer.
async function resistsLongest(page) {
  assert.equal(await loadText(page, "7\n2 1 3\n1 2\n0\n1 4\n1 5\n1 6\n0\n1 0\n0\n"), "");
  assert.equal(await page.getAttribute("#verdict", "data-outcome"), "LOSE");
  assert.equal(await page.getAttribute("#verdict", "data-remoteness"), "4", "0 loses in 4 with best play");
  assert.deepEqual(await moveLabels(page), ["token 0 → 3: loses in 4 for the mover",
    "token 0 → 1: loses in 2 for the mover"], "the longest resistance is listed first");
  await page.click("#play-second");
  assert.equal(await idle(page), "");
  assert.match(await page.textContent("#history li:last-child"), /server: token 0 → 3/, "the server resists longest");
  assert.equal(await page.textContent("#position-shown"), "3");
  assert.equal(await playOut(page, "regression-resists.png"), "you");
  assert.equal(await page.$$eval("#history li", (l) => l.length), 5, "start, 0 → 3, 3 → 4, 4 → 5, 5 → 6");
}

// Bugs: failed requests changed the position; a failed move wedged the game.
async function failedRequestsChangeNothing(page, goodToken) {
  assert.equal(await loadText(page, fs.readFileSync(SAMPLE, "utf8")), "");
  await setPosition(page, [0]);
  await page.check("input[name=click-mode][value=edit]");
  await page.fill("#auth-token", "wrong-token");
  for (let i = 0; i < 2; i++) {
    await page.click('#board g.vertex[data-vertex="1"]');
    assert.match(await idle(page), /UNAUTHENTICATED/);
    assert.equal(await page.textContent("#position-shown"), "0", "a failed click leaves the position");
  }
  await page.fill("#auth-token", goodToken);
  await page.click('#board g.vertex[data-vertex="3"]');
  assert.equal(await idle(page), "");
  assert.equal(await page.textContent("#position-shown"), "0 3");

  // Mid-game: a move that fails leaves the game where it was, and the next one plays.
  await setPosition(page, [0, 2]);
  await page.click("#play-first");
  assert.equal(await idle(page), "");
  await showHints(page);
  await page.fill("#auth-token", "wrong-token");
  const before = await page.textContent("#position-shown");
  const logged = await page.$$eval("#history li", (l) => l.length);
  await page.click("#moves li[data-outcome=win] button");
  assert.match(await idle(page), /UNAUTHENTICATED/);
  assert.equal(await page.textContent("#position-shown"), before);
  assert.match(await page.textContent("#game-status"), /Your move/);
  assert.equal(await page.$$eval("#history li", (l) => l.length), logged, "nothing logged by a failed move");
  await page.fill("#auth-token", goodToken);
  await page.click("#moves li[data-outcome=win] button");
  assert.equal(await idle(page), "");
  assert.notEqual(await page.textContent("#position-shown"), before);
  assert.equal(await page.$$eval("#history li", (l) => l.length), logged + 2, "the move and the reply are logged");
  assert.equal(await playOut(page, "regression-failed-move.png"), "you");
}

// Bug: a malformed Load left the old graph, moves and status; a finished game left an
// empty status box when a new graph was loaded.
async function nothingStale(page) {
  assert.equal(await page.getAttribute("#game-status", "data-result"), "you");
  assert.match(await loadText(page, fs.readFileSync(SAMPLE, "utf8")), /^$/);
  assert.equal(await page.isVisible("#game-status"), false, "no empty status box after a new load");
  await setPosition(page, [0, 2]);
  await page.click("#play-first");
  assert.equal(await idle(page), "");
  assert.match(await page.textContent("#game-status"), /Your move/);
  assert.match(await loadText(page, "4\n2 1 x\n"), /line 2, column 5/);
  assert.equal(await page.$$eval("#board g.vertex", (v) => v.length), 0, "no old drawing");
  assert.equal(await page.$$eval("#moves li", (v) => v.length), 0, "no old moves");
  assert.equal(await page.textContent("#verdict"), "");
  assert.equal(await page.isVisible("#game-status"), false);
  assert.equal(await page.$$eval("#history li", (v) => v.length), 0);
}

// The page at one viewport size on a plain server: opens with the sample drawn, no failed
// request or console error, no sideways scroll, readable, accessible; the board features.
async function boardAt(browser, url, width, height) {
  const tag = `${width}x${height}`;
  const page = await browser.newPage({ viewport: { width, height } });
  const failures = [];
  page.on("response", (r) => { if (r.status() >= 400) failures.push(`${r.status()} ${r.url()}`); });
  page.on("console", (m) => { if (m.type() === "error") failures.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => failures.push(`page error: ${e}`));
  await page.goto(url, { timeout: WAIT_MS });
  assert.equal(await idle(page), "", `${tag}: the page opens quietly`);
  // Bug: nothing was drawn until Load; /favicon.ico and /preload failed.
  assert.equal(await page.$$eval("#board g.vertex", (v) => v.length), 4, `${tag}: the sample is drawn on opening`);
  const layout = await page.evaluate(() => {
    const svg = document.querySelector("#board svg").getBoundingClientRect();
    const rect = document.querySelector("#board g.vertex rect").getBoundingClientRect();
    return { scrollWidth: document.documentElement.scrollWidth, svgWidth: svg.width, svgHeight: svg.height, vertex: rect.height };
  });
  assert.ok(layout.scrollWidth <= width, `${tag}: no sideways scroll (${layout.scrollWidth})`);
  assert.ok(layout.svgWidth > 200 && layout.svgHeight > 200, `${tag}: board size ${JSON.stringify(layout)}`);
  assert.ok(layout.vertex >= 24, `${tag}: vertices readable (${layout.vertex} px)`);
  await page.screenshot({ path: path.join(SHOTS, `board-${tag}-open.png`), fullPage: true });
  assert.deepEqual(await axeViolations(page), [], `${tag}: axe-core on opening`);

  // Click-to-move outside a game: pick the token on 0, then 2.
  await page.check("input[name=click-mode][value=move]");
  await page.click('#board g.vertex[data-vertex="0"]');
  assert.equal(await idle(page), "");
  assert.equal(await page.$$eval("#board g.vertex.selected", (v) => v.map((g) => g.dataset.vertex).join()), "0");
  await page.click('#board g.vertex[data-vertex="2"]');
  assert.equal(await idle(page), "");
  assert.equal(await page.textContent("#position-shown"), "2");
  assert.equal(await page.$$eval("#board path.edge.last", (e) => e.map((p) => `${p.dataset.from}>${p.dataset.to}`).join()), "0>2",
    "the last move is highlighted");
  // Undo and redo, then a jump through the history.
  await page.click("#undo");
  assert.equal(await idle(page), "");
  assert.equal(await page.textContent("#position-shown"), "0");
  await page.click("#redo");
  assert.equal(await idle(page), "");
  assert.equal(await page.textContent("#position-shown"), "2");
  await page.click("#history li:first-child button");
  assert.equal(await idle(page), "");
  assert.equal(await page.textContent("#position-shown"), "0");

  // A game with hints hidden, moved by keyboard on the board: focus stays on the board.
  await page.click("#play-first");
  assert.equal(await idle(page), "");
  assert.equal(await page.$$eval("#moves li", (l) => l.map((x) => x.dataset.outcome).join()), "hidden,hidden");
  assert.equal(await page.getAttribute("#verdict", "data-outcome"), null, "verdict hidden while playing");
  assert.equal(await page.$$eval("#board path.edge.move", (e) => e.length), 0, "no server's move shown");
  await page.focus('#board g.vertex[data-vertex="0"]');
  await page.keyboard.press("Enter");
  assert.equal(await idle(page), "");
  await page.focus('#board g.vertex[data-vertex="1"]');
  await page.keyboard.press("Enter");
  assert.equal(await idle(page), "");
  assert.equal(await page.getAttribute("#game-status", "data-result"), "you");
  assert.equal(await page.evaluate(() => document.activeElement.closest("#board") !== null), true,
    "focus stays on the board after a keyboard move");
  await page.screenshot({ path: path.join(SHOTS, `board-${tag}-won.png`), fullPage: true });
  assert.deepEqual(await axeViolations(page), [], `${tag}: axe-core after a game`);

  // Zoom.
  const scale = Number(await page.getAttribute("#board", "data-scale"));
  await page.click("#zoom-in");
  assert.ok(Number(await page.getAttribute("#board", "data-scale")) > scale, "zoom in");
  await page.click("#zoom-fit");

  // A 50-vertex graph: drawn around the position, vertices readable.
  const big = execFileSync(CLI, ["gen", "chess", "--n", "50", "--edges", "90", "--queries", "1", "--seed", "7"], { encoding: "utf8" });
  assert.equal(await loadText(page, big), "");
  const drawn = await page.$$eval("#board g.vertex", (v) => v.length);
  assert.ok(drawn > 0 && drawn < 50, `${tag}: a part of the graph is drawn (${drawn})`);
  assert.ok(await page.$$eval("#board g.vertex[data-partial]", (v) => v.length) > 0, "cut vertices marked");
  const vertex = await page.$eval("#board g.vertex rect", (r) => r.getBoundingClientRect().height);
  assert.ok(vertex >= 22, `${tag}: 50-vertex graph vertices readable (${vertex} px)`);
  await page.screenshot({ path: path.join(SHOTS, `board-${tag}-big.png`), fullPage: true });
  await page.check("#whole-graph");
  assert.equal(await idle(page), "");
  assert.equal(await page.$$eval("#board g.vertex", (v) => v.length), 50);
  // It opens on the tokens, zoomed out only as far as they need.
  assert.deepEqual(await tokensOutsideView(page), [], `${tag}: whole 50-vertex graph opens on its tokens`);
  await page.screenshot({ path: path.join(SHOTS, `board-${tag}-whole.png`), fullPage: true });
  await page.uncheck("#whole-graph");
  assert.equal(await idle(page), "");

  // Addsub: its own wording, the move list's limit said, big values explained, any query.
  // Vertex 0 -> 1..11 with K = 11: 2^10 moves from it.
  const zeros = " 0".repeat(10);
  const addsub = ["1", "12 11", ...Array.from({ length: 11 }, (_, i) => `0 ${i + 1}`),
    "11" + " 1".repeat(11), "2", `1 0${zeros}`, `1 1${zeros.slice(2)} 0`].join("\n") + "\n";
  assert.equal(await loadText(page, addsub, "addsub"), "");
  assert.match(await page.textContent("#position-label"), /Values/);
  assert.match(await page.textContent("#moves-omitted"), /more moves, not listed/);
  assert.equal(await page.$$eval("#query-select option", (o) => o.length), 2);
  await page.selectOption("#query-select", "1");
  assert.equal(await idle(page), "");
  assert.equal(await page.textContent("#position-shown"), `1 1${zeros.slice(2)} 0`);
  assert.match(await loadText(page, addsub.replace(`1 0${zeros}`, `1 0${zeros.slice(2)} 18446744073709551615`), "addsub"),
    /above 2\^53 − 1/);
  assert.deepEqual(await axeViolations(page), [], `${tag}: axe-core after an error`);
  assert.deepEqual(failures, [], `${tag}: no failed request or console error`);
  await page.close();
}

async function main() {
  fs.mkdirSync(SHOTS, { recursive: true });
  const sampleText = fs.readFileSync(SAMPLE, "utf8");
  const cases = parseCases(sampleText);
  const expectedLines = cliVerdicts(sampleText);
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const external = [];
    const fetched = new Set();
    page.on("request", (r) => {
      if (!r.url().startsWith(URL)) external.push(r.url());
      const { pathname } = new globalThis.URL(r.url());
      const kind = r.headers()["content-type"];
      fetched.add(pathname.startsWith("/grundy.v1.") ? `${pathname} ${kind}` : pathname);
    });
    const pageErrors = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(URL, { timeout: WAIT_MS });
    assert.equal(await idle(page), "", "the page opens quietly");
    await page.uncheck("#reply-pause"); // the server's replies at once (boardAt keeps the pause)

    // Paste the sample; without the token the server refuses.
    await page.fill("#judge-input", sampleText);
    await page.click("#load");
    assert.match(await idle(page), /UNAUTHENTICATED/);
    await page.fill("#auth-token", fs.readFileSync(TOKEN_FILE, "utf8").trim());
    await page.click("#load");
    assert.equal(await idle(page), "", "loading the sample");
    await page.screenshot({ path: path.join(SHOTS, "playground-loaded.png"), fullPage: true });

    let line = 0;
    for (const [index, testCase] of cases.entries()) {
      await page.selectOption("#case-select", String(index));
      assert.equal(await idle(page), "", `selecting test case ${index + 1}`);
      // Values: mex, computed here; colours: the CLI's single-token verdicts.
      const values = grundyValues(testCase.lists);
      const single = cliVerdicts(chessInput(testCase.lists, testCase.lists.map((_, v) => [v])));
      const drawn = await drawnVertices(page);
      assert.equal(drawn.length, testCase.lists.length);
      for (const { vertex, value, outcome } of drawn) {
        assert.equal(value, String(values[vertex]), `case ${index + 1}, value of vertex ${vertex}`);
        assert.equal(outcome.toUpperCase(), single[vertex], `case ${index + 1}, colour of vertex ${vertex}`);
      }
      // Verdicts of the sample's queries: the CLI's output lines.
      for (const query of testCase.queries) {
        await setPosition(page, query);
        const verdict = await page.getAttribute("#verdict", "data-outcome");
        assert.equal(verdict, expectedLines[line], `case ${index + 1}, query ${query.join(" ")}`);
        line += 1;
      }
    }
    assert.equal(line, expectedLines.length);

    // Moves from 0 2 on test case 1, each coloured by the verdict of where it leads.
    await page.selectOption("#case-select", "0");
    assert.equal(await idle(page), "");
    await setPosition(page, [0, 2]);
    const moves = await page.$$eval("#moves li[data-outcome]", (items) =>
      items.map((li) => ({ label: li.textContent, outcome: li.dataset.outcome })));
    const lists = cases[0].lists;
    const expectedMoves = [];
    [0, 2].forEach((v, i) => {
      for (const w of new Set(lists[v])) {
        const after = [0, 2];
        after[i] = w;
        expectedMoves.push(after);
      }
    });
    assert.equal(moves.length, expectedMoves.length, JSON.stringify(moves));
    const afterVerdicts = cliVerdicts(chessInput(lists, expectedMoves));
    const forMover = { LOSE: "win", WIN: "lose", DRAW: "draw" };
    // Listed best first: match each by its label, then check the order of the classes.
    const expectedByLabel = new Map();
    [0, 2].forEach((v, i) => {
      for (const w of new Set(lists[v])) {
        const k = expectedByLabel.size;
        expectedByLabel.set(`token ${v} → ${w}`, forMover[afterVerdicts[k]]);
      }
      void i;
    });
    for (const move of moves) {
      const label = move.label.split(":")[0];
      assert.equal(move.outcome, expectedByLabel.get(label), move.label);
    }
    const order = { win: 0, draw: 1, lose: 2 };
    for (let i = 1; i < moves.length; i++) {
      assert.ok(order[moves[i - 1].outcome] <= order[moves[i].outcome], "moves are listed best first");
    }
    await page.screenshot({ path: path.join(SHOTS, "playground-moves.png"), fullPage: true });

    // 0 2 is a WIN: playing winning moves we win; if the server moves first, it wins.
    await page.click("#play-first");
    assert.equal(await idle(page), "");
    assert.equal(await playOut(page, "playground-game.png"), "you");
    assert.match(await page.textContent("#game-status"), /You win/);
    await page.screenshot({ path: path.join(SHOTS, "playground-won.png"), fullPage: true });
    await setPosition(page, [0, 2]);
    await page.click("#play-second");
    assert.equal(await idle(page), "");
    assert.equal(await playOut(page, "playground-second.png"), "server");
    assert.match(await page.textContent("#game-status"), /server wins/);

    // A cyclic graph: a DRAW position ends in a draw by repetition.
    await page.fill("#judge-input", fs.readFileSync(CYCLIC, "utf8"));
    await page.click("#load");
    assert.equal(await idle(page), "", "loading the cyclic file");
    const cyclicCases = await page.$$eval("#case-select option", (o) => o.length);
    let drawFound = false;
    for (let index = cyclicCases - 1; index >= 0 && !drawFound; index--) {
      await page.selectOption("#case-select", String(index));
      assert.equal(await idle(page), "");
      const drawVertex = (await drawnVertices(page)).find((v) => v.outcome === "draw");
      if (!drawVertex) continue;
      drawFound = true;
      await setPosition(page, [drawVertex.vertex]);
      assert.equal(await page.getAttribute("#verdict", "data-outcome"), "DRAW");
      await page.screenshot({ path: path.join(SHOTS, "playground-cyclic.png"), fullPage: true });
      await page.click("#play-first");
      assert.equal(await idle(page), "");
      assert.equal(await playOut(page, "playground-cyclic-game.png"), "draw");
    }
    assert.ok(drawFound, "the cyclic file has a drawn vertex");
    await page.screenshot({ path: path.join(SHOTS, "playground-draw.png"), fullPage: true });
    const goodToken = fs.readFileSync(TOKEN_FILE, "utf8").trim();
    await wonPositionRepeated(page);
    await resistsLongest(page);
    await failedRequestsChangeNothing(page, goodToken);
    await nothingStale(page);
    await misereGamePlayedOut(page);
    assert.deepEqual(external, [], "the page fetched nothing from elsewhere");
    // The gRPC-Web client is the bundle built from proto/ (scripts/web-bundle.sh).
    for (const expected of ["/vendor/grundy-rpc.js",
      ...["PutGraph", "GetValues", "EvaluateBatch"].map((m) => `/grundy.v1.GrundyService/${m} application/grpc-web+proto`)]) {
      assert.ok(fetched.has(expected), `the page requested ${expected}: ${[...fetched].join(", ")}`);
    }
    assert.deepEqual(pageErrors, [], "no script error on the page");
    await page.close();

    const plain = await plainServer();
    try {
      await boardAt(browser, plain.url, 1280, 800);
      await boardAt(browser, plain.url, 390, 844);
    } finally {
      plain.stop();
    }
    console.log("browser test passed: values, colours, verdicts, moves, games, regressions, board at two sizes, axe-core");
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
