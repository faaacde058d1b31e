// <grad-share>: the Share dialog (templates/_share.html) kept in step with the player.
//
// Without JavaScript the dialog holds the trace's plain link, the default snippets and a GET
// form for the downloads. Here it follows the step shown (the player's `grad-step` events) and
// the choices (view, theme, steps, the embed's controls), and rewrites the links and the
// snippets' iframe address to match. The snippets themselves are made once, on the server
// (app/sharing.py): only the address inside them changes here, so the two cannot drift apart.
//
// A download is fetched here rather than left to the browser, which drops a refused one (a
// range past what an image export draws) as a cancelled download with no word: the dialog says
// it is being made, for how long so far, and what the server said if it could not be made.

const SAID_MS = 4000; // how long "Copied" stays

class GradShare extends HTMLElement {
  connectedCallback() {
    if (this.ready) return;
    this.ready = true;
    this.page = this.dataset.page;
    this.embed = this.dataset.embed;
    this.total = Number(this.dataset.steps) || 1;
    this.maxFrames = Number(this.dataset.maxFrames) || Infinity;
    this.step = this.currentStep();
    // each snippet as the server wrote it, with the embed's bare address in it
    this.snippets = [...this.querySelectorAll("textarea[data-snippet]")].map((field) => ({
      field,
      text: field.value,
    }));
    this.querySelectorAll("[data-copy], [data-share-js]").forEach((el) => {
      el.hidden = false;
    });
    // the links follow the choices now: the form's own buttons are for pages without scripts
    this.querySelectorAll("[data-share-nojs]").forEach((el) => {
      el.hidden = true;
    });
    this.querySelectorAll("[data-copy]").forEach((button) => {
      button.addEventListener("click", () => this.copy(button));
    });
    this.querySelectorAll("a[data-export]").forEach((link) => {
      link.addEventListener("click", (event) => {
        event.preventDefault();
        this.download(link);
      });
    });
    const choices = this.querySelector("[data-share-choices]");
    choices.addEventListener("input", () => this.update());
    choices.addEventListener("change", () => this.update());
    // the form has no submit button left: Enter in a step field must not leave the page
    choices.addEventListener("submit", (event) => event.preventDefault());
    this.onStep = (event) => {
      this.step = event.detail.step + 1;
      this.update();
    };
    document.addEventListener("grad-step", this.onStep);
    this.update();
  }

  disconnectedCallback() {
    document.removeEventListener("grad-step", this.onStep);
  }

  // The step shown (1-based): the player's, else the address's #step=N, else the first.
  currentStep() {
    const player = document.querySelector("grad-player");
    if (player?.ready) return player.step + 1;
    const match = /step=(\d+)/.exec(window.location.hash);
    return match ? Number(match[1]) : 1;
  }

  choice(name) {
    const el = this.querySelector(`[data-choice=${name}]`);
    return el.type === "checkbox" ? el.checked : el.value;
  }

  // A step field as a number in 1..total, or the fallback while it is empty or half typed.
  stepChoice(name, fallback) {
    const value = Number.parseInt(this.choice(name), 10);
    return Number.isInteger(value) ? Math.max(1, Math.min(this.total, value)) : fallback;
  }

  // The query the exports share: only what differs from their defaults.
  exportQuery() {
    const query = new URLSearchParams();
    let first = this.stepChoice("from", 1);
    let last = this.stepChoice("to", this.total);
    if (first > last) [first, last] = [last, first];
    if (this.choice("view") !== "tensors") query.set("view", this.choice("view"));
    if (this.choice("theme") !== "light") query.set("theme", this.choice("theme"));
    if (first !== 1) query.set("from", String(first));
    if (last !== this.total) query.set("to", String(last));
    return { query, first, last };
  }

  // The embed's query, and the step it opens at.
  embedQuery() {
    const { query, first, last } = this.exportQuery();
    if (this.choice("controls") !== "full") query.set("controls", this.choice("controls"));
    if (!this.choice("here")) return { query, start: first };
    // an embed's opening step must lie in its range (the embed refuses one outside it)
    const start = Math.max(first, Math.min(last, this.step));
    query.set("step", String(start));
    return { query, start };
  }

  update() {
    const permalink = `${this.page}#step=${this.step}`;
    this.querySelector("[data-share-permalink]").value = permalink;

    const { query, start } = this.embedQuery();
    const search = query.toString();
    const src = this.embed + (search ? `?${search}` : "");
    // the address sits in an attribute of the snippet: its & must be written &amp;
    const written = src.replaceAll("&", "&amp;");
    for (const { field, text } of this.snippets) {
      field.value = text
        .replaceAll(`"${this.embed}"`, `"${written}"`)
        .replace(/data-trace-start="\d+"/, `data-trace-start="${start}"`);
    }

    const exportQuery = this.exportQuery().query;
    for (const a of this.querySelectorAll("a[data-export]")) {
      const url = new URL(a.href);
      url.search = exportQuery.toString();
      if (a.dataset.export === "picture") {
        // one picture: of the step shown, not of a range
        url.searchParams.delete("from");
        url.searchParams.delete("to");
        url.searchParams.set("step", String(this.step));
      }
      a.href = url.pathname + url.search;
    }
    this.querySelector("[data-picture-step]").textContent = `step ${this.step} of ${this.total}`;

    // an image export of more steps than it draws would be refused: say so before the click
    const { first, last } = this.exportQuery();
    const tooMany = last - first + 1 > this.maxFrames;
    const note = this.querySelector("[data-frames-note]");
    note.hidden = !tooMany;
    note.textContent = tooMany
      ? `A GIF, zip or PDF draws at most ${this.maxFrames} steps, and steps ${first} to ${last} ` +
        `are ${last - first + 1}: choose From and To above. (The HTML file holds every step.)`
      : "";
    for (const link of this.querySelectorAll("a[data-export]")) {
      // the server marks the exports drawn step by step: at most data-max-frames of them
      if (link.hasAttribute("data-bounded")) link.toggleAttribute("data-too-many", tooMany);
    }
  }

  // Fetch an export and hand it to the browser as a download, saying meanwhile that it is being
  // made (a GIF of many steps takes a while) and, if it cannot be, why.
  async download(link) {
    const status = this.querySelector("[data-download-status]");
    const what = link.textContent.trim();
    if (link.hasAttribute("data-too-many")) {
      status.textContent = this.querySelector("[data-frames-note]").textContent;
      return;
    }
    if (this.downloading) {
      status.textContent = `Still making ${this.downloading}: one download at a time.`;
      return;
    }
    this.downloading = what;
    const started = Date.now();
    const tell = () => {
      const seconds = Math.round((Date.now() - started) / 1000);
      status.textContent = `Making ${what}… ${seconds} s`;
    };
    tell();
    const ticking = setInterval(tell, 1000);
    try {
      const answer = await fetch(link.href);
      if (!answer.ok) {
        const said = (await answer.text()).slice(0, 500);
        const wait = answer.headers.get("Retry-After");
        status.textContent = `${what} could not be made: ${said}${wait ? ` Try again in ${wait} s.` : ""}`;
        return;
      }
      const file = fileNameOf(answer) || new URL(link.href).pathname.split("/").pop();
      const url = URL.createObjectURL(await answer.blob());
      const save = document.createElement("a");
      save.href = url;
      save.download = file;
      save.hidden = true;
      this.append(save);
      save.click();
      save.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      status.textContent = `Downloaded ${file}.`;
    } catch {
      status.textContent = `${what} could not be downloaded: the connection failed. Try again.`;
    } finally {
      clearInterval(ticking);
      this.downloading = null;
    }
  }

  // Copy a field's text; where the clipboard is refused (an insecure page, say), select it
  // so that Ctrl+C does it.
  async copy(button) {
    const field = document.getElementById(button.dataset.copy);
    const status = button.parentElement.querySelector("[data-copy-status]");
    try {
      await navigator.clipboard.writeText(field.value);
      status.textContent = "Copied";
    } catch {
      field.focus();
      field.select();
      status.textContent = "Selected: press Ctrl+C to copy";
    }
    clearTimeout(status.timer);
    status.timer = setTimeout(() => {
      status.textContent = "";
    }, SAID_MS);
  }
}

// The file name an answer's Content-Disposition gives (filename="…"), or null.
function fileNameOf(answer) {
  const match = /filename="([^"]+)"/.exec(answer.headers.get("Content-Disposition") || "");
  return match ? match[1] : null;
}

customElements.define("grad-share", GradShare);
