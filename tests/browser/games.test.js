// Games kept and explored, on a plain grundy-server --web of its own:
//  - the page's address holds the game: a link opened in a new page shows the same
//    position and history, and the back button steps back;
//  - a game saved as a file opens again in a fresh page, variations and all;
//  - a move after Undo starts a variation beside the old line, which stays: ↑ and ↓ switch
//    between them, ← and → step along the line;
//  - a game played misère reopens misère, from its link and from its file; a saved game
//    without the convention (as the first files were written) opens as normal play.
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

// Plays `label` and returns the page's address once it holds the game after the move (the
// page writes it when the move is shown, compressing the game first).
async function playAndLink(page, label) {
  const before = page.url();
  await play(page, label);
  await page.waitForFunction((b) => location.href !== b, before, { timeout: WAIT_MS });
  return page.url();
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
  const link = await playAndLink(page, "token 1 → 0");
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

// Misère play kept: on 0 -> 1 (one move, then none) a token on 0 loses normally and wins
// misère; the link and the file say which, and an older file without the field is normal.
async function misereKept(browser, page) {
  assert.equal(await loadText(page, "2\n1 1\n0\n1 0\n0\n"), "");
  await page.check("#misere");
  assert.equal(await idle(page), "", "switching to misère play");
  await positionIs(page, "0");
  const verdict = (p) => p.getAttribute("#verdict", "data-outcome");
  assert.equal(await verdict(page), "LOSE", "misère: moving to 1 leaves the other player stuck, a win for them");
  const other = await openPage(browser, await playAndLink(page, "token 0 → 1"));
  await positionIs(other, "1");
  assert.equal(await other.isChecked("#misere"), true, "the link reopens under misère play");
  assert.equal(await verdict(other), "WIN");
  await other.close();
  const [download] = await Promise.all([page.waitForEvent("download", { timeout: WAIT_MS }), page.click("#save-game")]);
  const file = path.join(env.SHOTS, "saved-misere-game.json");
  await download.saveAs(file);
  const saved = JSON.parse(fs.readFileSync(file, "utf8"));
  assert.equal(saved.misere, true);
  const fresh = await openPage(browser, page.url().replace(/#.*/, ""));
  await fresh.setInputFiles("#open-game", file);
  await positionIs(fresh, "1");
  assert.equal(await fresh.isChecked("#misere"), true, "the file reopens under misère play");
  assert.equal(await verdict(fresh), "WIN");
  const { misere, ...older } = saved;
  void misere;
  fs.writeFileSync(file, JSON.stringify(older));
  await fresh.setInputFiles("#open-game", file);
  await fresh.waitForFunction(() => !document.querySelector("#misere").checked && !document.body.dataset.busy,
    null, { timeout: WAIT_MS });
  assert.equal(await idle(fresh), "");
  await positionIs(fresh, "1");
  assert.equal(await verdict(fresh), "LOSE", "a record without the convention is normal play");
  await fresh.close();
}

run("games", async (browser) => {
  const server = await plainServer();
  try {
    const page = await openPage(browser, server.url);
    await variations(page);
    await links(browser, page);
    await files(browser, page);
    await misereKept(browser, page);
    await page.close();
  } finally {
    server.stop();
  }
});
