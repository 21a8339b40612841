// What the browser tests share: the environment scripts/browser-test.sh sets, the browser,
// a plain `grundy-server --web` of their own, the page's idle state, and the steps a test
// takes on the page (load a text, set a position, play a move). Every wait is bounded and
// waits on the page's state (body[data-busy], selectors), never on a fixed sleep.
"use strict";

const assert = require("node:assert/strict");
const { execFileSync, spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { chromium } = require("playwright-core");

const env = {
  URL: process.env.GRUNDY_URL,
  CLI: process.env.GRUNDY_CLI,
  TOKEN_FILE: process.env.GRUNDY_TOKEN_FILE,
  SAMPLE: process.env.GRUNDY_SAMPLE,
  CYCLIC: process.env.GRUNDY_CYCLIC,
  SHOTS: process.env.SCREENSHOT_DIR,
};
for (const [name, value] of Object.entries(env)) {
  if (!value) throw new Error(`missing environment variable for ${name}`);
}
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const WAIT_MS = 20000;
const MAX_PLIES = 60;
const AXE = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const SERVER = path.join(path.dirname(env.CLI), "grundy-server");

function launch() {
  fs.mkdirSync(env.SHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

function shot(page, name) {
  return page.screenshot({ path: path.join(env.SHOTS, name), fullPage: true });
}

// A judge file written by `grundy gen chess`.
function generated(...args) {
  return execFileSync(env.CLI, ["gen", "chess", ...args], { encoding: "utf8" });
}

// A plain `grundy-server --web` (no token) on 127.0.0.1:0; resolves to {url, stop}.
function plainServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(SERVER, ["--listen", "127.0.0.1:0", "--web", "--log-format", "json"],
      { stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    const timer = setTimeout(() => reject(new Error(`plain server not ready: ${log}`)), WAIT_MS);
    child.stderr.on("data", (chunk) => {
      log += chunk;
      const match = /"address":"(127\.0\.0\.1:\d+)"/.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve({ url: `http://${match[1]}/`, stop: () => child.kill() });
      }
    });
    child.on("exit", (code) => reject(new Error(`plain server exited (${code}): ${log}`)));
  });
}

// Waits until no step runs; returns the error line.
async function idle(page) {
  await page.waitForFunction(() => !document.body.dataset.busy, null, { timeout: WAIT_MS });
  return (await page.textContent("#input-error")).trim();
}

// Opens `url` and waits for the sample to be drawn; the reply pause off unless asked.
async function openPage(browser, url, { width = 1280, height = 800, pause = false } = {}) {
  const page = await browser.newPage({ viewport: { width, height } });
  await page.goto(url, { timeout: WAIT_MS });
  await page.waitForSelector("#board g.vertex", { timeout: WAIT_MS });
  assert.equal(await idle(page), "", "the page opens quietly");
  if (!pause && await page.$("#reply-pause")) await page.uncheck("#reply-pause");
  return page;
}

async function setPosition(page, tokens) {
  await page.fill("#position", tokens.join(" "));
  await page.click("#set-position");
  assert.equal(await idle(page), "", "setting a position");
}

async function loadText(page, text, game = "chess") {
  await page.check(`input[name=game][value=${game}]`);
  await page.fill("#judge-input", text);
  await page.click("#load");
  return idle(page);
}

async function moveLabels(page) {
  return page.$$eval("#moves li[data-outcome] button", (b) => b.map((x) => x.textContent));
}

// The button of the listed move `label` (its text up to the colon).
async function moveButton(page, label) {
  for (const button of await page.$$("#moves li[data-outcome] button")) {
    const text = await button.textContent();
    if (text.startsWith(label + ":") || text === label) return button;
  }
  throw new Error(`no move ${label} in ${JSON.stringify(await moveLabels(page))}`);
}

async function clickMove(page, label) {
  await (await moveButton(page, label)).click();
}

// Hints are hidden while playing by default; the scripted player reads the outcomes.
async function showHints(page) {
  if (await page.isChecked("#hide-hints")) {
    await page.uncheck("#hide-hints");
    assert.equal(await idle(page), "");
  }
}

// Plays until the game is over: a move coloured "win" when there is one, else one that
// keeps the draw, else any. Returns #game-status[data-result].
async function playOut(page, shotName) {
  await showHints(page);
  for (let ply = 0; ply < MAX_PLIES; ply++) {
    const result = await page.getAttribute("#game-status", "data-result");
    if (result) return result;
    const button = (await page.$("#moves li[data-outcome=win] button"))
      || (await page.$("#moves li[data-outcome=draw] button"))
      || (await page.$("#moves li[data-outcome] button"));
    assert.ok(button, "a game in progress lists a move");
    await button.click();
    assert.equal(await idle(page), "", "playing a move");
    if (ply === 0 && shotName) await shot(page, shotName);
  }
  throw new Error(`the game did not end within ${MAX_PLIES} moves`);
}

const historyLength = (page) => page.$$eval("#history > li", (l) => l.length);
const lastMove = (page) => page.$$eval("#board path.edge.last",
  (e) => e.map((p) => `${p.dataset.from}>${p.dataset.to}`).sort().join());
const tokensDrawn = (page) => page.$$eval("#board g.vertex",
  (g) => g.filter((x) => Number(x.dataset.tokens) > 0).map((x) => `${x.dataset.vertex}:${x.dataset.tokens}`).join());

// The vertices with tokens that the board's frame does not show whole.
function tokensOutsideView(page) {
  return page.evaluate(() => {
    const frame = document.querySelector("#board").getBoundingClientRect();
    return [...document.querySelectorAll("#board g.vertex")].filter((g) => Number(g.dataset.tokens) > 0)
      .map((g) => ({ v: g.dataset.vertex, r: g.querySelector("rect").getBoundingClientRect() }))
      .filter(({ r }) => r.left < frame.left || r.right > frame.right || r.top < frame.top || r.bottom > frame.bottom)
      .map(({ v }) => v);
  });
}

// Holds the page's requests whose URL matches `pattern` until release(). `held` counts
// them; waitHeld(n) resolves once n are held. A request the page aborts meanwhile is
// dropped quietly.
async function hold(page, pattern) {
  let open;
  const gate = new Promise((resolve) => { open = resolve; });
  const waiters = [];
  const state = { held: 0 };
  const handler = async (route) => {
    state.held += 1;
    for (const w of waiters) if (state.held >= w.count) w.resolve();
    await gate;
    await route.continue().catch(() => {});
  };
  await page.route(pattern, handler);
  state.waitHeld = (count) => (state.held >= count ? Promise.resolve() : new Promise((resolve, reject) => {
    waiters.push({ count, resolve });
    setTimeout(() => reject(new Error(`only ${state.held} of ${count} requests held`)), WAIT_MS);
  }));
  state.release = async () => {
    open();
    await page.unroute(pattern, handler);
  };
  return state;
}

// Fails every request of the page to the API and the drawing route, as a stopped server
// would; returns the function that ends it.
async function cutOff(page) {
  const pattern = (url) => url.pathname.startsWith("/grundy.v1.") || url.pathname === "/render";
  const handler = (route) => route.abort("connectionrefused");
  await page.route(pattern, handler);
  return () => page.unroute(pattern, handler);
}

// axe-core, evaluated in the page (the page's CSP does not apply to the test's own code).
async function axeViolations(page) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() => axe.run(document, { resultTypes: ["violations"] }));
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`);
}

// Runs `body(browser)` with a browser, reporting the outcome as a test script's exit code.
function run(name, body) {
  (async () => {
    const browser = await launch();
    try {
      await body(browser);
    } finally {
      await browser.close();
    }
    console.log(`${name}: passed`);
  })().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

module.exports = {
  env, WAIT_MS, launch, shot, generated, plainServer, idle, openPage, setPosition, loadText,
  moveLabels, moveButton, clickMove, showHints, playOut, historyLength, lastMove, tokensDrawn, tokensOutsideView,
  hold, cutOff, axeViolations, run,
};
