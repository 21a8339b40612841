// The page's requests, one at a time and all or nothing, on a plain grundy-server --web of
// its own (started here, stopped at the end to check the page against a server gone):
//  - clicks during a request record nothing impossible: a double click on a move, or two
//    quick clicks on two moves, play one move (a held request stands in for latency);
//  - a failed request (the server unreachable) changes nothing but the error line: Undo,
//    Redo, "hide hints" and Load leave the panel, the board and the history as they were,
//    and the error says plainly that the server cannot be reached;
//  - a request in flight shows a busy sign with the time elapsed and can be cancelled, and
//    the page's time limit abandons it, both leaving the page as it was, also for a long
//    request (7 tokens on a 301-vertex graph);
//  - with the server stopped for real, the same.
"use strict";

const assert = require("node:assert/strict");
const {
  WAIT_MS, clickMove, cutOff, generated, historyLength, hold, idle, loadText, moveButton, openPage,
  plainServer, run, setPosition, shot, tokensDrawn,
} = require("./lib.js");

// 0 -> 1, 0 -> 2, 1 -> 0: from 0, both moves are listed; 1 has one token-less move back.
const SMALL = "3\n2 1 2\n1 0\n0\n1 0\n0\n";
const EVALUATE = "**/grundy.v1.GrundyService/EvaluateBatch";

// What the page shows of the position: the panel's text, the board's tokens, the history.
async function shown(page) {
  return {
    position: await page.textContent("#position-shown"),
    board: await tokensDrawn(page),
    history: await historyLength(page),
    current: await page.$eval("#history [aria-current]", (b) => b.dataset.index),
  };
}

// Bug: a double click on "token 0 → 1" recorded it twice, the second from a position with
// no token on 0; two quick clicks on two moves played both.
async function clicksDuringARequest(page) {
  for (const second of ["token 0 → 1", "token 0 → 2"]) {
    assert.equal(await loadText(page, SMALL), "");
    const evaluations = [];
    const count = (r) => { if (r.url().endsWith("/EvaluateBatch")) evaluations.push(r.url()); };
    page.on("request", count);
    const held = await hold(page, EVALUATE);
    const first = await (await moveButton(page, "token 0 → 1")).boundingBox();
    const other = await (await moveButton(page, second)).boundingBox();
    await page.mouse.click(first.x + 10, first.y + 5);
    await page.mouse.click(other.x + 10, other.y + 5);
    await held.waitHeld(1);
    await page.evaluate(() => 0); // the page has handled both clicks
    assert.equal(evaluations.length, 1, `one request for two clicks (${second})`);
    await held.release();
    assert.equal(await idle(page), "");
    page.off("request", count);
    assert.deepEqual(await shown(page), { position: "1", board: "1:1", history: 2, current: "1" },
      `one move played for two clicks (${second})`);
  }
}

// Bug: after a failed Undo (Redo, hide hints) the panel showed one position and the board
// another; a failed Load wiped the history.
async function failedRequestsChangeNothing(page) {
  assert.equal(await loadText(page, SMALL), "");
  await clickMove(page, "token 0 → 1");
  assert.equal(await idle(page), "");
  const played = await shown(page);
  let restore = await cutOff(page);
  await page.click("#undo");
  assert.match(await idle(page), /^cannot reach the server at http:\/\/127\.0\.0\.1:\d+: check that it is running/);
  assert.deepEqual(await shown(page), played, "a failed Undo changes nothing");
  await restore();
  await page.click("#undo");
  assert.equal(await idle(page), "");
  const undone = await shown(page);
  assert.equal(undone.position, "0");
  restore = await cutOff(page);
  await page.click("#redo");
  assert.match(await idle(page), /cannot reach the server/);
  assert.deepEqual(await shown(page), undone, "a failed Redo changes nothing");
  await restore();

  // In a game, hints hidden: a failed "hide hints" untick leaves them hidden, box ticked.
  await page.click("#play-first");
  assert.equal(await idle(page), "");
  restore = await cutOff(page);
  await page.click("#hide-hints"); // unticks it, and the step fails
  assert.match(await idle(page), /cannot reach the server/);
  assert.equal(await page.isChecked("#hide-hints"), true, "the box goes back");
  assert.equal(await page.getAttribute("#verdict", "data-outcome"), null, "the verdict stays hidden");
  assert.equal(await page.$eval("#board", (b) => b.classList.contains("hints-hidden")), true);
  await restore();
  await page.click("#stop-game");
  assert.equal(await idle(page), "");

  // A history of several moves survives a Load that cannot reach the server.
  for (let i = 0; i < 4; i++) {
    await clickMove(page, i % 2 === 0 ? "token 0 → 1" : "token 1 → 0");
    assert.equal(await idle(page), "");
  }
  const before = await shown(page);
  assert.ok(before.history >= 5, JSON.stringify(before));
  await page.fill("#judge-input", generated("--n", "20", "--queries", "1", "--seed", "3"));
  restore = await cutOff(page);
  await page.click("#load");
  assert.match(await idle(page), /cannot reach the server/);
  assert.deepEqual(await shown(page), before, "a failed Load changes nothing");
  await restore();
  await shot(page, "requests-failed-load.png");
}

// A request in flight: busy sign, elapsed time, Cancel; the time limit.
async function busyCancelTimeout(browser, url) {
  let page = await openPage(browser, url);
  assert.equal(await loadText(page, SMALL), "");
  const before = await shown(page);
  let held = await hold(page, EVALUATE);
  await clickMove(page, "token 0 → 2");
  await held.waitHeld(1);
  await page.waitForSelector("#activity", { state: "visible", timeout: WAIT_MS });
  assert.match(await page.textContent("#busy-text"), /^Working… \d+ s$/);
  assert.equal(await page.$eval("#moves button", (b) => getComputedStyle(b).pointerEvents), "none",
    "the moves take no clicks meanwhile");
  await shot(page, "requests-busy.png");
  await page.click("#cancel");
  assert.equal(await idle(page), "cancelled: nothing changed");
  assert.deepEqual(await shown(page), before, "a cancelled move changes nothing");
  assert.equal(await page.isVisible("#activity"), false);
  await held.release();

  // A long request: 7 tokens on a 301-vertex graph, cancelled; "whole graph" says why it
  // is off at 301 vertices.
  assert.equal(await loadText(page, generated("--n", "301", "--edges", "1200", "--shape", "cyclic",
    "--queries", "1", "--seed", "5")), "");
  assert.equal(await page.isDisabled("#whole-graph"), true);
  assert.match(await page.textContent("#whole-note"), /up to 300 vertices: this graph has 301/);
  const big = await shown(page);
  held = await hold(page, EVALUATE);
  await page.fill("#position", "1 2 3 4 5 6 7");
  await page.click("#set-position");
  await held.waitHeld(1);
  await page.keyboard.press("Escape"); // cancels too
  assert.equal(await idle(page), "cancelled: nothing changed");
  assert.deepEqual(await shown(page), big, "a cancelled long request changes nothing");
  await held.release();
  await page.close();

  // The time limit (?timeout=1, in seconds): the page gives up and changes nothing.
  page = await openPage(browser, `${url}?timeout=1`);
  assert.equal(await loadText(page, SMALL), "");
  held = await hold(page, EVALUATE);
  await clickMove(page, "token 0 → 2");
  await held.waitHeld(1);
  assert.match(await idle(page), /^no answer within 1 s: the request was abandoned and nothing changed/);
  assert.deepEqual(await shown(page), before, "a request over the time limit changes nothing");
  await held.release();
  await page.close();
}

run("requests", async (browser) => {
  const server = await plainServer();
  let stopped = false;
  try {
    const page = await openPage(browser, server.url);
    await clicksDuringARequest(page);
    await failedRequestsChangeNothing(page);
    await busyCancelTimeout(browser, server.url);

    // The server stopped for real: Undo fails plainly and changes nothing.
    await setPosition(page, [0]);
    await clickMove(page, "token 0 → 1");
    assert.equal(await idle(page), "");
    const before = await shown(page);
    server.stop();
    stopped = true;
    await page.click("#undo");
    assert.match(await idle(page), /^cannot reach the server at http:\/\/127\.0\.0\.1:\d+: check that it is running/);
    assert.deepEqual(await shown(page), before, "Undo with the server gone changes nothing");
    await shot(page, "requests-server-gone.png");
  } finally {
    if (!stopped) server.stop();
  }
});
