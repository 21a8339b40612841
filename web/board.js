// The board: the server's SVG shown in a fixed frame with zoom and pan (wheel, drag, pinch,
// the +/-/fit buttons and the keyboard), vertices reachable with Tab and played with Enter
// or Space, a vertex marked as the selected token. Pure presentation: what a vertex press
// means is the caller's (`onVertex`).
//
// Zoom and pan move the SVG's viewBox, whose aspect ratio follows the frame, so one SVG unit
// is `scale` pixels on both axes and a pointer position maps to a point with no letterboxing.
const MIN_READABLE = 0.92; // labels of 12 units at least 11 px: below this scale a fitted drawing opens zoomed in instead
const OPENING_MARGIN = 60; // room around the tokens opened on, in SVG units
const MAX_SCALE = 4;
const MAX_FIT = 1.5; // a small drawing is enlarged this much at most
const DRAG_PIXELS = 4; // a press that moves less than this is a click, not a pan

function create(frame, { onVertex }) {
  let svg = null;
  let natural = { width: 1, height: 1 };
  let view = { x: 0, y: 0, w: 1, h: 1 };
  const pointers = new Map(); // pointerId -> {x, y}
  let drag = null; // {x, y, moved}
  let pinch = null; // {distance}
  let swallowClick = false;

  function frameSize() {
    const rect = frame.getBoundingClientRect();
    return { width: Math.max(rect.width, 1), height: Math.max(rect.height, 1) };
  }
  function scale() { return frameSize().width / view.w; }
  function apply() {
    if (svg) svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
    frame.dataset.scale = scale().toFixed(3);
  }
  // A view of `s` pixels per unit centred on (cx, cy).
  function setView(s, cx, cy) {
    const { width, height } = frameSize();
    s = Math.min(Math.max(s, fitScale() / 2), MAX_SCALE);
    view = { w: width / s, h: height / s, x: 0, y: 0 };
    view.x = cx - view.w / 2;
    view.y = cy - view.h / 2;
    apply();
  }
  function fitScale() {
    const { width, height } = frameSize();
    return Math.min(width / natural.width, height / natural.height, MAX_FIT);
  }
  function fit() { setView(fitScale(), natural.width / 2, natural.height / 2); }
  function zoomAt(factor, px, py) {
    const s = scale();
    const ux = view.x + px / s, uy = view.y + py / s;
    const next = Math.min(Math.max(s * factor, fitScale() / 2), MAX_SCALE);
    setView(next, ux - px / next + frameSize().width / next / 2, uy - py / next + frameSize().height / next / 2);
  }
  function zoom(factor) {
    const { width, height } = frameSize();
    zoomAt(factor, width / 2, height / 2);
  }
  function centreOf(group) {
    const rect = group.querySelector("rect");
    if (!rect) return null;
    return {
      x: Number(rect.getAttribute("x")) + Number(rect.getAttribute("width")) / 2,
      y: Number(rect.getAttribute("y")) + Number(rect.getAttribute("height")) / 2,
    };
  }
  // Opening view: the whole drawing when it is readable so; otherwise all the tokens
  // (`focus`), at a readable scale if they fit in it, else zoomed out as far as they need
  // (the player zooms in from there); without tokens, the top of the drawing.
  function opening(focus) {
    const s = fitScale();
    if (s >= MIN_READABLE) { fit(); return; }
    const points = focus.map((v) => vertex(v)).filter(Boolean).map(centreOf).filter(Boolean);
    if (points.length === 0) {
      setView(MIN_READABLE, natural.width / 2, frameSize().height / MIN_READABLE / 2);
      return;
    }
    const xs = points.map((p) => p.x), ys = points.map((p) => p.y);
    const box = { x0: Math.min(...xs) - OPENING_MARGIN, x1: Math.max(...xs) + OPENING_MARGIN,
      y0: Math.min(...ys) - OPENING_MARGIN, y1: Math.max(...ys) + OPENING_MARGIN };
    const { width, height } = frameSize();
    const fits = Math.min(width / (box.x1 - box.x0), height / (box.y1 - box.y0), MIN_READABLE);
    setView(Math.max(fits, s), (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2);
  }
  function vertex(id) { return svg && svg.querySelector(`g.vertex[data-vertex="${id}"]`); }

  // Shows `text` (our server's SVG: every label in it is escaped by the renderer).
  // keepView keeps the zoom and pan (same graph, same layout); focus: vertices to open on;
  // without hints the vertices' values and outcome colours are hidden, to the eye and in
  // their accessible names.
  function show(text, { keepView = false, focus = [], hints = true } = {}) {
    const hadFocus = document.activeElement && document.activeElement.closest
      && document.activeElement.closest("g.vertex");
    const focusedVertex = hadFocus ? hadFocus.dataset.vertex : null;
    frame.innerHTML = text;
    svg = frame.querySelector("svg");
    if (!svg) return;
    natural = { width: Number(svg.getAttribute("width")) || 1, height: Number(svg.getAttribute("height")) || 1 };
    svg.setAttribute("width", "100%");
    svg.setAttribute("height", "100%");
    svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
    svg.setAttribute("focusable", "false");
    // The drawing holds buttons, so it is a group, not an image.
    svg.setAttribute("role", "group");
    svg.setAttribute("aria-label", "Board: the game graph");
    frame.classList.toggle("hints-hidden", !hints);
    for (const group of svg.querySelectorAll("g.vertex")) {
      const title = group.querySelector("title");
      const tokens = Number(group.dataset.tokens || 0);
      // The name starts with the text drawn on the vertex (what a speech user says).
      const shownText = hints ? "text" : "text:not(.value)";
      const drawn = [...group.querySelectorAll(shownText)].map((t) => t.textContent).join(" ");
      const said = hints && title ? title.textContent : `vertex ${group.dataset.vertex}`;
      if (title && !hints) title.textContent = said;
      group.setAttribute("tabindex", "0");
      group.setAttribute("role", "button");
      group.setAttribute("aria-label", `${drawn}: ${said}` + (tokens > 0 ? `; ${tokens} on it` : ""));
    }
    if (keepView) apply(); else opening(focus);
    if (focusedVertex !== null) {
      const again = vertex(focusedVertex);
      if (again) again.focus({ preventScroll: true });
    }
  }

  function clear(message) {
    svg = null;
    frame.replaceChildren();
    if (message) {
      const p = document.createElement("p");
      p.className = "hint board-message";
      p.textContent = message;
      frame.append(p);
    }
  }

  // Marks `id` as the selected vertex (the token about to move), or none.
  function mark(id) {
    if (!svg) return;
    for (const group of svg.querySelectorAll("g.vertex.selected")) group.classList.remove("selected");
    const group = id === null || id === undefined ? null : vertex(id);
    if (group) group.classList.add("selected");
  }

  // Keeps a vertex reached with Tab in view.
  frame.addEventListener("focusin", (e) => {
    const group = e.target.closest && e.target.closest("g.vertex");
    if (!group) return;
    const c = centreOf(group);
    if (c && (c.x < view.x || c.x > view.x + view.w || c.y < view.y || c.y > view.y + view.h)) {
      setView(scale(), c.x, c.y);
    }
  });
  frame.addEventListener("keydown", (e) => {
    const group = e.target.closest && e.target.closest("g.vertex");
    if (group && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      onVertex(Number(group.dataset.vertex), e.shiftKey);
      return;
    }
    if (e.key === "+" || e.key === "=") { zoom(1.25); e.preventDefault(); }
    else if (e.key === "-") { zoom(0.8); e.preventDefault(); }
    else if (e.key === "0") { fit(); e.preventDefault(); }
  });
  frame.addEventListener("click", (e) => {
    if (swallowClick) { swallowClick = false; e.stopPropagation(); return; }
    const group = e.target.closest && e.target.closest("g.vertex");
    if (group) onVertex(Number(group.dataset.vertex), e.shiftKey);
  });
  frame.addEventListener("wheel", (e) => {
    if (!svg) return;
    e.preventDefault();
    const rect = frame.getBoundingClientRect();
    zoomAt(Math.pow(1.0015, -e.deltaY), e.clientX - rect.left, e.clientY - rect.top);
  }, { passive: false });
  frame.addEventListener("pointerdown", (e) => {
    if (!svg) return;
    swallowClick = false;
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pointers.size === 1) drag = { x: e.clientX, y: e.clientY, moved: false };
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      pinch = { distance: Math.hypot(a.x - b.x, a.y - b.y) };
    }
  });
  frame.addEventListener("pointermove", (e) => {
    if (!pointers.has(e.pointerId)) return;
    const previous = pointers.get(e.pointerId);
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pointers.size === 2 && pinch) {
      const [a, b] = [...pointers.values()];
      const distance = Math.hypot(a.x - b.x, a.y - b.y);
      const rect = frame.getBoundingClientRect();
      zoomAt(distance / Math.max(pinch.distance, 1), (a.x + b.x) / 2 - rect.left, (a.y + b.y) / 2 - rect.top);
      pinch.distance = distance;
      if (drag) drag.moved = true;
      return;
    }
    if (!drag) return;
    if (!drag.moved && Math.hypot(e.clientX - drag.x, e.clientY - drag.y) < DRAG_PIXELS) return;
    if (!drag.moved) frame.setPointerCapture(e.pointerId);
    drag.moved = true;
    const s = scale();
    view.x -= (e.clientX - previous.x) / s;
    view.y -= (e.clientY - previous.y) / s;
    apply();
  });
  const release = (e) => {
    pointers.delete(e.pointerId);
    if (pointers.size < 2) pinch = null;
    if (pointers.size === 0 && drag) {
      swallowClick = drag.moved;
      drag = null;
    }
  };
  frame.addEventListener("pointerup", release);
  frame.addEventListener("pointercancel", release);
  window.addEventListener("resize", () => { if (svg) apply(); });

  return { show, clear, mark, zoom, fit, scale, element: () => svg, vertex };
}

export { create };
