// A class (app/routes/classes.py): the instructor's paced mode, and the students' players
// following it.
//
// On the instructor's page (`[data-class-teach]`) the results panel redraws itself through
// htmx's SSE extension; this script adds paced mode: the step field follows the instructor's
// player, and with "Students' players follow mine" checked every step the player shows is
// sent as the class's pace, and the player holds just before each predict check until the
// instructor shows everyone its answer (so the class answers before the step plays). On a student's page (`article[data-class-follow]`) it listens to
// the class's events: `pace` {step: N} holds the player at step N (1-based; null releases it
// to the lesson's own predict checks), and `reveal` {question} shows that question's answer.

const teach = document.querySelector("[data-class-teach]");
const follow = document.querySelector("article[data-class-follow]");

async function readyPlayer(root) {
  const player = root.querySelector("grad-player");
  if (!player) return null;
  await customElements.whenDefined("grad-player");
  return player.ready ? player : null;
}

// (defined before the code below, which awaits the player: a module's later lines run after)
// The questions whose answer this class was shown, kept for the tab (a reload keeps them).
class Revealed {
  constructor(base) {
    this.key = `gradtrace:class-revealed:${base}`;
    try {
      this.ids = new Set(JSON.parse(sessionStorage.getItem(this.key) || "[]"));
    } catch {
      this.ids = new Set(); // storage refused or garbled: every check holds again
    }
  }
  has(id) {
    return this.ids.has(id);
  }
  add(id) {
    this.ids.add(id);
    try {
      sessionStorage.setItem(this.key, JSON.stringify([...this.ids]));
    } catch {
      // refused: this tab still remembers
    }
  }
}

function holdNote(player) {
  const note = document.createElement("p");
  note.className = "checkpoint-note";
  note.setAttribute("role", "status");
  note.dataset.classHold = "";
  note.hidden = true;
  player.querySelector("[data-narration]")?.after(note);
  return note;
}

// ***** the instructor *****

if (teach) {
  const base = teach.dataset.classTeach;
  const form = teach.querySelector("[data-class-pace]");
  const field = teach.querySelector("[data-pace-step]");
  const followMe = teach.querySelector("[data-pace-follow]");
  const player = await readyPlayer(teach);
  const send = (step) =>
    fetch(`${base}/pace`, {
      method: "POST",
      body: new URLSearchParams(step === null ? { release: "1" } : { step: String(step) }),
      headers: { "HX-Request": "true" }, // answered 204, not the page
    });
  if (player && form) {
    const current = () => player.step + 1;
    const revealed = new Revealed(base);
    const note = holdNote(player);
    // the earliest predict check whose answer the class has not been shown: the player holds
    // on the step before it while paced (the results panel, redrawn by htmx, lists the checks)
    const heldAt = () =>
      [...teach.querySelectorAll("[data-class-question][data-checkpoint]")]
        .map((q) => ({ id: q.dataset.classQuestion, checkpoint: Number(q.dataset.checkpoint) }))
        .filter((q) => !revealed.has(q.id))
        .sort((a, b) => a.checkpoint - b.checkpoint)[0];
    const hold = () => {
      const check = followMe.checked ? heldAt() : undefined;
      const limit = check ? check.checkpoint - 2 : null;
      if (player.limit !== limit) player.setLimit(limit);
      note.hidden = !(check && player.step === limit);
      note.textContent = check
        ? `Holding before step ${check.checkpoint}: the class is predicting it. ` +
          "Show everyone the answer to go on."
        : "";
    };
    if (!field.value) field.value = String(current());
    player.addEventListener("grad-step", () => {
      if (document.activeElement !== field) field.value = String(current());
      if (followMe.checked) send(current());
      hold();
    });
    player.addEventListener("grad-blocked", hold);
    followMe.addEventListener("change", () => {
      send(followMe.checked ? current() : null);
      hold();
    });
    form.querySelector("[data-pace-release]")?.addEventListener("click", () => {
      followMe.checked = false;
      hold();
    });
    // a reveal lifts its check's hold (the panel is redrawn, so the buttons are found by event)
    teach.addEventListener("submit", (event) => {
      const question = event.target.querySelector?.("input[name=question]")?.value;
      if (!event.target.matches("[data-class-reveal-form]") || !question) return;
      revealed.add(question);
      hold();
    });
    hold();
  }
}

// ***** a student *****

if (follow) {
  const player = await readyPlayer(follow);
  const events = new EventSource(follow.dataset.classFollow);
  events.addEventListener("pace", (event) => {
    const { step } = JSON.parse(event.data);
    if (!player) return;
    if (step === null || step === undefined) {
      if (!("paced" in follow.dataset)) return;
      delete follow.dataset.paced;
      player.setLimit(null);
      follow.dispatchEvent(new Event("class-released")); // static/lesson.js holds its checks
      return;
    }
    follow.dataset.paced = String(step);
    player.setLimit(step - 1);
    player.goto(step - 1);
  });
  events.addEventListener("reveal", (event) => {
    const { question } = JSON.parse(event.data);
    const form = follow.querySelector(`form.check[data-question="${CSS.escape(String(question))}"]`);
    if (!form || !window.htmx) return;
    // the instructor's reveal, not the student's own: the class does not record it
    window.htmx.ajax("POST", form.getAttribute("hx-post"), {
      source: form,
      target: form.querySelector("[data-feedback]"),
      swap: "innerHTML",
      values: { reveal: "1", class_reveal: "1" },
    });
  });
  events.addEventListener("ended", () => {
    events.close();
    delete follow.dataset.paced;
    player?.setLimit(null);
    follow.dispatchEvent(new Event("class-released"));
    const banner = follow.querySelector("[data-class-banner] span");
    if (banner) banner.textContent = "This class has ended: your answers are no longer recorded.";
  });
}
