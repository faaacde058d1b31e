// Painting the fold's state (static/fold.js) on a drawing's elements: shared by the live
// player, its side-by-side copy and the printed handout, so every picture of a step agrees.

import { STATE_CLASSES, elementClasses } from "./fold.js";

// The drawing's nodes and edges, each with its relabelled texts and their starting values
// (`data-start`, else the text drawn); `.byId` finds one by its id.
export function elementsOf(svg) {
  const elements = [...svg.querySelectorAll("g.node[id], g.edge[id]")].map((el) => ({
    id: el.id,
    el,
    texts: [...el.querySelectorAll("text.value, text.grad")].map((node) => ({
      node,
      slot: node.classList.contains("value") ? "values" : "grads",
      start: node.hasAttribute("data-start") ? node.getAttribute("data-start") : node.textContent,
    })),
  }));
  Object.defineProperty(elements, "byId", { value: new Map(elements.map((e) => [e.id, e])) });
  return elements;
}

// Paint the fold's state on elements: the state classes, and each text as of this step.
export function paintElements(elements, state, phase, { stepping = false, focusable = false }) {
  for (const { id, el, texts } of elements) {
    const classes = elementClasses(state, id, phase);
    const appearing = stepping && el.classList.contains("hidden") && state.visible.has(id);
    for (const name of STATE_CLASSES) el.classList.toggle(name, classes.includes(name));
    el.classList.toggle("appear", appearing); // fades in (CSS), only when stepping forward
    for (const { node, slot, start } of texts) {
      const text = state[slot].has(id) ? state[slot].get(id) : start;
      if (node.textContent !== text) node.textContent = text;
    }
    if (focusable && el.classList.contains("node")) {
      if (state.visible.has(id)) el.setAttribute("tabindex", "0");
      else el.removeAttribute("tabindex");
    }
  }
}

// The translation of the drawing's graph group (Graphviz puts everything in one), so element
// boxes can be given in viewBox units.
export function graphShift(svg) {
  const graph = svg.querySelector("g.graph");
  const matrix = graph?.transform?.baseVal?.consolidate()?.matrix;
  return matrix ? [matrix.e, matrix.f] : [0, 0];
}

export function rectOf(el, shift) {
  const b = el.getBBox();
  return [b.x + shift[0], b.y + shift[1], b.width, b.height];
}
