// What the page tells about moves, on a plain grundy-server --web of its own:
//  - the position's moves drawn on the board with hints: each edge of a listed move in the
//    class of the move's outcome, the best ones thick; none with hints hidden in a game;
//  - the value chart: one point per position of the line, for the first player, and a
//    blunder (a win thrown away) marked; a click on a point goes there; hidden with hints;
//  - the opponent: perfect, it resists longest; erring (its chance made certain here by
//    fixing Math.random), it plays a worse move; its reply comes after a pause, the move
//    shown first.
// Each saves a screenshot to target/browser-test/ (docs/images/playground-board-moves.png,
// playground-chart.png and playground-opponent.png are three of them).
"use strict";

const assert = require("node:assert/strict");
const path = require("node:path");
const {
  env, axeViolations, clickMove, idle, loadText, moveLabels, openPage, plainServer, run, setPosition, shot, showHints,
} = require("./lib.js");

const SAMPLE = "4\n2 1 2\n0\n1 3\n0\n1 0\n0\n"; // 0 -> 1, 0 -> 2, 2 -> 3
// From 0 the player to move loses: 0 -> 3 loses in 4 (the longest), 0 -> 1 in 2.
const RESIST = "7\n2 1 3\n1 2\n0\n1 4\n1 5\n1 6\n0\n1 0\n0\n";

// Bug (a wish): the board drew the graph, the moves only in the list.
async function movesOnBoard(page) {
  assert.equal(await loadText(page, SAMPLE), "");
  await setPosition(page, [0, 2]);
  const listed = await page.$$eval("#moves li[data-outcome]", (items) => items.map((li) => ({
    edge: /^token (\d+) → (\d+)/.exec(li.textContent).slice(1).join(">"), outcome: li.dataset.outcome,
  })));
  assert.ok(listed.length >= 2, JSON.stringify(listed));
  const drawn = await page.$$eval("#board path.edge", (paths) => Object.fromEntries(paths.map((p) =>
    [`${p.dataset.from}>${p.dataset.to}`, [...p.classList].filter((c) => c !== "edge").sort().join(" ")])));
  const [best] = listed;
  for (const { edge, outcome } of listed) {
    if (/\bmove\b/.test(drawn[edge])) continue; // the server's move keeps its blue
    assert.match(drawn[edge], new RegExp(`move-${outcome}`), `edge ${edge}: ${JSON.stringify(drawn)}`);
    if (outcome === best.outcome) assert.match(drawn[edge], /best/);
  }
  assert.ok(Object.values(drawn).some((c) => /move-lose/.test(c)), "a losing move drawn as such");
  await shot(page, "analysis-board-moves.png");
  await page.locator("#board").screenshot({ path: path.join(env.SHOTS, "analysis-board-moves-board.png") });
  await page.click("#play-first");
  assert.equal(await idle(page), "");
  assert.equal(await page.$$eval("#board path.edge[class*=move-]", (p) => p.length), 0, "none with hints hidden");
  await page.click("#stop-game");
  assert.equal(await idle(page), "");
}

// The value chart, a blunder marked: from 0 (a win), 0 -> 2 throws it away.
async function chart(page) {
  assert.equal(await loadText(page, SAMPLE), "");
  await clickMove(page, "token 0 → 2");
  assert.equal(await idle(page), "");
  await clickMove(page, "token 2 → 3");
  assert.equal(await idle(page), "");
  const points = await page.$$eval("#chart .chart-point", (g) => g.map((p) =>
    `${p.dataset.ply}:${p.dataset.value}${p.classList.contains("blunder") ? "?!" : ""}`));
  assert.deepEqual(points, ["0:WIN", "1:LOSE?!", "2:LOSE"], "the first player's win, thrown away at move 1");
  assert.match(await page.getAttribute("#chart", "aria-label"), /blunders at moves 1/);
  assert.deepEqual(await axeViolations(page), [], "axe-core with the chart and the moves on the board");
  await page.click('#chart .chart-point[data-ply="0"] circle');
  assert.equal(await idle(page), "");
  assert.equal(await page.textContent("#position-shown"), "0", "a click on a point goes there");
  await page.$eval("#chart", (c) => c.scrollIntoView());
  await shot(page, "analysis-chart.png");
  await page.locator("#chart").screenshot({ path: path.join(env.SHOTS, "analysis-chart-only.png") });
  await page.click("#play-first");
  assert.equal(await idle(page), "");
  assert.equal(await page.$$eval("#chart .chart-point", (g) => g.length), 0, "hidden with the hints");
  await page.click("#stop-game");
  assert.equal(await idle(page), "");
}

// The opponent's strength and its pause.
async function opponent(browser, url) {
  const page = await openPage(browser, url, { pause: true });
  // Math.random fixed at 0: an erring opponent errs every time, with the first worse move.
  await page.addInitScript(() => { Math.random = () => 0; });
  await page.reload();
  await page.waitForSelector("#board g.vertex");
  assert.equal(await idle(page), "");
  assert.equal(await loadText(page, RESIST), "");
  await page.click("#play-second");
  assert.equal(await idle(page), "");
  assert.match(await page.textContent("#game-status"), /^The server played token 0 → 3\./, "perfect: the longest resistance");
  await page.click("#stop-game");
  assert.equal(await idle(page), "");
  await page.click("#history li:first-child button");
  assert.equal(await idle(page), "");
  await page.selectOption("#strength", "errs");
  await page.click("#play-second");
  assert.equal(await idle(page), "");
  assert.match(await page.textContent("#game-status"), /^The server played token 0 → 1\./, "erring: a worse move");
  await shot(page, "analysis-opponent-errs.png");
  await page.setViewportSize({ width: 1000, height: 520 });
  await page.evaluate(() => { document.querySelector("#legend").open = false; window.scrollTo(0, 0); });
  await page.click("#zoom-fit");
  await page.locator("#drawing-panel").screenshot({ path: path.join(env.SHOTS, "analysis-opponent-errs-panel.png") });
  // The reply after a pause: the move is shown first, the server to move, then its reply.
  await page.selectOption("#strength", "perfect");
  assert.equal(await loadText(page, "3\n1 1\n1 2\n0\n1 0\n0\n"), "");
  await page.click("#play-first");
  assert.equal(await idle(page), "");
  await showHints(page);
  await page.evaluate(() => {
    window.statusSeen = [];
    new MutationObserver(() => window.statusSeen.push(document.querySelector("#game-status").textContent))
      .observe(document.querySelector("#game-status"), { childList: true, characterData: true, subtree: true });
  });
  await clickMove(page, "token 0 → 1");
  assert.equal(await idle(page), "");
  const seen = await page.evaluate(() => window.statusSeen.filter((t, i, all) => t && t !== all[i - 1]));
  assert.deepEqual(seen, ["The server is to move…", "The server played token 1 → 2. The server wins: you have no move left."]);
  await page.close();
}

run("analysis", async (browser) => {
  const server = await plainServer();
  try {
    const page = await openPage(browser, server.url);
    await movesOnBoard(page);
    await chart(page);
    await page.close();
    await opponent(browser, server.url);
  } finally {
    server.stop();
  }
});
