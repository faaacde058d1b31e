// The printed handout: when the page is about to print, the player gets a <section
// class="handout"> after it with one block per step of its range: "Step k of N · phase", a
// picture of the view shown at that step, the step's code and its narration. On screen the
// handout is never seen (player.css, "printing: a handout"); on paper it stands in for the live
// player's stage.
//
// Each picture is a copy of the live drawing, painted with the player's own fold and painter
// (static/fold.js, static/paint.js), so paper shows exactly what the player would. Its ids are
// removed: the page's must stay unique.

import { foldView } from "./fold.js";
import { withCode } from "./inline-code.js";
import { elementsOf, paintElements } from "./paint.js";

// A handout of a long run stops here: a few hundred pictures is what a page can build as it
// prints without a visible wait (docs/render.md, "Printing a handout").
export const HANDOUT_CAP = 300;
const ELEMENTS = "g.node[id], g.edge[id]"; // the drawing's parts a step changes
const CODE_LINES = 4; // of a step's span; a longer statement is cut with "⋮"

const built = new WeakMap(); // player → {key, section}: built once, reused by every print

// Build the handout before the page prints. Ctrl+P fires `beforeprint`; an emulated print
// medium only changes matchMedia("print"); whichever comes first builds it, the other reuses it.
export function prepareHandout(player) {
  const print = window.matchMedia("print");
  const onPrint = () => {
    if (player.isConnected) {
      buildHandout(player);
      return;
    }
    // the player left the page (a new run replaced it): so does its handout
    window.removeEventListener("beforeprint", onPrint);
    print.removeEventListener("change", onMedia);
  };
  const onMedia = (event) => {
    if (event.matches) onPrint();
  };
  window.addEventListener("beforeprint", onPrint);
  print.addEventListener("change", onMedia);
}

// The handout for the view shown and the player's range of steps (data-from, data-to; all of
// them if it has none). A lesson's limit is not applied: paper is read at its own pace, and the
// answers are a page away (the answer key). Built again only if the view or the range changed.
export function buildHandout(player) {
  const view = player.view;
  const [first, last] = player.range ?? [0, player.steps.length - 1];
  const key = `${view}:${first}-${last}`;
  const previous = built.get(player);
  if (previous?.key === key && previous.section.isConnected) return previous.section;
  const section = document.createElement("section");
  section.className = "handout";
  section.setAttribute("aria-label", "Handout: every step");
  const heading = document.createElement("h2");
  heading.textContent = "Step by step";
  section.append(heading);
  const end = Math.min(last, first + HANDOUT_CAP - 1);
  if (end < last) {
    const note = document.createElement("p");
    note.className = "handout-note";
    note.textContent =
      `This handout shows the first ${HANDOUT_CAP} of these ${last - first + 1} steps; ` +
      "the PDF export has every one.";
    section.append(note);
  }
  const paper = paperOf(player.drawings[view]?.svg);
  for (let k = first; k <= end; k++) section.append(stepBlock(player, view, k, paper));
  if (previous?.section.isConnected) previous.section.replaceWith(section);
  else player.after(section);
  built.set(player, { key, section });
  return section;
}

function stepBlock(player, view, k, paper) {
  const step = player.steps[k];
  const block = document.createElement("article");
  block.className = "handout-step";
  const heading = document.createElement("h3");
  heading.textContent = `Step ${k + 1} of ${player.steps.length} · ${step.phase}`;
  block.append(heading);
  const picture = paper && pictureAt(player, view, k, paper);
  if (picture) block.append(picture);
  if (step.span) block.append(codeOf(player, step.span));
  const narration = document.createElement("p");
  narration.className = "handout-narration";
  narration.append(...withCode(step.text));
  block.append(narration);
  return block;
}

// The live drawing made ready for paper, once: a shell (the SVG without its nodes and edges,
// no keyboard stops, one image to assistive technology) and the nodes and edges in drawing
// order. Graphviz puts them all in its one graph group.
function paperOf(svg) {
  if (!svg) return null;
  const shell = svg.cloneNode(true);
  for (const el of shell.querySelectorAll(ELEMENTS)) el.remove();
  for (const el of shell.querySelectorAll("[id], [tabindex], [role]")) {
    for (const name of ["id", "tabindex", "role"]) el.removeAttribute(name);
  }
  shell.setAttribute("role", "img");
  return { shell, elements: [...svg.querySelectorAll(ELEMENTS)] };
}

// The view at step k, framed on the step's pass; nothing when the view shows nothing yet. Only
// the elements it shows are copied (a long run's drawing holds every pass: the rest would be
// hundreds of hidden copies on every page). Each keeps its drawing's id as `data-id`.
function pictureAt(player, view, k, paper) {
  const state = foldView(player.steps, view, k, player.checkpoints);
  if (!state.visible.size) return null;
  const svg = paper.shell.cloneNode(true);
  const graph = svg.querySelector("g.graph") ?? svg;
  for (const el of paper.elements) {
    if (state.visible.has(el.id)) graph.append(el.cloneNode(true));
  }
  const elements = elementsOf(svg); // read by id, before the ids go
  for (const { el } of elements) {
    el.dataset.id = el.id;
    for (const name of ["id", "tabindex", "role"]) el.removeAttribute(name);
  }
  paintElements(elements, state, player.steps[k].phase, {});
  svg.setAttribute("viewBox", player.frameOf(view, player.pass(k)).join(" "));
  svg.setAttribute("aria-label", `The ${view} graph at step ${k + 1}`);
  return svg;
}

// The lines of the step's span, the span itself marked, as the player's code pane marks it.
function codeOf(player, span) {
  const [line, col, endLine, endCol] = span;
  const pre = document.createElement("pre");
  pre.className = "handout-code";
  const shown = Math.min(endLine, line + CODE_LINES - 1);
  for (let n = line; n <= shown; n++) {
    const text = player.querySelector(`[data-line="${n}"]`)?.textContent ?? "";
    const number = document.createElement("span");
    number.className = "line-number";
    number.textContent = String(n);
    const mark = document.createElement("mark");
    const start = n === line ? col : 0;
    const end = n === endLine ? endCol : text.length;
    mark.textContent = text.slice(start, end);
    pre.append(number, " ", text.slice(0, start), mark, text.slice(end), "\n");
  }
  if (shown < endLine) pre.append("⋮\n");
  return pre;
}
