// <grad-player>: plays a rendered trace step by step over the server-drawn graph.
//
// The server draws each view once with every element it will ever show (app/render); a step
// only reveals, hides, focuses and re-labels elements by id. The player folds the steps' changes
// up to the current step (the same fold as app/render/playback.py) and paints the result.
// One `state` object, one `setState(patch)` that renders; DOM hooks are the data-* attributes
// in DOM below. No framework, no build step.

const DOM = {
  data: "script[data-player-data]",
  controls: "[data-controls]",
  first: "[data-action=first]",
  prev: "[data-action=prev]",
  play: "[data-action=play]",
  next: "[data-action=next]",
  last: "[data-action=last]",
  backward: "[data-action=backward]",
  scrubber: "[data-scrubber]",
  speed: "[data-speed]",
  counter: "[data-counter]",
  phase: "[data-phase-label]",
  narration: "[data-narration]",
  views: "figure[data-view]",
  viewToggle: "input[name=view]",
  code: "[data-code]",
  line: "[data-line]",
  inspector: "[data-inspector]",
};

const PHASES = ["forward", "backward", "freed", "error"];
const BASE_DELAY_MS = 1200; // one step at 1x speed
const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

class GradPlayer extends HTMLElement {
  connectedCallback() {
    if (this.ready) return;
    const data = this.querySelector(DOM.data);
    if (!data) return;
    this.data = JSON.parse(data.textContent);
    this.steps = this.data.steps;
    this.ready = true;
    this.state = { step: 0, playing: false, speed: 1, view: "tensors" };
    this.timer = null;
    this.bind();
    this.paintScrubber();
    this.querySelectorAll(DOM.controls).forEach((el) => {
      el.hidden = false;
    });
    this.querySelector("details.all-steps")?.removeAttribute("open");
    this.setState({ step: this.stepFromHash() ?? 0 });
  }

  disconnectedCallback() {
    clearTimeout(this.timer);
    window.removeEventListener("hashchange", this.onHash);
    document.removeEventListener("keydown", this.onKeydown);
  }

  // ***** state *****

  setState(patch) {
    const previous = this.state;
    this.state = { ...previous, ...patch };
    this.state.step = Math.max(0, Math.min(this.steps.length - 1, this.state.step));
    this.render(previous);
    clearTimeout(this.timer);
    if (this.state.playing) {
      if (this.state.step >= this.steps.length - 1) {
        this.setState({ playing: false });
        return;
      }
      const delay = reducedMotion.matches ? BASE_DELAY_MS : BASE_DELAY_MS / this.state.speed;
      this.timer = setTimeout(() => this.setState({ step: this.state.step + 1 }), delay);
    }
  }

  stepFromHash() {
    const match = /step=(\d+)/.exec(window.location.hash);
    return match ? Number(match[1]) : null;
  }

  // ***** wiring *****

  bind() {
    const on = (selector, event, handler) =>
      this.querySelectorAll(selector).forEach((el) => el.addEventListener(event, handler));
    on(DOM.first, "click", () => this.setState({ step: 0, playing: false }));
    on(DOM.prev, "click", () => this.setState({ step: this.state.step - 1, playing: false }));
    on(DOM.next, "click", () => this.setState({ step: this.state.step + 1, playing: false }));
    on(DOM.last, "click", () => this.setState({ step: this.steps.length - 1, playing: false }));
    on(DOM.play, "click", () => this.togglePlay());
    on(DOM.backward, "click", () => this.jumpToPhase("backward"));
    on(DOM.scrubber, "input", (e) => this.setState({ step: Number(e.target.value), playing: false }));
    on(DOM.speed, "change", (e) => this.setState({ speed: Number(e.target.value) }));
    on(DOM.viewToggle, "change", (e) => this.setState({ view: e.target.value }));
    this.onKeydown = (e) => this.onKey(e);
    document.addEventListener("keydown", this.onKeydown);
    this.querySelectorAll(`${DOM.views} svg`).forEach((svg) =>
      svg.addEventListener("click", (e) => this.inspect(e)),
    );
    this.onHash = () => {
      const step = this.stepFromHash();
      if (step !== null && step !== this.state.step) this.setState({ step, playing: false });
    };
    window.addEventListener("hashchange", this.onHash);
  }

  onKey(event) {
    if (event.target.closest?.("textarea, input, select") || event.altKey) return;
    if (event.ctrlKey || event.metaKey) return;
    if (event.key === " " && event.target.closest?.("button, a")) return; // theirs to press
    const keys = {
      ArrowLeft: () => this.setState({ step: this.state.step - 1, playing: false }),
      ArrowRight: () => this.setState({ step: this.state.step + 1, playing: false }),
      Home: () => this.setState({ step: 0, playing: false }),
      End: () => this.setState({ step: this.steps.length - 1, playing: false }),
      " ": () => this.togglePlay(),
    };
    const action = keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  }

  togglePlay() {
    const atEnd = this.state.step >= this.steps.length - 1;
    this.setState({ playing: !this.state.playing, step: atEnd ? 0 : this.state.step });
  }

  jumpToPhase(phase) {
    const found = this.steps.findIndex((s, i) => i > this.state.step && s.phase === phase);
    const index = found >= 0 ? found : this.steps.findIndex((s) => s.phase === phase);
    if (index >= 0) this.setState({ step: index, playing: false });
  }

  // ***** painting *****

  render(previous) {
    const { step, playing, view } = this.state;
    const current = this.steps[step];
    this.querySelectorAll(DOM.views).forEach((el) => {
      el.hidden = el.dataset.view !== view;
    });
    this.querySelectorAll(DOM.viewToggle).forEach((el) => {
      el.checked = el.value === view;
    });
    for (const name of Object.keys(this.data.views)) this.paintView(name, step);
    this.paintCode(current.span, current.phase);
    const narration = this.querySelector(DOM.narration);
    if (previous.step !== step || !narration.textContent) narration.textContent = current.text;
    this.querySelector(DOM.counter).textContent = `Step ${step + 1} of ${this.steps.length}`;
    this.querySelector(DOM.phase).textContent = current.phase;
    this.querySelector(DOM.phase).dataset.phaseLabel = current.phase;
    this.querySelector(DOM.scrubber).value = String(step);
    const play = this.querySelector(DOM.play);
    play.textContent = playing ? "Pause" : "Play";
    play.setAttribute("aria-pressed", String(playing));
    if (previous.step !== step) {
      history.replaceState(null, "", `#step=${step}`);
    }
  }

  paintView(name, k) {
    const root = this.querySelector(`${DOM.views}[data-view="${name}"] svg`);
    if (!root) return;
    const state = this.fold(name, k);
    const stepping = Math.abs(k - (this.painted?.[name] ?? -2)) === 1;
    this.painted = { ...this.painted, [name]: k };
    for (const el of root.querySelectorAll("g.node[id], g.edge[id]")) {
      const id = el.id;
      const appearing = stepping && el.classList.contains("hidden") && state.visible.has(id);
      el.classList.toggle("hidden", !state.visible.has(id));
      el.classList.toggle("appear", appearing); // fades in (CSS), only when stepping forward
      el.classList.toggle("focus", state.focus.has(id));
      el.classList.toggle("freed", state.marks.get(id) === "freed");
      el.classList.toggle("error", state.marks.get(id) === "error");
      if (state.values.has(id)) setText(el, "text.value", state.values.get(id));
      setText(el, "text.grad", state.grads.get(id) ?? "");
    }
  }

  // The view after steps 0..k: what is visible, each id's latest value and grad text and mark,
  // and step k's focus. Checkpoints every 64 steps keep scrubbing a long trace smooth.
  fold(name, k) {
    this.checkpoints ??= {};
    const saved = (this.checkpoints[name] ??= []);
    const start = Math.floor(k / 64);
    let state;
    let from;
    if (saved[start]) {
      state = cloneState(saved[start]);
      from = start * 64;
    } else {
      state = { visible: new Set(), values: new Map(), grads: new Map(), marks: new Map() };
      from = 0;
    }
    for (let i = from; i <= k; i++) {
      if (i % 64 === 0 && !saved[i / 64]) saved[i / 64] = cloneState(state);
      const delta = this.steps[i][name] || {};
      for (const id of delta.hide || []) state.visible.delete(id);
      for (const id of delta.reveal || []) state.visible.add(id);
      for (const [id, text] of Object.entries(delta.values || {})) state.values.set(id, text);
      for (const [id, text] of Object.entries(delta.grads || {})) state.grads.set(id, text);
      for (const [id, mark] of Object.entries(delta.marks || {})) state.marks.set(id, mark);
    }
    state.focus = new Set((this.steps[k][name] || {}).focus || []);
    return state;
  }

  paintCode(span, phase) {
    const code = this.querySelector(DOM.code);
    if (!code) return;
    for (const line of code.querySelectorAll(DOM.line)) {
      const number = Number(line.dataset.line);
      const text = line.dataset.text ?? (line.dataset.text = line.textContent);
      const inside = span && number >= span[0] && number <= span[2];
      line.classList.toggle("current", Boolean(inside));
      line.classList.toggle("failing", Boolean(inside) && phase === "error");
      if (!inside) {
        line.textContent = text;
        continue;
      }
      const start = number === span[0] ? span[1] : 0;
      const end = number === span[2] ? span[3] : text.length;
      const mark = document.createElement("mark");
      mark.textContent = text.slice(start, end);
      line.replaceChildren(text.slice(0, start), mark, text.slice(end));
    }
  }

  paintScrubber() {
    const scrubber = this.querySelector(DOM.scrubber);
    scrubber.max = String(this.steps.length - 1);
    // a gradient with one band per step, coloured by phase (CSS custom properties hold colours)
    const styles = getComputedStyle(this);
    const colour = (phase) => styles.getPropertyValue(`--phase-${phase}`).trim() || "#999";
    const n = this.steps.length;
    const bands = this.steps.map((s, i) => {
      const c = colour(PHASES.includes(s.phase) ? s.phase : "forward");
      return `${c} ${(i / n) * 100}% ${((i + 1) / n) * 100}%`;
    });
    scrubber.style.setProperty("--track", `linear-gradient(to right, ${bands.join(", ")})`);
  }

  // ***** the node inspector *****

  inspect(event) {
    const group = event.target.closest("g[id]");
    const panel = this.querySelector(DOM.inspector);
    if (!group || !panel || group.classList.contains("hidden")) return;
    const info = (this.data.inspect || {})[group.id];
    if (!info) return;
    const list = document.createElement("dl");
    for (const [term, detail] of info) {
      const dt = document.createElement("dt");
      dt.textContent = term;
      const dd = document.createElement("dd");
      dd.textContent = detail;
      list.append(dt, dd);
    }
    panel.replaceChildren(list);
    panel.hidden = false;
  }
}

function setText(group, selector, text) {
  const node = group.querySelector(selector);
  if (node && node.textContent !== text) node.textContent = text;
}

function cloneState(state) {
  return {
    visible: new Set(state.visible),
    values: new Map(state.values),
    grads: new Map(state.grads),
    marks: new Map(state.marks),
  };
}

customElements.define("grad-player", GradPlayer);
