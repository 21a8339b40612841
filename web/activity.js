// One action at a time, with its progress shown: every action of the page (a move, a load,
// an undo, a setting) runs through `run`, which refuses a second one while the first runs,
// so no move is computed from a position that is about to change. While an action runs the
// page says so beside the board (a busy sign with the seconds elapsed, body[data-busy], its
// buttons taking no clicks) and offers Cancel; the action is abandoned when it takes longer
// than the time limit. An action gets an AbortSignal for its requests and commits nothing
// once aborted, so Cancel and the time limit leave the page exactly as it was. Its error, if
// any, is shown in the error line (#input-error) in plain words.

const $ = (id) => document.getElementById(id);

// The reasons an action stops before its answer (the signal's reason).
export class Cancelled extends Error {
  constructor() { super("cancelled: nothing changed"); }
}
export class TimedOut extends Error {
  constructor(seconds) {
    super(`no answer within ${seconds} s: the request was abandoned and nothing changed `
      + "(the server may be overloaded; try again, or a smaller position)");
  }
}

// `timeoutSeconds`: the time limit of one action (its requests together).
export function createActivity({ timeoutSeconds }) {
  let current = null; // the running action's AbortController

  function shown(busy) {
    $("activity").hidden = !busy;
    if (busy) document.body.dataset.busy = "1";
    else delete document.body.dataset.busy;
  }

  // Runs `step(signal)`; false when refused (another action runs) or failed.
  async function run(step) {
    if (current) return false;
    const controller = new AbortController();
    current = controller;
    const started = performance.now();
    const tick = () => {
      $("busy-text").textContent = `Working… ${Math.floor((performance.now() - started) / 1000)} s`;
    };
    tick();
    const ticker = setInterval(tick, 1000);
    const timer = setTimeout(() => controller.abort(new TimedOut(timeoutSeconds)), timeoutSeconds * 1000);
    $("input-error").textContent = "";
    shown(true);
    try {
      await step(controller.signal);
      return true;
    } catch (error) {
      const reason = controller.signal.aborted ? controller.signal.reason : error;
      $("input-error").textContent = String((reason && reason.message) || reason);
      return false;
    } finally {
      clearInterval(ticker);
      clearTimeout(timer);
      current = null;
      shown(false);
    }
  }

  function cancel() {
    if (current) current.abort(new Cancelled());
  }

  return { run, cancel, busy: () => current !== null };
}
