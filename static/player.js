// <grad-player>: plays a rendered trace step by step over the server-drawn graph.
//
// The page holds each view drawn once, at the last step (right without JavaScript); the player
// folds the steps up to the current one (static/fold.js, the same fold as
// app/render/playback.py) and repaints those same elements: classes, and the value and grad
// texts (each text the last step changed keeps its starting value in `data-start`). Nothing
// moves: zoom and pan only change the SVG's viewBox (static/viewport.js).
//
// Steps are 0-based here and in the data, 1-based wherever a person sees them (counter, URL,
// scrubber, step list). One `state`, one `setState(patch)` that renders.
//
// Pages around the player (static/lesson.js) drive it through a small API: `goto(step)`,
// `setLimit(step)` (a predict check: no step past it may show until the learner answers),
// `setPicker(fn)` (a node question: a node clicked or pressed is handed to `fn` instead of the
// inspector), `stepShowing(view, ids)`, `lastShown()` (the last step that may be shown),
// `showView(name)`, `play()` and `pause()`. It tells them of each step shown with a
// `grad-step` event, and of a step held back by the limit with `grad-blocked`.
//
// Options, read once at connect from data attributes a page writes on the element (the embed,
// app/routes/embed.py; a notebook). Pages that write none get the player as the site shows it.
//   data-start="N"     open at step N (1-based); a `#step=N` in the URL still wins
//   data-from, data-to a range of steps (1-based, both included) that nothing leaves: keys,
//                      buttons, scrubber, hash, goto and play are held inside it (with the
//                      limit); the counter still counts the whole trace ("Step 5 of 12"), as
//                      the URL, the embed's options and its messages do
//   data-autoplay      play from the start; data-loop: playing past the last step of the range
//                      wraps to its first
//   data-speed="2"     the starting speed (0.5, 1, 2 or 4: the speed menu's choices)
//   data-view          the view it opens on: "tensors" or "autograd"
//   data-controls      "full" (the default), "minimal" (back, play, next and the counter) or
//                      "none" (driven by its page, or by autoplay)
//   data-hash="off"    neither read nor write location.hash or history: a notebook, or an app
//                      framing the player, keeps its own URL
//   data-keys="focus"  keyboard shortcuts only while focus is inside this player, not on the
//                      whole document (several players on a page, a notebook)
//   data-output="id"   the page's section of the run's printed output ([data-stdout]) and how
//                      it ended ([data-ending]): shown no further than the last step that may
//                      be shown, as the step list is

import { firstShowing, foldView } from "./fold.js";
import { prepareHandout } from "./handout.js";
import { plain, withCode } from "./inline-code.js";
import { elementsOf, graphShift, paintElements, rectOf } from "./paint.js";
import * as vp from "./viewport.js";

const DOM = {
  data: "script[data-player-data]",
  controls: "[data-controls]",
  scrubber: "[data-scrubber]",
  speed: "[data-speed]",
  counter: "[data-counter]",
  phase: "[data-phase-label]",
  narration: "[data-narration]",
  views: "[data-views]",
  view: "figure[data-view]",
  viewToggle: "input[name=view]",
  empty: "[data-empty]",
  code: "[data-code]",
  line: "[data-line]",
  inspector: "[data-inspector]",
  pass: "select[data-pass]",
  compare: "input[data-compare]",
  comparePass: "select[data-compare-pass]",
  comparePanel: "[data-compare-panel]",
  compareCaption: "[data-compare-caption]",
  zoom: ".zoom",
};

const PHASES = ["forward", "backward", "freed", "error"];
const BASE_DELAY_MS = 1200; // one step at 1x speed
const PAN_MS = 250;
const ZOOM_STEP = 1.25;
const EMPTY_YET = "Nothing recorded yet: the graph grows as operations run.";
const CONTROL_LEVELS = ["full", "minimal", "none"];
const MINIMAL_CONTROLS = "[data-action=prev], [data-action=play], [data-action=next], [data-counter]";
const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

class GradPlayer extends HTMLElement {
  connectedCallback() {
    if (this.ready) return;
    const data = this.querySelector(DOM.data);
    if (!data) return;
    this.data = JSON.parse(data.textContent);
    this.steps = this.data.steps;
    if (!this.steps.length) return;
    this.ready = true;
    this.checkpoints = {};
    this.limit = null; // the last step that may be shown, or null
    this.picker = null;
    this.viewports = {};
    this.timer = null;
    this.options = this.readOptions();
    this.range = this.options.range; // [first, last] step indices that may be shown
    this.classList.add("live");
    this.drawings = this.collectDrawings();
    this.firstOfPass = new Map();
    this.lastOfPass = new Map();
    this.steps.forEach((s, i) => {
      if (!this.firstOfPass.has(s.generation)) this.firstOfPass.set(s.generation, i);
      this.lastOfPass.set(s.generation, i);
    });
    this.state = {
      step: 0,
      playing: false,
      speed: this.options.speed,
      view: this.drawings[this.options.view] ? this.options.view : "tensors",
      compare: null, // the pass shown beside, or null
      inspected: null, // the element id the inspector shows, or null
    };
    // before anything reads a style or a size: the closed step list and the views not shown
    // are then never styled or laid out (open and shown, a long trace's first read took them
    // all: a 20-pass loop's step list and hidden view were half its player's start)
    this.querySelector("details.all-steps")?.removeAttribute("open");
    for (const [name, drawing] of Object.entries(this.drawings)) drawing.figure.hidden = name !== this.state.view;
    this.bind();
    this.paintScrubber();
    this.querySelectorAll(DOM.controls).forEach((el) => {
      el.hidden = false;
    });
    this.paintControlLevel();
    const speed = this.querySelector(DOM.speed);
    if (speed) speed.value = String(this.state.speed);
    this.paintLimit();
    const backward = this.querySelector("[data-action=backward]");
    if (backward) backward.disabled = !this.steps.some((s) => s.phase === "backward");
    this.resizer = new ResizeObserver(() => this.onResize());
    this.resizer.observe(this.querySelector(DOM.views));
    const fromHash = this.options.hash ? this.stepFromHash() : null;
    this.setState({ step: fromHash ?? this.options.start ?? this.range[0], playing: this.options.autoplay });
    prepareHandout(this); // every step on paper, built when the page prints
  }

  disconnectedCallback() {
    clearTimeout(this.timer);
    cancelAnimationFrame(this.panning);
    this.resizer?.disconnect();
    window.removeEventListener("hashchange", this.onHash);
    this.keyTarget?.removeEventListener("keydown", this.onKeydown);
  }

  // What the page asked of this player (see the header); anything unreadable is left at its
  // default (the embed's server checks its options, a notebook writes its own).
  readOptions() {
    const data = this.dataset;
    const last = this.steps.length - 1;
    // a 1-based step number as an index into the steps, or null
    const index = (text) => {
      const n = Number.parseInt(text ?? "", 10);
      return Number.isNaN(n) ? null : Math.max(0, Math.min(last, n - 1));
    };
    const flag = (text) => text === "" || text === "true" || text === "1";
    const from = index(data.from) ?? 0;
    const speed = Number(data.speed);
    return {
      range: [from, Math.max(from, index(data.to) ?? last)],
      start: index(data.start),
      autoplay: flag(data.autoplay),
      loop: flag(data.loop),
      speed: speed > 0 ? speed : 1,
      view: data.view,
      controls: CONTROL_LEVELS.includes(data.controls) ? data.controls : "full",
      hash: data.hash !== "off",
      keysOnFocus: data.keys === "focus",
    };
  }

  // Each view's SVG and, per node and edge, its element and its relabelled texts with their
  // starting values; the SVG becomes a group of buttons (a role=img hides its children).
  collectDrawings() {
    const drawings = {};
    for (const figure of this.querySelectorAll(DOM.view)) {
      const svg = figure.querySelector("svg");
      if (!svg) continue;
      const name = figure.dataset.view;
      svg.setAttribute("role", "group");
      svg.removeAttribute("width");
      svg.removeAttribute("height");
      const fonts = [...svg.querySelectorAll("text[font-size]")].map((t) =>
        Number.parseFloat(t.getAttribute("font-size")),
      );
      const shift = graphShift(svg);
      drawings[name] = {
        figure,
        svg,
        shift,
        smallestFont: fonts.length ? Math.min(...fonts) : 0,
        elements: elementsOf(svg),
      };
      // a node's <title> is its accessible name (SVG-AAM), so no aria-label is needed
      for (const { el } of drawings[name].elements) {
        if (el.classList.contains("node")) el.setAttribute("role", "button");
      }
    }
    return drawings;
  }

  // ***** state *****

  setState(patch) {
    const previous = this.state;
    this.state = { ...previous, ...patch };
    const [first, end] = this.range;
    const last = this.lastShown();
    const wanted = this.state.step;
    this.state.step = Math.max(first, Math.min(last, wanted));
    const blocked = wanted > last;
    if (blocked) this.state.playing = false;
    this.render(previous);
    if (blocked) this.dispatchEvent(new CustomEvent("grad-blocked", { bubbles: true, detail: { step: wanted } }));
    clearTimeout(this.timer);
    if (this.state.playing) {
      // a looping player starts the range again after its last step (a limit still stops it)
      const wraps = this.options.loop && last === end;
      if (this.state.step >= last && !wraps) {
        this.setState({ playing: false });
        return;
      }
      const next = this.state.step >= last ? first : this.state.step + 1;
      // reduced motion drops animations, not the learner's chosen speed
      const delay = BASE_DELAY_MS / this.state.speed;
      this.timer = setTimeout(() => this.setState({ step: next }), delay);
    }
  }

  // The last step that may be shown: the range's, or the limit's if that comes first.
  lastShown() {
    const end = this.range[1];
    return Math.min(end, this.limit ?? end);
  }

  // ***** what pages around the player may ask of it (steps 0-based, as here) *****

  // the step shown, and the view it is shown in
  get step() {
    return this.state.step;
  }

  get view() {
    return this.state.view;
  }

  goto(step) {
    this.setState({ step, playing: false });
  }

  play() {
    if (!this.state.playing) this.togglePlay();
  }

  pause() {
    if (this.state.playing) this.setState({ playing: false });
  }

  setLimit(step) {
    this.limit = step;
    this.paintLimit();
    this.setState({});
  }

  // the first step that may be shown at which `view` shows `ids` (all, else any), or null
  stepShowing(view, ids) {
    return firstShowing(this.steps, view, ids, this.lastShown());
  }

  setPicker(fn) {
    this.picker = fn;
    this.classList.toggle("picking", Boolean(fn));
  }

  showView(view) {
    if (this.drawings[view]) this.setState({ view });
  }

  // `#step=12` is the 12th step (index 11)
  stepFromHash() {
    const match = /step=(\d+)/.exec(window.location.hash);
    return match ? Number(match[1]) - 1 : null;
  }

  pass(step = this.state.step) {
    return this.steps[step].generation || 1;
  }

  // ***** wiring *****

  bind() {
    const on = (selector, event, handler) =>
      this.querySelectorAll(selector).forEach((el) => el.addEventListener(event, handler));
    const go = (step) => this.setState({ step, playing: false });
    on("[data-action=first]", "click", () => go(this.range[0]));
    on("[data-action=prev]", "click", () => go(this.state.step - 1));
    on("[data-action=next]", "click", () => go(this.state.step + 1));
    on("[data-action=last]", "click", () => go(this.range[1]));
    on("[data-action=play]", "click", () => this.togglePlay());
    on("[data-action=backward]", "click", () => this.jumpToPhase("backward"));
    on("[data-action=prev-pass]", "click", () => this.goToPass(this.pass() - 1));
    on("[data-action=next-pass]", "click", () => this.goToPass(this.pass() + 1));
    on(DOM.pass, "change", (e) => this.goToPass(Number(e.target.value)));
    on(DOM.compare, "change", (e) => this.setState({ compare: e.target.checked ? this.defaultCompare() : null }));
    on(DOM.comparePass, "change", (e) => this.setState({ compare: Number(e.target.value) }));
    on(DOM.scrubber, "input", (e) => go(Number(e.target.value) - 1));
    on(DOM.speed, "change", (e) => this.setState({ speed: Number(e.target.value) }));
    on(DOM.viewToggle, "change", (e) => this.setState({ view: e.target.value }));
    on("[data-action=zoom-in]", "click", () => this.zoomBy(ZOOM_STEP));
    on("[data-action=zoom-out]", "click", () => this.zoomBy(1 / ZOOM_STEP));
    on("[data-action=fit]", "click", () => this.fit());
    // every visible node is a Tab stop: a big pass would be hundreds of presses to get past
    on("[data-action=skip-graph]", "click", () => this.skipGraph());
    this.onKeydown = (e) => this.onKey(e);
    this.keyTarget = this.options.keysOnFocus ? this : document;
    this.keyTarget.addEventListener("keydown", this.onKeydown);
    const views = this.querySelector(DOM.views);
    views.addEventListener("click", (e) => this.onGraphClick(e));
    views.addEventListener("keydown", (e) => this.onGraphKey(e));
    views.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    this.bindPointers(views);
    this.onHash = () => {
      const step = this.stepFromHash();
      if (step !== null && step !== this.state.step) this.setState({ step, playing: false });
    };
    if (this.options.hash) window.addEventListener("hashchange", this.onHash);
  }

  onKey(event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest?.("textarea, input, select, .cm-editor, [contenteditable]")) return;
    if (!this.isConnected || this.closest("[hidden]")) return;
    if (event.key === " " && event.target.closest?.("button, a, summary")) return; // theirs to press
    const go = (step) => this.setState({ step, playing: false });
    const keys = {
      ArrowLeft: () => go(this.state.step - 1),
      ArrowRight: () => go(this.state.step + 1),
      Home: () => go(this.range[0]),
      End: () => go(this.range[1]),
      " ": () => this.togglePlay(),
    };
    const action = keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  }

  // Inside the graph: Enter or Space on a node inspects it; + − 0 zoom and fit.
  onGraphKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const node = event.target.closest?.("g.node");
    if (node && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      this.pickOrInspect(node);
      return;
    }
    const zoom = { "+": ZOOM_STEP, "=": ZOOM_STEP, "-": 1 / ZOOM_STEP, _: 1 / ZOOM_STEP };
    if (zoom[event.key]) {
      event.preventDefault();
      this.zoomBy(zoom[event.key]);
    } else if (event.key === "0") {
      event.preventDefault();
      this.fit();
    }
  }

  onGraphClick(event) {
    if (this.dragged) return; // the end of a pan, not a click
    const node = event.target.closest("g.node[id]");
    if (!node || node.classList.contains("hidden")) return;
    this.pickOrInspect(node);
  }

  pickOrInspect(node) {
    if (this.picker) this.picker(node.id, this.state.view);
    else this.setState({ inspected: node.id });
  }

  togglePlay() {
    const [first, end] = this.range;
    const atEnd = this.state.step >= end;
    this.setState({ playing: !this.state.playing, step: atEnd ? first : this.state.step });
  }

  jumpToPhase(phase) {
    const found = this.steps.findIndex((s, i) => i > this.state.step && s.phase === phase);
    const index = found >= 0 ? found : this.steps.findIndex((s) => s.phase === phase);
    if (index >= 0) this.setState({ step: index, playing: false });
  }

  goToPass(g) {
    if (this.firstOfPass.has(g)) this.setState({ step: this.firstOfPass.get(g), playing: false });
  }

  defaultCompare() {
    const here = this.pass();
    return here > 1 ? here - 1 : Math.min(2, this.data.generations || 1);
  }

  // ***** painting *****

  render(previous) {
    const { step, playing, view } = this.state;
    const current = this.steps[step];
    for (const [name, drawing] of Object.entries(this.drawings)) {
      drawing.figure.hidden = name !== view;
      this.paintView(name, step, previous);
    }
    this.querySelectorAll(DOM.viewToggle).forEach((el) => {
      el.checked = el.value === view;
    });
    this.paintEmptyNote(view, step);
    this.paintCompare(); // first: comparing changes the live view's box, which framing reads
    this.paintFraming(previous);
    this.paintCode(current.span, current.phase);
    const narration = this.querySelector(DOM.narration);
    if (previous.step !== step || !narration.textContent) {
      narration.replaceChildren(...withCode(current.text));
    }
    const where = `Step ${step + 1} of ${this.steps.length}`;
    this.querySelector(DOM.counter).textContent = where;
    const phase = this.querySelector(DOM.phase);
    phase.textContent = current.phase;
    phase.dataset.phaseLabel = current.phase;
    const scrubber = this.querySelector(DOM.scrubber);
    scrubber.value = String(step + 1);
    scrubber.setAttribute("aria-valuetext", `${where}, ${current.phase}: ${clip(plain(current.text))}`);
    const play = this.querySelector("[data-action=play]");
    play.textContent = playing ? "Pause" : "Play";
    play.setAttribute("aria-pressed", String(playing));
    this.paintPasses();
    this.paintInspector();
    if (previous.step !== step) {
      if (this.options.hash) history.replaceState(null, "", `#step=${step + 1}`);
      this.dispatchEvent(new CustomEvent("grad-step", { bubbles: true, detail: { step } }));
    }
  }

  // Nothing past the last step that may be shown (a predict check's limit, a range's end) shows
  // anywhere: the steps in words are held back with the steps, and the page's printed output
  // and the run's ending with them, so that a check held at step N gives nothing after it away.
  paintLimit() {
    const items = this.querySelectorAll("details.all-steps li");
    const [first, last] = [this.range[0], this.lastShown()];
    items.forEach((item, index) => {
      item.hidden = index < first || index > last;
    });
    const output = this.dataset.output ? document.getElementById(this.dataset.output) : null;
    const stdout = output?.querySelector("[data-stdout]");
    if (stdout) {
      this.stdout ??= stdout.textContent;
      stdout.textContent = this.stdout.slice(0, this.data.printed?.[last] ?? this.stdout.length);
      stdout.hidden = !stdout.textContent; // no empty box: a line says nothing was printed
      const none = output.querySelector("[data-no-output]");
      if (none) {
        none.hidden = !stdout.hidden;
        none.textContent = this.stdout ? "Nothing printed yet." : "The snippet printed nothing.";
      }
    }
    const ending = output?.querySelector("[data-ending]");
    if (ending) ending.hidden = last < this.steps.length - 1;
  }

  // `data-controls`: "minimal" keeps back, play, next and the counter; "none" shows no controls
  paintControlLevel() {
    const level = this.options.controls;
    if (level === "none") {
      this.querySelectorAll(".controls, .zoom").forEach((el) => {
        el.hidden = true;
      });
    } else if (level === "minimal") {
      this.querySelectorAll(".controls > *, .controls .buttons > *").forEach((el) => {
        el.hidden = !(el.matches(MINIMAL_CONTROLS) || el.querySelector(MINIMAL_CONTROLS));
      });
    }
  }

  paintView(name, k, previous) {
    const drawing = this.drawings[name];
    const state = foldView(this.steps, name, k, this.checkpoints);
    drawing.state = state;
    const stepping = previous.step !== undefined && k - previous.step === 1 && drawing.painted;
    drawing.painted = true;
    paintElements(drawing.elements, state, this.steps[k].phase, { stepping, focusable: true });
  }

  paintEmptyNote(view, k) {
    const note = this.querySelector(DOM.empty);
    const drawing = this.drawings[view];
    const meta = this.data.views[view] || {};
    let text = "";
    if (!drawing || !meta.nodes) text = meta.notice || "No graph was recorded for this view.";
    else if (![...drawing.state.visible].length) text = EMPTY_YET;
    note.textContent = text;
    note.hidden = !text;
  }

  paintPasses() {
    const select = this.querySelector(DOM.pass);
    if (!select) return;
    const here = this.pass();
    select.value = String(here);
    this.querySelector("[data-action=prev-pass]").disabled = here <= 1;
    this.querySelector("[data-action=next-pass]").disabled = here >= this.data.generations;
    const compare = this.querySelector(DOM.compare);
    const comparePass = this.querySelector(DOM.comparePass);
    compare.checked = this.state.compare !== null;
    comparePass.disabled = this.state.compare === null;
    if (this.state.compare !== null) comparePass.value = String(this.state.compare);
  }

  // Past the graph's nodes: to the code, or, where the page hides the player's copy of it (the
  // live editor beside it marks the step instead), to the narration.
  skipGraph() {
    const code = this.querySelector(DOM.code);
    if (code?.checkVisibility()) return code.focus();
    const narration = this.querySelector(DOM.narration);
    narration.tabIndex = -1;
    narration.focus();
  }

  paintCode(span, phase) {
    const code = this.querySelector(DOM.code);
    if (!code) return;
    let marked = null;
    for (const line of code.querySelectorAll(DOM.line)) {
      const number = Number(line.dataset.line);
      const text = line.dataset.text ?? (line.dataset.text = line.textContent);
      const inside = span && number >= span[0] && number <= span[2];
      const was = line.classList.contains("current");
      line.classList.toggle("current", Boolean(inside));
      line.classList.toggle("failing", Boolean(inside) && phase === "error");
      if (!inside) {
        if (was) line.textContent = text;
        continue;
      }
      const start = number === span[0] ? span[1] : 0;
      const end = number === span[2] ? span[3] : text.length;
      const mark = document.createElement("mark");
      mark.textContent = text.slice(start, end);
      line.replaceChildren(text.slice(0, start), mark, text.slice(end));
      marked ??= mark;
    }
    if (marked) scrollInside(code, marked);
  }

  paintScrubber() {
    const scrubber = this.querySelector(DOM.scrubber);
    const [first, last] = this.range;
    scrubber.min = String(first + 1);
    scrubber.max = String(last + 1);
    // a gradient with one band per step, coloured by phase (CSS custom properties hold colours)
    const styles = getComputedStyle(this);
    const colour = (phase) => styles.getPropertyValue(`--phase-${phase}`).trim() || "#999";
    const shown = this.steps.slice(first, last + 1);
    const n = shown.length;
    const bands = shown.map((s, i) => {
      const c = colour(PHASES.includes(s.phase) ? s.phase : "forward");
      return `${c} ${(i / n) * 100}% ${((i + 1) / n) * 100}%`;
    });
    scrubber.style.setProperty("--track", `linear-gradient(to right, ${bands.join(", ")})`);
  }

  // ***** zoom, pan, and framing the pass and the focus *****

  box() {
    const views = this.querySelector(DOM.views);
    return { width: views.clientWidth || 1, height: views.clientHeight || 1 };
  }

  // The rect a view frames during pass g: the renderer's frame, or the whole drawing.
  frameOf(name, g) {
    const meta = this.data.views[name] || {};
    return (meta.frames || [])[g - 1] || [0, 0, meta.width || 1, meta.height || 1];
  }

  // A new view or a new pass opens at its initial zoom; every step then brings its focus into
  // view (smoothly, unless the learner asked for less motion).
  paintFraming(previous) {
    const name = this.state.view;
    const drawing = this.drawings[name];
    if (!drawing) return;
    const g = this.pass();
    const box = this.box();
    const comparing = this.state.compare !== null; // the live view gets half the stage, or all
    if (drawing.framedPass !== g || drawing.framedComparing !== comparing || !this.viewports[name]) {
      drawing.framedPass = g;
      drawing.framedComparing = comparing;
      this.viewports[name] = this.initialViewport(name, g, box);
      this.showViewport(name, this.viewports[name], false);
      return;
    }
    if (previous.step === this.state.step && previous.view === name) return;
    const focus = this.focusRect(name);
    if (!focus) return;
    const target = vp.revealing(this.viewports[name], box, focus);
    if (target !== this.viewports[name]) this.showViewport(name, target, !reducedMotion.matches);
  }

  // At a readable scale, the whole pass if it fits; where it does not, its own new graph first
  // (the parameters a loop reuses sit far apart), then the step's focus.
  initialViewport(name, g, box) {
    const drawing = this.drawings[name];
    const frame = this.frameOf(name, g);
    let scale = vp.initialScale(box, frame, drawing.smallestFont);
    const fits = (rect) => rect[2] * scale <= box.width && rect[3] * scale <= box.height;
    let rect;
    if (fits(frame)) {
      // room for the zoom buttons too, a little smaller if the labels stay readable so
      const roomy = this.roomyFitScale(box, frame);
      if (roomy < scale && roomy * drawing.smallestFont >= vp.MIN_LABEL_PX) scale = roomy;
      rect = fits(this.roomAbove(frame, scale)) ? this.roomAbove(frame, scale) : frame;
    } else {
      rect = this.roomAbove(this.ownRect(name, g) || frame, scale);
    }
    const framed = vp.framed(rect, box, scale);
    const focus = this.focusRect(name);
    return focus ? vp.revealing(framed, box, focus) : framed;
  }

  // The box around the nodes pass g itself reveals (not those it keeps from earlier passes).
  ownRect(name, g) {
    const drawing = this.drawings[name];
    drawing.ownRects ??= new Map();
    if (!drawing.ownRects.has(g)) {
      const byId = drawing.elements.byId;
      const rects = [];
      for (let i = this.firstOfPass.get(g) ?? 0; i <= (this.lastOfPass.get(g) ?? -1); i++) {
        for (const id of (this.steps[i][name] || {}).reveal || []) {
          const el = byId.get(id)?.el;
          if (el?.classList.contains("node")) rects.push(rectOf(el, drawing.shift));
        }
      }
      const box = vp.union(rects);
      drawing.ownRects.set(g, box && [box[0] - 8, box[1] - 8, box[2] + 16, box[3] + 16]);
    }
    return drawing.ownRects.get(g);
  }

  // The box around the graph pass g builds and lets go: the nodes it reveals that the next pass
  // hides again (the parameters and data it keeps are not its own graph).
  passGraphRect(name, g) {
    const next = this.firstOfPass.get(g + 1);
    if (next === undefined) return this.ownRect(name, g);
    const dropped = new Set((this.steps[next][name] || {}).hide || []);
    const byId = this.drawings[name].elements.byId;
    const rects = [];
    for (let i = this.firstOfPass.get(g) ?? 0; i <= (this.lastOfPass.get(g) ?? -1); i++) {
      for (const id of (this.steps[i][name] || {}).reveal || []) {
        const el = byId.get(id)?.el;
        if (dropped.has(id) && el?.classList.contains("node")) {
          rects.push(rectOf(el, this.drawings[name].shift));
        }
      }
    }
    const box = vp.union(rects);
    return box ? [box[0] - 8, box[1] - 8, box[2] + 16, box[3] + 16] : this.ownRect(name, g);
  }

  // The box around this step's focused nodes (edges only if no node is focused).
  focusRect(name) {
    const drawing = this.drawings[name];
    const ids = [...(drawing.state?.focus || [])];
    const byId = drawing.elements.byId;
    const nodes = ids.filter((id) => byId.get(id)?.el.classList.contains("node"));
    const rects = (nodes.length ? nodes : ids)
      .map((id) => byId.get(id)?.el)
      .filter(Boolean)
      .map((el) => rectOf(el, drawing.shift));
    return vp.union(rects);
  }

  showViewport(name, target, smoothly) {
    cancelAnimationFrame(this.panning);
    const drawing = this.drawings[name];
    const box = this.box();
    const from = this.viewports[name];
    this.viewports[name] = target;
    const apply = (viewport) => {
      drawing.svg.setAttribute("viewBox", vp.viewBoxOf(viewport, box).map(round).join(" "));
    };
    if (!smoothly || !from) {
      apply(target);
      return;
    }
    const started = performance.now();
    const tick = (now) => {
      const t = Math.min(1, (now - started) / PAN_MS);
      apply(vp.between(from, target, 1 - (1 - t) ** 3));
      if (t < 1) this.panning = requestAnimationFrame(tick);
    };
    this.panning = requestAnimationFrame(tick);
  }

  zoomBy(factor, px, py) {
    const name = this.state.view;
    const box = this.box();
    const at = [px ?? box.width / 2, py ?? box.height / 2];
    this.showViewport(name, vp.zoomedAt(this.viewports[name], factor, ...at), false);
  }

  // The whole pass, if its labels are readable so; else the graph the pass itself builds (a
  // training loop's pass runs from the data at the top of the drawing to the loss at its foot,
  // and fitting all of that gave 2 px labels).
  fit() {
    const name = this.state.view;
    const box = this.box();
    const g = this.pass();
    const frame = this.frameOf(name, g);
    const readable = vp.fitScale(box, frame) * this.drawings[name].smallestFont >= vp.MIN_LABEL_PX;
    const rect = readable ? frame : this.passGraphRect(name, g) || frame;
    const scale = this.roomyFitScale(box, rect);
    this.showViewport(name, vp.framed(this.roomAbove(rect, scale), box, scale), false);
  }

  // The zoom buttons sit over the drawing's top right corner (on a phone they covered the top
  // node): framing leaves the band they take free. Its height, in pixels from the pane's top:
  zoomBand() {
    const zoom = this.querySelector(DOM.zoom);
    return zoom && !zoom.hidden ? zoom.offsetTop + zoom.offsetHeight : 0;
  }

  // The rect with the zoom buttons' band above it, at `scale` pixels per drawing unit.
  roomAbove(rect, scale) {
    const px = this.zoomBand();
    return px ? [rect[0], rect[1] - px / scale, rect[2], rect[3] + px / scale] : rect;
  }

  // The scale that fits the rect and the band above it in the box.
  roomyFitScale(box, rect) {
    return vp.fitScale({ width: box.width, height: Math.max(1, box.height - this.zoomBand()) }, rect);
  }

  onResize() {
    const name = this.state.view;
    const viewport = this.viewports[name];
    if (viewport) this.showViewport(name, viewport, false);
  }

  onWheel(event) {
    event.preventDefault();
    const rect = this.querySelector(DOM.views).getBoundingClientRect();
    const factor = Math.exp(-event.deltaY * (event.deltaMode === 1 ? 0.05 : 0.002));
    this.zoomBy(factor, event.clientX - rect.left, event.clientY - rect.top);
  }

  // One pointer drags the drawing, two pinch it (touch-action: none on the drawing).
  bindPointers(views) {
    const pointers = new Map();
    let moved = 0;
    views.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      pointers.set(e.pointerId, [e.clientX, e.clientY]);
      if (pointers.size === 1) {
        moved = 0;
        this.dragged = false;
      }
    });
    views.addEventListener("pointermove", (e) => {
      const last = pointers.get(e.pointerId);
      if (!last) return;
      const name = this.state.view;
      const here = [e.clientX, e.clientY];
      if (pointers.size === 1) {
        const [dx, dy] = [here[0] - last[0], here[1] - last[1]];
        moved += Math.abs(dx) + Math.abs(dy);
        if (moved > 4) {
          if (!this.dragged) views.setPointerCapture(e.pointerId);
          this.dragged = true;
          this.showViewport(name, vp.pannedBy(this.viewports[name], dx, dy), false);
        }
      } else if (pointers.size === 2) {
        const other = [...pointers].find(([id]) => id !== e.pointerId)[1];
        const before = Math.hypot(last[0] - other[0], last[1] - other[1]);
        const after = Math.hypot(here[0] - other[0], here[1] - other[1]);
        const rect = views.getBoundingClientRect();
        const mid = [(here[0] + other[0]) / 2 - rect.left, (here[1] + other[1]) / 2 - rect.top];
        if (before > 0) this.zoomBy(after / before, ...mid);
        this.dragged = true;
      }
      pointers.set(e.pointerId, here);
    });
    const release = (e) => {
      pointers.delete(e.pointerId);
      // the click that ends a drag comes after pointerup: forget the drag after it
      if (!pointers.size) setTimeout(() => (this.dragged = false), 0);
    };
    views.addEventListener("pointerup", release);
    views.addEventListener("pointercancel", release);
  }

  // ***** two passes side by side *****

  // A read-only copy of the view at the last step of the chosen pass, its ids removed so the
  // page's stay unique; redrawn only when the view or the pass changes.
  paintCompare() {
    const panel = this.querySelector(DOM.comparePanel);
    if (!panel) return;
    const g = this.state.compare;
    const name = this.state.view;
    panel.hidden = g === null;
    this.classList.toggle("comparing", g !== null);
    if (g === null || panel.dataset.shows === `${name}:${g}`) return;
    panel.dataset.shows = `${name}:${g}`;
    const k = this.lastOfPass.get(g) ?? this.steps.length - 1;
    const copy = this.drawings[name].svg.cloneNode(true);
    const elements = elementsOf(copy);
    for (const el of copy.querySelectorAll("[id]")) el.removeAttribute("id");
    copy.setAttribute("role", "img");
    copy.setAttribute("aria-label", `The ${name} graph of pass ${g}, at its last step`);
    const rect = this.passGraphRect(name, g) || this.frameOf(name, g);
    const box = { width: panel.clientWidth || 1, height: panel.clientHeight || 1 };
    const scale = vp.initialScale(box, rect, this.drawings[name].smallestFont);
    copy.setAttribute("viewBox", vp.viewBoxOf(vp.framed(rect, box, scale), box).map(round).join(" "));
    const state = foldView(this.steps, name, k, this.checkpoints);
    paintElements(elements, { ...state, focus: new Set() }, this.steps[k].phase, {});
    panel.querySelector("svg")?.remove();
    panel.append(copy);
    const caption = panel.querySelector(DOM.compareCaption);
    caption.textContent = `Pass ${g} of ${this.data.generations}, at its last step (step ${k + 1})`;
  }

  // ***** the node inspector *****

  // The facts of the inspected element (contract C1); a fact that changes during the run is
  // [[step, text], ...] and shows the text of the latest step at or before this one.
  paintInspector() {
    const panel = this.querySelector(DOM.inspector);
    const id = this.state.inspected;
    const info = id && (this.data.inspect || {})[id];
    if (!panel || !info) {
      if (panel) panel.hidden = true;
      return;
    }
    const element = this.querySelector(`[id="${CSS.escape(id)}"]`);
    const heading = document.createElement("h3");
    heading.textContent = element?.querySelector("title")?.textContent || id;
    const close = document.createElement("button");
    close.type = "button";
    close.className = "close";
    close.textContent = "×";
    close.setAttribute("aria-label", "Close the inspector");
    close.addEventListener("click", () => this.setState({ inspected: null }));
    const list = document.createElement("dl");
    for (const [term, detail] of info) {
      const dt = document.createElement("dt");
      dt.append(...withCode(term));
      const dd = document.createElement("dd");
      dd.textContent = atStep(detail, this.state.step);
      list.append(dt, dd);
    }
    panel.replaceChildren(close, heading, list);
    panel.hidden = false;
  }
}

// ***** helpers *****

function atStep(detail, step) {
  if (!Array.isArray(detail)) return String(detail);
  let text = "";
  for (const [from, value] of detail) {
    if (from > step) break;
    text = value;
  }
  return text;
}

// Scroll `pane` (only it, never the page) so that `target` is inside its visible box.
function scrollInside(pane, target, pad = 16) {
  const p = pane.getBoundingClientRect();
  const t = target.getBoundingClientRect();
  let { scrollTop, scrollLeft } = pane;
  if (t.top < p.top + pad) scrollTop += t.top - p.top - pad;
  else if (t.bottom > p.bottom - pad) scrollTop += t.bottom - p.bottom + pad;
  if (t.left < p.left + pad) scrollLeft += t.left - p.left - pad;
  else if (t.right > p.right - pad) scrollLeft += Math.min(t.right - p.right + pad, t.left - p.left - pad);
  pane.scrollTo({ top: scrollTop, left: Math.max(0, scrollLeft), behavior: "instant" });
}

function clip(text, length = 160) {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

function round(n) {
  return Math.round(n * 100) / 100;
}

// a notebook may run the cell that loads this module again
if (!customElements.get("grad-player")) customElements.define("grad-player", GradPlayer);
