// The snippet editor: CodeMirror 6 over the form's textarea. The textarea stays the form's
// field (kept in sync, so the form still posts `code`) and is the editor without JavaScript.
// CodeMirror is fetched the first time the editor is open: a trace page, where it starts
// folded, does not load it unless the learner asks to edit.
const CODEMIRROR = new URL("./vendor/codemirror-6.43.15.min.js", import.meta.url).href;
const MAC = /Mac|iPhone|iPad/.test(navigator.userAgentData?.platform ?? navigator.platform);

/** Runs the form as its Run button would (htmx hears the submit event). */
function run(form) {
  if (!form.querySelector("button[type=submit]").disabled) form.requestSubmit();
}

function theme(cm) {
  // Colours come from style.css's :root variables, which reach into the shadow root, so the
  // editor follows the light and dark schemes with the page.
  const highlight = cm.HighlightStyle.define([
    { tag: [cm.tags.keyword, cm.tags.controlKeyword, cm.tags.definitionKeyword], color: "var(--code-keyword)" },
    { tag: [cm.tags.string, cm.tags.special(cm.tags.string)], color: "var(--code-string)" },
    { tag: [cm.tags.number, cm.tags.bool, cm.tags.null], color: "var(--code-number)" },
    { tag: cm.tags.comment, color: "var(--code-comment)", fontStyle: "italic" },
    { tag: [cm.tags.function(cm.tags.variableName), cm.tags.function(cm.tags.propertyName)], color: "var(--code-call)" },
    { tag: [cm.tags.definition(cm.tags.variableName), cm.tags.className], color: "var(--code-definition)" },
  ]);
  const look = cm.EditorView.theme({
    "&": {
      color: "var(--ink)", background: "var(--code-paper)", border: "1px solid var(--line)",
      borderRadius: ".3rem", font: "14px/1.45 ui-monospace, monospace",
    },
    "&.cm-focused": { outline: "2px solid var(--accent)", outlineOffset: "1px" },
    ".cm-scroller": { fontFamily: "inherit", minHeight: "12rem", maxHeight: "min(60vh, 32rem)" },
    ".cm-content": { caretColor: "var(--ink)" },
    ".cm-cursor": { borderLeftColor: "var(--ink)" },
    ".cm-step-line": { background: "var(--step-paper)" },
    ".cm-step-mark": { background: "var(--mark)", outline: "1px solid #c9a227", outlineOffset: "1px" },
    ".cm-problem-line": { background: "var(--problem-paper)", boxShadow: "inset 3px 0 var(--warn)" },
    ".cm-problem-note": {
      color: "var(--warn)", background: "var(--problem-paper)", font: "13px/1.4 system-ui, sans-serif",
      padding: ".1rem .5rem .2rem 1rem", whiteSpace: "pre-wrap",
    },
    ".cm-gutters": { background: "var(--code-paper)", color: "var(--muted)", borderRight: "1px solid var(--line)" },
    "&.cm-focused .cm-selectionBackground, ::selection": { background: "var(--selection)" },
  });
  return [look, cm.syntaxHighlighting(highlight)];
}

/** Typing over a selection, done by CodeMirror rather than the browser: Chromium's own edit,
 * merging the selected lines, writes style attributes into the editor, which the page's CSP
 * refuses (CodeMirror redraws the lines either way, but each refusal is a console error). */
function typeOverSelection(event, view) {
  const { selection } = view.state;
  if (event.inputType !== "insertText" || !event.data || view.composing) return false;
  if (selection.ranges.every((range) => range.empty)) return false;
  event.preventDefault();
  view.dispatch(view.state.replaceSelection(event.data), {
    scrollIntoView: true,
    userEvent: "input.type",
  });
  return true;
}

/** A run's problem marked at its line: the line decoration and a short note under it, set by a
 * `grad-mark-problem` event ({line, text}, 1-based line; null clears), which static/live.js
 * sends after each live run. Kept as the snippet is edited (mapped through the changes) until
 * the next run says otherwise. The note is aria-hidden: the live status region says it. */
function problemMarks(cm) {
  const mark = cm.StateEffect.define();
  class Note extends cm.WidgetType {
    constructor(text) {
      super();
      this.text = text;
    }
    eq(other) {
      return other.text === this.text;
    }
    toDOM() {
      const note = document.createElement("div");
      note.className = "cm-problem-note";
      note.setAttribute("aria-hidden", "true");
      note.textContent = this.text;
      return note;
    }
  }
  const marked = (state, { line, text }) => {
    const at = state.doc.line(Math.max(1, Math.min(line, state.doc.lines)));
    return cm.Decoration.set([
      cm.Decoration.line({ class: "cm-problem-line" }).range(at.from),
      cm.Decoration.widget({ widget: new Note(text), block: true, side: 1 }).range(at.to),
    ]);
  };
  const field = cm.StateField.define({
    create: () => cm.Decoration.none,
    update(marks, transaction) {
      for (const effect of transaction.effects) {
        if (effect.is(mark)) return effect.value ? marked(transaction.state, effect.value) : cm.Decoration.none;
      }
      if (!transaction.docChanged) return marks; // another field's effect (the step's mark)
      // an edit that joins the marked line to another leaves no line to mark: the next run says
      const mapped = marks.map(transaction.changes);
      let joined = false;
      mapped.between(0, transaction.state.doc.length, (from) => {
        if (transaction.state.doc.lineAt(from).from !== from) joined = true;
      });
      return joined ? cm.Decoration.none : mapped;
    },
    provide: (f) => cm.EditorView.decorations.from(f),
  });
  return { field, mark };
}

/** The player's step marked in the snippet, as the player's own code listing marks it: its
 * lines tinted and its span outlined, set by a `grad-mark-step` event ({span}: [line, column,
 * end line, end column], 1-based lines; null clears), which static/live.js sends for each step
 * shown while the editor is open beside the player. Edits move it with the text. */
function stepMarks(cm) {
  const mark = cm.StateEffect.define();
  const marked = (state, [line, column, endLine, endColumn]) => {
    const clamp = (n) => Math.max(1, Math.min(n, state.doc.lines));
    const first = state.doc.line(clamp(line));
    const last = state.doc.line(clamp(endLine));
    const ranges = [];
    for (let n = first.number; n <= last.number; n++) {
      ranges.push(cm.Decoration.line({ class: "cm-step-line" }).range(state.doc.line(n).from));
    }
    const from = first.from + Math.min(column, first.length);
    const to = last.from + Math.min(endColumn, last.length);
    if (to > from) ranges.push(cm.Decoration.mark({ class: "cm-step-mark" }).range(from, to));
    return cm.Decoration.set(ranges, true);
  };
  const field = cm.StateField.define({
    create: () => cm.Decoration.none,
    update(marks, transaction) {
      for (const effect of transaction.effects) {
        if (effect.is(mark)) return effect.value?.span ? marked(transaction.state, effect.value.span) : cm.Decoration.none;
      }
      return marks.map(transaction.changes);
    },
    provide: (f) => cm.EditorView.decorations.from(f),
  });
  return { field, mark };
}

async function mount(form, textarea, keys) {
  const cm = await import(CODEMIRROR);
  const label = form.querySelector(`label[for="${textarea.id}"]`);
  const host = document.createElement("div");
  host.className = "code-editor";
  // A shadow root, because there CodeMirror's styles go into a constructed stylesheet; in the
  // document it would add <style> elements, which the page's CSP (style-src 'self') refuses.
  const root = host.attachShadow({ mode: "open" });
  const problems = problemMarks(cm);
  const steps = stepMarks(cm);
  const view = new cm.EditorView({
    root,
    parent: root,
    state: cm.EditorState.create({
      doc: textarea.value,
      extensions: [
        cm.lineNumbers(),
        cm.history(),
        cm.pythonLanguage,
        cm.indentUnit.of("    "),
        // first, so that Mod-Enter runs rather than insert a blank line
        cm.keymap.of([{ key: "Mod-Enter", run: () => (run(form), true) }]),
        cm.keymap.of([...cm.defaultKeymap, ...cm.historyKeymap, cm.indentWithTab]),
        // the label's words, not its id: an id does not reach into a shadow root
        cm.EditorView.contentAttributes.of({
          "aria-label": label.textContent.trim(),
          "aria-description": keys.textContent.trim(),
          spellcheck: "false",
          autocapitalize: "off",
          // focusable as it is (contenteditable), but said outright, so that a checker sees
          // the scrolling box around a long snippet holds something the keyboard reaches
          tabindex: "0",
        }),
        cm.EditorView.domEventHandlers({ beforeinput: typeOverSelection }),
        cm.EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          textarea.value = update.state.doc.toString();
          // what the plain textarea would say as it is typed in: static/live.js listens
          textarea.dispatchEvent(new Event("input", { bubbles: true }));
        }),
        problems.field,
        steps.field,
        theme(cm),
      ],
    }),
  });
  const typing = document.activeElement === textarea;
  textarea.after(host);
  textarea.hidden = true;
  if (typing) {
    // the learner was already in the plain box: carry on where the cursor was
    view.dispatch({ selection: { anchor: Math.min(textarea.selectionStart, view.state.doc.length) } });
    view.focus();
  }
  // the label names the editor now; clicking it should still put the cursor in the snippet
  label.removeAttribute("for");
  label.addEventListener("click", () => view.focus());
  form.dataset.editor = "codemirror";
  // a snippet Python could not read: the cursor at the spot the problem names, now (a page
  // that came with the problem) and after each Run that brings one (static/run.js)
  const goTo = ({ line, column }) => {
    const at = view.state.doc.line(Math.max(1, Math.min(line, view.state.doc.lines)));
    view.dispatch({ selection: { anchor: at.from + Math.min(column, at.length) }, scrollIntoView: true });
    view.focus();
  };
  form.closest("details").addEventListener("grad-problem-at", (event) => goTo(event.detail));
  form.closest("details").addEventListener("grad-mark-problem", (event) => {
    view.dispatch({ effects: problems.mark.of(event.detail) });
  });
  form.closest("details").addEventListener("grad-mark-step", (event) => {
    view.dispatch({ effects: steps.mark.of(event.detail) });
  });
  form.closest("details").toggleAttribute("data-step-marks", true); // style.css: it marks steps
  form.closest("details").dispatchEvent(new Event("grad-editor-ready")); // static/live.js marks
  const pending = problemSpot();
  if (pending) goTo(pending);
}

/** The line and column (0-based) of the problem shown in the result, if it names one. */
export function problemSpot() {
  const problem = document.querySelector("#result [data-problem][data-line]");
  if (!problem) return null;
  return { line: Number(problem.dataset.line), column: Number(problem.dataset.column) || 0 };
}

function setUp(details) {
  const form = details.querySelector("[data-run-form]");
  const textarea = form.querySelector("textarea");
  const keys = form.querySelector("[data-run-keys]");
  if (MAC) keys.querySelector("kbd").textContent = "⌘";
  keys.hidden = false;
  // the plain textarea runs on Ctrl/Cmd+Enter too, until (or if never) CodeMirror takes over
  textarea.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      run(form);
    }
  });
  let mounting = null;
  const mountOnceOpen = () => {
    if (details.open && !mounting) {
      mounting = mount(form, textarea, keys).catch((error) => {
        // the textarea still works: say why the richer editor is missing, and carry on
        console.warn("The code editor could not load; the plain text box stays.", error);
      });
    }
  };
  details.addEventListener("toggle", mountOnceOpen);
  mountOnceOpen();
}

const details = document.querySelector("[data-editor]");
if (details) setUp(details);
