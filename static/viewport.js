// The graph's zoom and pan as plain numbers: no DOM, so it is tested on its own.
//
// A viewport is {x, y, scale}: the drawing's point (x, y) (viewBox units) sits at the box's
// top-left corner, and one unit is `scale` CSS pixels. The SVG's viewBox is then
// [x, y, box.width / scale, box.height / scale], which fills the box exactly (no letterbox).
// Boxes are {width, height} in CSS pixels; rects are [x, y, width, height] in viewBox units.

export const MIN_LABEL_PX = 10; // no label drawn smaller unless the learner zooms out
export const MAX_FIT_SCALE = 2; // a tiny graph is not blown up past twice its size to "fit"
const MIN_SCALE = 0.02;
const MAX_SCALE = 8;

export function clampScale(scale) {
  return Math.min(MAX_SCALE, Math.max(MIN_SCALE, scale));
}

// The scale at which `rect` fits the box whole.
export function fitScale(box, rect) {
  const [, , width, height] = rect;
  if (!(width > 0 && height > 0)) return 1;
  return clampScale(Math.min(box.width / width, box.height / height));
}

// The scale a view opens at: the fit, unless that draws the smallest label (font size
// `smallestFont`, viewBox units) under MIN_LABEL_PX; then large enough for it.
export function initialScale(box, rect, smallestFont) {
  const fit = Math.min(fitScale(box, rect), MAX_FIT_SCALE);
  const readable = smallestFont > 0 ? MIN_LABEL_PX / smallestFont : 0;
  return clampScale(Math.max(fit, readable));
}

export function viewBoxOf(viewport, box) {
  const { x, y, scale } = viewport;
  return [x, y, box.width / scale, box.height / scale];
}

// `rect` centred in the box at `scale`.
export function centredOn(rect, box, scale) {
  const [x, y, width, height] = rect;
  return {
    x: x + width / 2 - box.width / scale / 2,
    y: y + height / 2 - box.height / scale / 2,
    scale,
  };
}

// Framing `rect` at `scale`: centred, except that a rect taller than the box shows its top
// (a graph is drawn top down, so where it starts).
export function framed(rect, box, scale) {
  const [, y, , height] = rect;
  const centred = centredOn(rect, box, scale);
  return { ...centred, y: height * scale <= box.height ? centred.y : y };
}

// Zoom by `factor` about the box point (px, py) (CSS pixels from its top-left): the drawing's
// point under it stays under it.
export function zoomedAt(viewport, factor, px, py) {
  const scale = clampScale(viewport.scale * factor);
  const ux = viewport.x + px / viewport.scale;
  const uy = viewport.y + py / viewport.scale;
  return { x: ux - px / scale, y: uy - py / scale, scale };
}

// Pan by (dx, dy) CSS pixels: the drawing moves with the pointer.
export function pannedBy(viewport, dx, dy) {
  return { ...viewport, x: viewport.x - dx / viewport.scale, y: viewport.y - dy / viewport.scale };
}

// Whether `rect` lies inside the visible part, `margin` CSS pixels in from its edges.
export function shows(viewport, box, rect, margin = 0) {
  const [vx, vy, vw, vh] = viewBoxOf(viewport, box);
  const m = margin / viewport.scale;
  const [x, y, width, height] = rect;
  return x >= vx + m && y >= vy + m && x + width <= vx + vw - m && y + height <= vy + vh - m;
}

// The least pan that brings `rect` into view (`margin` px in); centred on it when it cannot
// fit whole at this scale. Unchanged when it is already wholly in view, even near an edge: a
// pan for the margin alone would push a graph that fits off the other edge.
export function revealing(viewport, box, rect, margin = 24) {
  if (shows(viewport, box, rect, 0)) return viewport;
  const [vx, vy, vw, vh] = viewBoxOf(viewport, box);
  const m = margin / viewport.scale;
  const [x, y, width, height] = rect;
  const axis = (start, size, vStart, vSize) => {
    if (size + 2 * m > vSize) return start + size / 2 - vSize / 2;
    if (start < vStart + m) return start - m;
    if (start + size > vStart + vSize - m) return start + size + m - vSize;
    return vStart;
  };
  return { x: axis(x, width, vx, vw), y: axis(y, height, vy, vh), scale: viewport.scale };
}

// The box around several rects, or null for none.
export function union(rects) {
  if (!rects.length) return null;
  const x0 = Math.min(...rects.map((r) => r[0]));
  const y0 = Math.min(...rects.map((r) => r[1]));
  const x1 = Math.max(...rects.map((r) => r[0] + r[2]));
  const y1 = Math.max(...rects.map((r) => r[1] + r[3]));
  return [x0, y0, x1 - x0, y1 - y0];
}

// A point between two viewports, t in [0, 1] (for a smooth pan).
export function between(from, to, t) {
  const mix = (a, b) => a + (b - a) * t;
  return { x: mix(from.x, to.x), y: mix(from.y, to.y), scale: mix(from.scale, to.scale) };
}
