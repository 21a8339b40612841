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
//  - on a cyclic graph, a drawn position played out ends in a draw.
// Screenshots go to $SCREENSHOT_DIR. Every wait is bounded.
"use strict";

const assert = require("node:assert/strict");
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { chromium } = require("playwright-core");

const URL = process.env.GRUNDY_URL;
const CLI = process.env.GRUNDY_CLI;
const TOKEN_FILE = process.env.GRUNDY_TOKEN_FILE;
const SAMPLE = process.env.GRUNDY_SAMPLE;
const CYCLIC = process.env.GRUNDY_CYCLIC;
const SHOTS = process.env.SCREENSHOT_DIR;
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const WAIT_MS = 20000;
const MAX_PLIES = 60;

for (const [name, value] of Object.entries({ URL, CLI, TOKEN_FILE, SAMPLE, CYCLIC, SHOTS })) {
  if (!value) throw new Error(`missing environment variable for ${name}`);
}

// The CLI's verdicts (one per query line) for a chess judge input.
function cliVerdicts(input) {
  const out = execFileSync(CLI, ["judge", "chess", "--server", URL.replace(/\/$/, ""),
    "--auth-token-file", TOKEN_FILE], { input, encoding: "utf8" });
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

async function idle(page) {
  await page.waitForFunction(() => !document.body.dataset.busy, null, { timeout: WAIT_MS });
  const error = await page.textContent("#input-error");
  return error.trim();
}

async function setPosition(page, tokens) {
  await page.fill("#position", tokens.join(" "));
  await page.click("#set-position");
  assert.equal(await idle(page), "", "setting a position");
}

async function drawnVertices(page) {
  return page.$$eval("#drawing g.vertex", (nodes) => nodes.map((n) => ({
    vertex: Number(n.dataset.vertex), value: n.dataset.value, outcome: n.dataset.outcome,
  })));
}

// Plays until the game is over: our moves pick a move coloured "win" when there is one,
// else one that keeps the draw, else any.
async function playOut(page, shot) {
  for (let ply = 0; ply < MAX_PLIES; ply++) {
    const result = await page.getAttribute("#game-status", "data-result");
    if (result) return result;
    const button = (await page.$("#moves li[data-outcome=win] button"))
      || (await page.$("#moves li[data-outcome=draw] button"))
      || (await page.$("#moves li[data-outcome] button"));
    assert.ok(button, "a game in progress lists a move");
    await button.click();
    assert.equal(await idle(page), "", "playing a move");
    if (ply === 0) await page.screenshot({ path: path.join(SHOTS, shot), fullPage: true });
  }
  throw new Error(`the game did not end within ${MAX_PLIES} moves`);
}

async function main() {
  fs.mkdirSync(SHOTS, { recursive: true });
  const sampleText = fs.readFileSync(SAMPLE, "utf8");
  const cases = parseCases(sampleText);
  const expectedLines = cliVerdicts(sampleText);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const external = [];
    page.on("request", (r) => { if (!r.url().startsWith(URL)) external.push(r.url()); });
    const pageErrors = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(URL, { timeout: WAIT_MS });
    assert.equal(await idle(page), "", "the page opens quietly");

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
    moves.forEach((move, i) => assert.equal(move.outcome, forMover[afterVerdicts[i]], move.label));
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
    assert.deepEqual(external, [], "the page fetched nothing from elsewhere");
    assert.deepEqual(pageErrors, [], "no script error on the page");
    console.log("browser test passed: values, colours, verdicts, moves and three games");
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
