// Lessons and quizzes around the player: progress, predict checks, picking nodes, attempts.
//
// Everything here is an addition: without JavaScript each question is a plain form the server
// grades, and the lesson is the steps as a list. With it:
// - progress (steps seen, and how each question was settled: answered right the first time,
//   right after a wrong answer and its hint, or its answer shown) is kept in this browser's
//   localStorage, per lesson (or per trace, for a quiz); a reopened lesson says it beside each
//   question, and /lessons counts it; there are no accounts;
// - a predict check (`data-checkpoint="N"`) holds playback at step N-1 until it is answered
//   or its answer shown, then plays step N;
// - a node question lets the learner click (or press Enter on) a node in the graph;
// - the form's `attempt` counts wrong answers, so the second one brings the answer.

const PREFIX = "gradtrace:progress:";

function load(key) {
  try {
    const saved = JSON.parse(localStorage.getItem(PREFIX + key) || "null");
    if (saved && Array.isArray(saved.seen) && typeof saved.answered === "object") return saved;
  } catch {
    // storage refused (private mode) or garbled: start afresh
  }
  return { seen: [], answered: {} };
}

function save(key, progress) {
  try {
    localStorage.setItem(PREFIX + key, JSON.stringify(progress));
  } catch {
    // full or refused: progress is a convenience, the lesson goes on without it
  }
}

// ***** /lessons: how far each lesson got *****

// How a question was settled, as kept, and as said beside it. ("right" is how progress kept
// before first time and after a hint were told apart.)
const SETTLED = {
  first: "Answered right the first time",
  hint: "Answered right after a hint",
  right: "Answered right",
  shown: "Answer shown",
};
const answeredRight = (how) => how === "first" || how === "hint" || how === "right";

// Done means every question answered right: answers only shown leave a lesson to come back to.
for (const slot of document.querySelectorAll("[data-progress]")) {
  const progress = load(`lesson:${slot.dataset.progress}`);
  const settled = Object.values(progress.answered).filter((how) => how in SETTLED);
  const right = settled.filter(answeredRight).length;
  const shown = settled.length - right;
  const total = Number(slot.dataset.questions);
  if (!progress.seen.length && !settled.length) continue;
  const done = total > 0 && right >= total;
  const parts = [`${right} of ${total} answered right`];
  if (shown) parts.push(`${shown} answer${shown === 1 ? "" : "s"} shown`);
  if (!done) parts.push(`${progress.seen.length} steps seen`);
  slot.textContent = done ? " · done: every question answered right" : ` · ${parts.join(", ")}`;
  slot.closest("li")?.classList.toggle("done", done);
}

// ***** a lesson or a quiz page *****

const page = document.querySelector("article.lesson");
if (page) {
  await customElements.whenDefined("grad-player");
  start(page);
}

function start(page) {
  const key = page.dataset.lesson ? `lesson:${page.dataset.lesson}` : `quiz:${page.dataset.quiz}`;
  const progress = load(key);
  const player = page.querySelector("grad-player");
  const forms = [...page.querySelectorAll("form.check")];
  const note = checkpointNote(player);

  const seen = new Set(progress.seen);
  const remember = () => {
    progress.seen = [...seen].sort((a, b) => a - b);
    save(key, progress);
  };
  if (player?.ready) {
    seen.add(player.step);
    remember();
    player.addEventListener("grad-step", (event) => {
      seen.add(event.detail.step);
      remember();
      holdAtCheckpoint();
    });
    // paced mode ended: the predict checks hold playback again
    page.addEventListener("class-released", holdAtCheckpoint);
    player.addEventListener("grad-blocked", () => {
      const form = pendingCheckpoint();
      if (form) ask(form, true);
    });
  }

  // the earliest predict check not yet answered: playback stops just before its step
  const pendingCheckpoint = () =>
    forms
      .filter((f) => f.dataset.checkpoint && !progress.answered[f.dataset.question])
      .sort((a, b) => a.dataset.checkpoint - b.dataset.checkpoint)[0];

  function holdAtCheckpoint() {
    if (!player?.ready) return;
    if ("paced" in page.dataset) return; // a class's instructor holds the pace (static/class.js)
    const form = pendingCheckpoint();
    const limit = form ? Number(form.dataset.checkpoint) - 2 : null;
    if (player.limit !== limit) player.setLimit(limit);
    const waiting = form && player.step === limit;
    note.hidden = !waiting;
    if (waiting) {
      note.replaceChildren(
        `Predict step ${form.dataset.checkpoint} before it plays: `,
        link(`#${form.id}`, "answer the question"),
        " to go on.",
      );
      ask(form, false);
    }
  }

  function ask(form, focus) {
    form.classList.add("asking");
    if (form.dataset.kind === "predict" && form.querySelector("input[name=node]")) pickWith(form);
    if (focus) {
      form.scrollIntoView({ block: "nearest" });
      form.querySelector("input, select, button")?.focus({ preventScroll: true });
    }
  }

  // ***** picking nodes in the graph *****

  let picking = null;
  function pickWith(form) {
    if (!player?.ready) return;
    picking = form;
    for (const f of forms) f.querySelector("[data-pick-button]")?.setAttribute("aria-pressed", String(f === form));
    player.showView(form.dataset.view || "autograd");
    player.setPicker((id) => pick(form, id));
  }
  // The graph in view, at a step where the question's nodes are drawn (a question may be read
  // while playback is still at step 1, before any node exists): forward to the first step that
  // shows them, never past what may be shown, never back.
  function showGraphFor(form) {
    const ids = [...form.querySelectorAll("input[name=node]")].map((input) => input.value);
    const at = player.stepShowing(form.dataset.view || "autograd", ids);
    if (at !== null && at > player.step) player.goto(at);
    player.scrollIntoView({ block: "nearest" });
  }
  function stopPicking() {
    picking?.querySelector("[data-pick-button]")?.setAttribute("aria-pressed", "false");
    picking = null;
    player?.setPicker(null);
  }
  function pick(form, id) {
    const input = [...form.querySelectorAll("input[name=node]")].find((i) => i.value === id);
    const status = form.querySelector("[data-pick-status]");
    if (!input) {
      status.textContent = "That node is not one of this question's choices.";
      return;
    }
    input.checked = input.type === "checkbox" ? !input.checked : true;
    const name = input.closest("label")?.textContent.trim();
    status.textContent = `${input.checked ? "Picked" : "Unpicked"} ${name}.`;
  }

  for (const form of forms) {
    if (form.querySelector("input[name=node]") && player?.ready) {
      const help = form.querySelector("[data-pick-help]");
      help.hidden = false;
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.pickButton = "";
      button.setAttribute("aria-pressed", "false");
      button.textContent = "Pick in the graph";
      button.addEventListener("click", () => {
        if (picking === form) return stopPicking();
        pickWith(form);
        showGraphFor(form);
      });
      const status = document.createElement("span");
      status.dataset.pickStatus = "";
      status.setAttribute("role", "status");
      help.after(button, status);
    }
    form.addEventListener("htmx:afterSwap", () => graded(form));
    form.addEventListener("click", (event) => {
      const replay = event.target.closest("[data-replay]");
      if (replay && player?.ready) {
        event.preventDefault();
        const step = Number(replay.dataset.replay) - 1;
        const held = pendingCheckpoint();
        if (held && step > player.lastShown()) {
          // past a check still to answer: the link says so rather than do nothing
          tell(replay, `Step ${step + 1} plays once the check before step ${held.dataset.checkpoint} is answered.`);
          return;
        }
        player.goto(step);
        player.scrollIntoView({ block: "nearest" });
      }
    });
    if (progress.answered[form.dataset.question]) settle(form, progress.answered[form.dataset.question]);
  }

  // a question settled, now or in an earlier visit: marked, and how said beside it
  function settle(form, how) {
    form.classList.add("answered");
    form.dataset.settled = how;
    let note = form.querySelector("[data-settled-note]");
    if (!note) {
      note = document.createElement("p");
      note.className = "settled-note";
      note.dataset.settledNote = "";
      form.querySelector("fieldset")?.after(note);
    }
    note.textContent = SETTLED[how] || "";
  }

  function graded(form) {
    const verdict = form.querySelector("[data-verdict]");
    if (!verdict) return;
    const attempt = form.querySelector("[data-attempt]");
    if (verdict.dataset.verdict === "wrong" && attempt) attempt.value = String(Number(attempt.value) + 1);
    const settled = verdict.dataset.verdict === "right" || verdict.hasAttribute("data-answered");
    if (!settled) return;
    const qid = form.dataset.question;
    const first = !progress.answered[qid];
    if (first) {
      // how it was first settled: right at once, right after a wrong answer (whose feedback
      // gave the hint), or its answer shown; the form's attempt counts the wrong answers
      const wrong = Number(attempt?.value || 0);
      const how = verdict.dataset.verdict !== "right" ? "shown" : wrong ? "hint" : "first";
      progress.answered[qid] = how;
      save(key, progress);
      settle(form, how);
    }
    form.classList.remove("asking");
    if (picking === form) stopPicking();
    if (first && form.dataset.checkpoint && player?.ready) {
      holdAtCheckpoint();
      player.goto(Number(form.dataset.checkpoint) - 1); // the step it predicted now plays
    }
  }

  // starting over: this lesson's progress forgotten, its predict checks holding again
  const forget = page.querySelector("[data-forget]");
  if (forget) {
    forget.hidden = false;
    forget.addEventListener("click", () => {
      try {
        localStorage.removeItem(PREFIX + key);
      } catch {
        // refused: nothing was kept, so nothing to forget
      }
      window.location.assign(window.location.pathname);
    });
  }

  holdAtCheckpoint();
}

function checkpointNote(player) {
  const note = document.createElement("p");
  note.className = "checkpoint-note";
  note.setAttribute("role", "status");
  note.hidden = true;
  player?.querySelector("[data-narration]")?.after(note);
  return note;
}

// A status line just after `element`, made the first time.
function tell(element, text) {
  let status = element.nextElementSibling;
  if (!status?.matches("[data-told]")) {
    status = document.createElement("span");
    status.dataset.told = "";
    status.setAttribute("role", "status");
    status.className = "told";
    element.after(" ", status);
  }
  status.textContent = text;
}

function link(href, text) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  return a;
}
