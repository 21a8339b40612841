// Games kept and explored, on a plain grundy-server --web of its own:
//  - the page's address holds the game: a link opened in a new page shows the same
//    position and history, and the back button steps back;
//  - a game saved as a file opens again in a fresh page, variations and all;
//  - a move after Undo starts a variation beside the old line, which stays: ↑ and ↓ switch
//    between them, ← and → step along the line.
// Each saves a screenshot to target/browser-test/ (docs/images/playground-variations.png and
// playground-saved-game.png are two of them).
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const {
  env, WAIT_MS, axeViolations, clickMove, historyLength, idle, loadText, openPage, plainServer, run, shot,
} = require("./lib.js");

// 0 -> 1, 0 -> 2, 1 -> 0, 2 -> 3: from 0 two moves; 1 and 0 take turns.
const SMALL = "4\n2 1 2\n1 0\n1 3\n0\n1 0\n0\n";

async function positionIs(page, text) {
  await page.waitForFunction((t) => document.querySelector("#position-shown").textContent === t
    && !document.body.dataset.busy, text, { timeout: WAIT_MS });
}

async function play(page, label) {
  await clickMove(page, label);
  assert.equal(await idle(page), "");
}

// What the history shows: its lines' text and the current one.
async function historyShown(page) {
  return page.$eval("#history", (list) => ({
    lines: [...list.children].map((li) => li.textContent.replace(/\s+/g, " ").trim()),
    current: list.querySelector("[aria-current]").dataset.index,
  }));
}

// Bug: a move after Undo erased the moves after it.
async function variations(page) {
  assert.equal(await loadText(page, SMALL), "");
  await play(page, "token 0 → 1");
  await play(page, "token 1 → 0");
  await page.click("#undo");
  await page.click("#undo");
  await positionIs(page, "0");
  await play(page, "token 0 → 2");
  assert.deepEqual(await historyShown(page),
    { lines: ["start: 0", "token 0 → 2 or token 0 → 1"], current: "1" }, "the old line stays beside");
  await page.keyboard.press("ArrowUp");
  await positionIs(page, "1");
  assert.deepEqual(await historyShown(page),
    { lines: ["start: 0", "token 0 → 1 or token 0 → 2", "token 1 → 0"], current: "1" });
  await page.keyboard.press("ArrowRight");
  await positionIs(page, "0");
  await page.keyboard.press("ArrowLeft");
  await positionIs(page, "1");
  await page.keyboard.press("ArrowLeft");
  await positionIs(page, "0");
  assert.equal((await historyShown(page)).current, "0");
  await page.keyboard.press("ArrowRight");
  await positionIs(page, "1");
  await page.keyboard.press("ArrowDown");
  await positionIs(page, "2");
  await page.click("#history button.variation");
  await positionIs(page, "1");
  assert.deepEqual(await axeViolations(page), [], "axe-core with variations listed");
  await page.$eval("#analysis-panel", (panel) => panel.scrollIntoView());
  await shot(page, "games-variations.png");
  await page.locator("#analysis-panel").screenshot({ path: path.join(env.SHOTS, "games-variations-panel.png") });
}

// The address holds the game: a new page opens it; the back button steps back.
async function links(browser, page) {
  await play(page, "token 1 → 0");
  const link = page.url();
  assert.match(link, /#game=[\w-]+$/);
  const shown = await historyShown(page);
  const other = await openPage(browser, link);
  await positionIs(other, "0");
  assert.deepEqual(await historyShown(other), shown, "the link reopens the game, variations and all");
  await page.goBack();
  await positionIs(page, "1");
  assert.equal((await historyShown(page)).current, "1", "back: the position before the last move");
  await page.goForward();
  await positionIs(page, "0");
  await other.close();
}

// A game saved as a file opens again.
async function files(browser, page) {
  const [download] = await Promise.all([page.waitForEvent("download", { timeout: WAIT_MS }), page.click("#save-game")]);
  const file = path.join(env.SHOTS, "saved-game.json");
  await download.saveAs(file);
  const saved = JSON.parse(fs.readFileSync(file, "utf8"));
  assert.equal(saved.format, "grundy-game");
  assert.equal(saved.nodes.length, 4, "start, 0 → 1, 1 → 0 and the variation 0 → 2");
  const shown = await historyShown(page);
  const fresh = await openPage(browser, page.url().replace(/#.*/, ""));
  await fresh.setInputFiles("#open-game", file);
  await positionIs(fresh, "0");
  assert.deepEqual(await historyShown(fresh), shown, "the file reopens the game");
  assert.equal(await historyLength(fresh), 3);
  await shot(fresh, "games-file-opened.png");
  await fresh.locator("#input-panel").screenshot({ path: path.join(env.SHOTS, "games-file-opened-panel.png") });
  // A damaged file is refused with the field named, and changes nothing.
  fs.writeFileSync(file, JSON.stringify({ ...saved, nodes: [saved.nodes[0], { ...saved.nodes[1], parent: 5 }] }));
  await fresh.setInputFiles("#open-game", file);
  assert.match(await idle(fresh), /^saved game, nodes\[1\]\.parent: expected a whole number below 1, found 5/);
  assert.deepEqual(await historyShown(fresh), shown);
  await fresh.close();
}

run("games", async (browser) => {
  const server = await plainServer();
  try {
    const page = await openPage(browser, server.url);
    await variations(page);
    await links(browser, page);
    await files(browser, page);
    await page.close();
  } finally {
    server.stop();
  }
});
