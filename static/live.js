// Live editing: the snippet runs at each pause in typing and the player beside the editor is
// replaced in place, at the same view and the same step, with no page load.
//
// Why this shape:
// - One run in flight at most. A pause (PAUSE_MS after the last edit) sends the snippet; an
//   edit that pauses while a run is out is sent when that run comes back, so steady typing
//   sends nothing and a slow run is never overtaken by a faster, older one.
// - The step is found again by what it is, not by its number: the same line and operation
//   (`matchStep`), the nth of its kind if a loop repeats it, else the nearest step by line.
//   The new player opens there by itself: the address's `#step=N`, which it reads when it
//   connects, is set (history.replaceState: no history entry per keystroke) before it goes in.
// - Live runs are not stored (POST /live). The one shown is kept (POST /live/keep) only when
//   the learner shares it, quizzes on it or leaves the page on it; its address `/t/{id}` is the
//   one it will have once kept, and the server remembers its code for a reload.
// - An error is marked at its line in the editor (static/editor.js's `grad-mark-problem`) and
//   said in the status region (role=status); a snippet Python cannot read keeps the last
//   picture shown. Focus and cursor stay in the editor throughout.
// - performance marks `gradtrace:live-pause` (the debounce fires) and `gradtrace:live-shown`
//   (the new player painted), measure `gradtrace:live`, and a `grad-live-shown` event on the
//   document: bench/live.py times the one against the other.
import { messageFor } from "./run.js";

const PAUSE_MS = 300;
const REMEMBERED = "gradtrace-live"; // localStorage: "off" when the learner turned it off
const UNREACHABLE = "Could not reach the server: the picture is from the last run that came back.";

/** What makes a step the same one across two runs: its line and its operation (its kind, and
 * the autograd node the narration names), never its values, which are what the edit changes. */
function operation(step) {
  const node = /\b(?:\w+Backward\d*|AccumulateGrad)\b/.exec(step.text ?? "");
  return `${step.span?.[0] ?? ""}|${step.kind}|${node ? node[0] : ""}`;
}

/** The index in `after` of the step that was `before[index]`: the same line and operation (the
 * nth such step if several, as in a loop), else the nearest by line, then by position. */
export function matchStep(before, index, after) {
  const old = before[index];
  if (!old || !after.length) return 0;
  const key = operation(old);
  const nth = before.slice(0, index).filter((step) => operation(step) === key).length;
  const same = [];
  after.forEach((step, i) => {
    if (operation(step) === key) same.push(i);
  });
  if (same.length) return same[Math.min(nth, same.length - 1)];
  const line = old.span?.[0];
  let best = 0;
  let bestScore = Infinity;
  after.forEach((step, i) => {
    const lines = line == null || step.span == null ? 1e6 : Math.abs(step.span[0] - line);
    const score = lines * 1e6 + Math.abs(i - index);
    if (score < bestScore) [best, bestScore] = [i, score];
  });
  return best;
}

/** The run's error, for the editor's mark: {line, text} (1-based line), or null. */
function errorOf(steps) {
  const step = steps.find((s) => s.phase === "error" && s.error && s.span);
  if (!step) return null;
  const { type, message } = step.error;
  return { line: step.span[0], text: `${type}: ${message}` };
}

function playerSteps(player) {
  if (player?.steps) return player.steps;
  const data = player?.querySelector("script[data-player-data]");
  return data ? JSON.parse(data.textContent).steps ?? [] : [];
}

function nextPaint() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

class LiveEditing {
  constructor(form, editor, result) {
    this.form = form;
    this.editor = editor;
    this.result = result;
    this.textarea = form.querySelector("textarea");
    this.toggle = form.querySelector("[data-live]");
    this.status = form.querySelector("[data-live-status]");
    this.timer = null;
    this.inFlight = false;
    this.waiting = false; // an edit paused while a run was out
    this.runs = 0; // Run presses: a live answer that comes back after one is dropped
    this.lastSent = this.textarea.value;
    const onTrace = /^\/t\/([a-z2-7]+)$/.exec(location.pathname);
    // the run shown: its code, id and whether it is stored (a trace page's is)
    this.shown = { code: this.textarea.value, ident: onTrace?.[1] ?? null, stored: true };
  }

  start() {
    this.toggle.checked = localStorage.getItem(REMEMBERED) !== "off";
    this.toggle.closest("[data-live-toggle]").hidden = false;
    this.paintToggle();
    this.toggle.addEventListener("change", () => {
      localStorage.setItem(REMEMBERED, this.toggle.checked ? "on" : "off");
      this.paintToggle();
      if (this.toggle.checked) this.edited();
      else clearTimeout(this.timer);
    });
    this.textarea.addEventListener("input", () => this.edited());
    // the step the player shows, marked in the editor beside it (static/editor.js)
    this.result.addEventListener("grad-step", () => this.markStep());
    this.editor.addEventListener("grad-editor-ready", () => this.markStep());
    this.listenToRun();
    this.result.addEventListener("click", (event) => this.keepBeforeLeaving(event), true);
    window.addEventListener("pagehide", () => {
      if (!this.shown.stored) {
        navigator.sendBeacon("/live/keep", new URLSearchParams({ code: this.shown.code }));
        this.shown.stored = true;
      }
    });
  }

  paintToggle() {
    this.editor.toggleAttribute("data-live-on", this.toggle.checked);
    this.markStep();
  }

  edited() {
    clearTimeout(this.timer);
    if (this.toggle.checked) this.timer = setTimeout(() => this.paused(), PAUSE_MS);
  }

  paused() {
    performance.mark("gradtrace:live-pause");
    if (this.inFlight) {
      this.waiting = true;
      return;
    }
    const code = this.textarea.value;
    if (code !== this.lastSent) this.send(code);
  }

  async send(code) {
    this.inFlight = true;
    this.lastSent = code;
    const runs = this.runs;
    this.say("Running…");
    try {
      const answer = await fetch("/live", {
        method: "POST",
        body: new URLSearchParams({ code }),
        headers: { "HX-Request": "true" },
      });
      const html = await answer.text();
      if (runs === this.runs) await this.show(answer, html, code);
    } catch (error) {
      if (runs === this.runs) this.say(UNREACHABLE, true);
      console.warn("A live run did not come back.", error);
    } finally {
      this.inFlight = false;
    }
    if (this.waiting && runs === this.runs) {
      this.waiting = false;
      this.paused();
    }
  }

  async show(answer, html, code) {
    const page = document.createElement("template");
    page.innerHTML = html;
    const player = page.content.querySelector("grad-player");
    const problem = page.content.querySelector("[data-problem]");
    if (!answer.ok) {
      // nothing new to show: the last picture stays, and the status (and editor) say why
      const spot = problem?.dataset.line ? Number(problem.dataset.line) : null;
      const said = problem
        ? problem.textContent.trim().split(" Python could not read")[0]
        : messageFor(answer.status, answer.statusText, answer.headers.get("Content-Type"), html, answer.headers.get("Retry-After"));
      this.mark(spot === null ? null : { line: spot, text: said });
      this.say(said, true);
      return;
    }
    const ident = answer.headers.get("X-Trace-Id");
    const before = this.result.querySelector("grad-player");
    const steps = playerSteps(player); // none for a run told in words only (too big to draw)
    const step = before?.ready ? matchStep(before.steps, before.step, steps) : 0;
    if (before?.ready && player) player.dataset.view = before.view;
    // the new player opens at the address's step when it connects
    history.replaceState(history.state, "", `/t/${ident}#step=${step + 1}`);
    document.title = `Trace ${ident} · gradtrace`;
    const scrolled = window.scrollY;
    this.result.replaceChildren(page.content);
    // htmx's attributes are never in the player (templates/_player.html): its thousands of
    // drawn elements are not searched for them (a 20-pass loop's took 15 ms)
    for (const part of this.result.children) {
      if (part.localName !== "grad-player") window.htmx?.process(part);
    }
    window.scrollTo({ top: scrolled, behavior: "instant" });
    this.shown = { code, ident, stored: answer.headers.get("X-Trace-Stored") === "1" };
    const error = errorOf(steps);
    this.mark(error && { line: error.line, text: `Line ${error.line}: ${error.text}` });
    this.markStep();
    const shown = this.result.querySelector("grad-player");
    const where = shown?.ready ? `step ${shown.step + 1} of ${shown.steps.length}` : "its steps in words";
    this.say(error ? `Ran to line ${error.line}: ${error.text}` : `Updated: ${where}.`, Boolean(error));
    await nextPaint();
    performance.mark("gradtrace:live-shown");
    const { duration } = performance.measure("gradtrace:live", "gradtrace:live-pause", "gradtrace:live-shown");
    document.dispatchEvent(new CustomEvent("grad-live-shown", { detail: { ident, step: shown?.step ?? 0, duration } }));
  }

  markStep() {
    const player = this.result.querySelector("grad-player");
    const span = this.toggle.checked && player?.ready ? player.steps[player.step]?.span : null;
    this.editor.dispatchEvent(new CustomEvent("grad-mark-step", { detail: span ? { span } : null }));
  }

  mark(problem) {
    this.editor.dispatchEvent(new CustomEvent("grad-mark-problem", { detail: problem }));
  }

  say(text, problem = false) {
    this.status.textContent = text;
    this.status.toggleAttribute("data-problem-shown", problem);
  }

  // Run still runs and stores as always: a live answer after it is dropped, and what Run
  // brought is the run shown (stored).
  listenToRun() {
    const fromForm = (event) => event.detail.requestConfig?.elt === this.form;
    document.addEventListener("htmx:beforeRequest", (event) => {
      if (!fromForm(event)) return;
      clearTimeout(this.timer);
      this.runs += 1;
      this.waiting = false;
      this.lastSent = this.textarea.value;
      this.say("");
    });
    document.addEventListener("htmx:afterSwap", (event) => {
      if (!fromForm(event)) return;
      const pushed = /\/t\/([a-z2-7]+)/.exec(event.detail.xhr.getResponseHeader("HX-Push-Url") ?? "");
      if (pushed) this.shown = { code: this.lastSent, ident: pushed[1], stored: true };
      const error = errorOf(playerSteps(this.result.querySelector("grad-player")));
      this.mark(error && { line: error.line, text: `Line ${error.line}: ${error.text}` });
      this.markStep();
    });
  }

  // Sharing a live run, or quizzing on it, needs it stored: kept first, then let through.
  keepBeforeLeaving(event) {
    if (this.shown.stored || event.button !== 0) return;
    const summary = event.target.closest("details.share > summary");
    const quiz = event.target.closest("a.quiz-me");
    if (summary && !summary.parentElement.open) {
      event.preventDefault();
      this.keep()
        .then(() => {
          summary.parentElement.open = true;
        })
        .catch(() => {}); // the status says why
    } else if (quiz && !(event.ctrlKey || event.metaKey || event.shiftKey)) {
      event.preventDefault();
      this.keep()
        .then(() => location.assign(quiz.href))
        .catch(() => {});
    }
  }

  async keep() {
    const { code } = this.shown;
    this.say("Keeping this run…");
    const answer = await fetch("/live/keep", { method: "POST", body: new URLSearchParams({ code }) });
    if (answer.ok) {
      if (this.shown.code === code) this.shown.stored = true;
      this.say("Kept: this run has its own address now.");
    } else {
      const text = await answer.text();
      const type = answer.headers.get("Content-Type");
      const detail = type?.startsWith("application/json") ? JSON.parse(text).detail : text;
      this.say(messageFor(answer.status, answer.statusText, "text/plain", detail ?? "", answer.headers.get("Retry-After")), true);
      throw new Error(`keeping the live run failed: ${answer.status}`);
    }
  }
}

const form = document.querySelector("[data-run-form]");
const editor = document.querySelector("[data-editor]");
const result = document.getElementById("result");
if (form?.querySelector("[data-live]") && editor && result) new LiveEditing(form, editor, result).start();
