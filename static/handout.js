// The printed handout: when the page is about to print, the player gets a <section
// class="handout"> after it with one block per step of its range: "Step k of N · phase", a
// picture of the view shown at that step, the step's code and its narration. On screen the
// handout is never seen (player.css, "printing: a handout"); on paper it stands in for the live
// player's stage.
//
// Each picture is a copy of the live drawing, painted with the player's own fold and painter
// (static/fold.js, static/paint.js), so paper shows exactly what the player would. Its ids are
// removed: the page's must stay unique. Paper cannot be zoomed, so a picture shows the step's
// pass only if its labels print at 9 pt or more, and else a window at 9 pt on what the step is
// about: the server works those windows out by the exports' rule (app/render/page.py,
// `handout_windows`) and the page carries them. A run of many passes prints its first and its
// last step by step, and each pass between as one block.

import { foldView } from "./fold.js";
import { withCode } from "./inline-code.js";
import { elementsOf, paintElements } from "./paint.js";

// A handout of a long pass stops here: a few hundred pictures is what a page can build as it
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
  const plan = planOf(player.steps, first, last);
  for (const text of notesOf(plan, last - first + 1)) {
    const note = document.createElement("p");
    note.className = "handout-note";
    note.textContent = text;
    section.append(note);
  }
  const paper = paperOf(player.drawings[view]?.svg);
  for (const block of plan.blocks) {
    if (block.pass) section.append(passBlock(player, view, block, paper));
    else section.append(stepBlock(player, view, block.step, paper));
  }
  if (previous?.section.isConnected) previous.section.replaceWith(section);
  else player.after(section);
  built.set(player, { key, section });
  return section;
}

// What steps first..last print as: a block per step, except that a run of three passes or more
// prints its first pass and its last step by step and each pass between as one block (twenty
// passes of a training loop took 151 pages). At most HANDOUT_CAP step blocks: `cut` says so.
function planOf(steps, first, last) {
  const passes = new Map(); // generation → [its first step, its last step] in the range
  for (let k = first; k <= last; k++) {
    const g = steps[k].generation || 1;
    if (passes.has(g)) passes.get(g)[1] = k;
    else passes.set(g, [k, k]);
  }
  const generations = [...passes.keys()];
  const ends = [generations[0], generations[generations.length - 1]];
  const plan = { blocks: [], summarised: [], printed: 0, cut: false };
  for (const [g, [from, to]] of passes) {
    if (!ends.includes(g)) {
      plan.blocks.push({ pass: g, from, to });
      plan.summarised.push(g);
      continue;
    }
    const end = Math.min(to, from + HANDOUT_CAP - plan.printed - 1);
    for (let k = from; k <= end; k++) plan.blocks.push({ step: k });
    plan.printed += end - from + 1;
    if (end < to) {
      plan.cut = true;
      break;
    }
  }
  return plan;
}

// What the handout leaves out, said on paper.
function notesOf(plan, steps) {
  const notes = [];
  const [g0, g1] = [plan.summarised[0], plan.summarised.at(-1)];
  if (g0 !== undefined) {
    const passes = g0 === g1 ? `Pass ${g0} is` : `Passes ${g0} to ${g1} are`;
    notes.push(
      `${passes} summarised, a block each, pictured at its last step; the first pass and the ` +
        "last are printed step by step. The PDF export has every step.",
    );
  }
  if (plan.cut) {
    notes.push(
      `This handout shows the first ${plan.printed} of these ${steps} steps; ` +
        "the PDF export has every one.",
    );
  }
  return notes;
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
  block.append(narrationOf(step.text));
  return block;
}

// A pass between the first and the last: what it did, and its picture at its last step.
function passBlock(player, view, { pass, from, to }, paper) {
  const block = document.createElement("article");
  block.className = "handout-step handout-pass";
  const heading = document.createElement("h3");
  heading.textContent =
    `Pass ${pass} of ${player.data.generations} · ` +
    `steps ${from + 1} to ${to + 1} of ${player.steps.length}, summarised`;
  block.append(heading);
  const picture = paper && pictureAt(player, view, to, paper);
  if (picture) block.append(picture);
  block.append(narrationOf(summaryOf(player.steps, pass, from, to)));
  return block;
}

function narrationOf(text) {
  const narration = document.createElement("p");
  narration.className = "handout-narration";
  narration.append(...withCode(text));
  return narration;
}

// A pass in one sentence: the player's own words for a pass it condensed (a loop of thousands
// of steps), else what the pass's steps did, counted.
function summaryOf(steps, pass, from, to) {
  if (from === to && steps[from].kind === "pass") return steps[from].text;
  const counts = {};
  for (let k = from; k <= to; k++) counts[steps[k].kind] = (counts[steps[k].kind] ?? 0) + 1;
  const some = (n, one, many) => (n === 1 ? `1 ${one}` : `${n} ${many}`);
  const parts = [];
  if (counts.op) parts.push(`${some(counts.op, "operation", "operations")} recorded`);
  if (counts.inplace) parts.push(some(counts.inplace, "in-place update", "in-place updates"));
  if (counts.node_backward) {
    parts.push(`backward() through ${some(counts.node_backward, "node", "nodes")}`);
  }
  if (counts.accumulate) {
    parts.push(`${some(counts.accumulate, "gradient", "gradients")} accumulated into .grad`);
  }
  const did = parts.length ? `: ${parts.join(", ")}` : "";
  return `Pass ${pass} runs the loop body again, in ${to - from + 1} steps${did}.`;
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

// The view at step k, framed for paper; nothing when the view shows nothing yet. Only the
// elements it shows are copied (a long run's drawing holds every pass: the rest would be
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
  const framed = player.data.views[view]?.paper?.[k] ?? player.frameOf(view, player.pass(k));
  svg.setAttribute("viewBox", framed.join(" "));
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
