"""What a view shows at step k: the steps' changes folded up to k, and that as a still SVG.

This is the player's contract written in Python. The browser player does the same fold; exports
(PNG/PDF/GIF frames), the page's drawing (the last step, right without JavaScript) and the
tests use `still`:

- visible: every id revealed at or before k, minus every id hidden since;
- values and grads: for each id, the text the latest step at or before k gave it (the SVG
  holds the starting texts);
- marks: for each id, the mark ("freed", or "" for none) the latest step gave it;
- focus: step k's own focus, nothing older.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field

from app.render.layout import SVG
from app.render.visible import visible

STYLE = """
.hidden { visibility: hidden; }
.focus > ellipse, .focus > polygon, .focus > path { stroke: #D55E00; stroke-width: 2.5; }
.focus > text.grad, text.grad { font-weight: bold; }
.freed { opacity: 0.45; }
.error > ellipse, .error > polygon, .error > path { stroke: #D55E00; stroke-width: 3; }
"""


@dataclass
class State:
    visible: dict[str, None] = field(default_factory=dict)  # ordered, for determinism
    values: dict[str, str] = field(default_factory=dict)
    grads: dict[str, str] = field(default_factory=dict)
    marks: dict[str, str] = field(default_factory=dict)
    focus: list[str] = field(default_factory=list)


def state_at(steps: list[dict], view: str, k: int) -> State:
    """The state of `view` after steps 0..k."""
    state = State()
    for step in steps[: k + 1]:
        _apply(state, step[view])
    state.focus = list(steps[k][view].get("focus", ())) if steps else []
    return state


def states(steps: list[dict], view: str) -> Iterator[State]:
    """`state_at(steps, view, k)` for every k in turn, folded in one pass (each a copy)."""
    state = State()
    for step in steps:
        delta = step[view]
        _apply(state, delta)
        yield State(
            visible=dict(state.visible),
            values=dict(state.values),
            grads=dict(state.grads),
            marks=dict(state.marks),
            focus=list(delta.get("focus", ())),
        )


def shown_counts(steps: list[dict], view: str) -> list[int]:
    """How many elements `view` shows at each step (`len(state_at(steps, view, k).visible)`),
    folded in one pass without copying: what an export costs to draw (app/export/cost.py)."""
    state = State()
    counts = []
    for step in steps:
        _apply(state, step[view])
        counts.append(len(state.visible))
    return counts


def _apply(state: State, delta: dict) -> None:
    for i in delta.get("hide", ()):
        state.visible.pop(i, None)
    for i in delta.get("reveal", ()):
        state.visible[i] = None
    state.values.update(delta.get("values", {}))
    state.grads.update(delta.get("grads", {}))
    state.marks.update(delta.get("marks", {}))


def element_classes(state: State, gid: str, phase: str) -> list[str]:
    """The classes a node or edge takes at a step, after the ones it is drawn with: hidden, its
    mark, and focus (error, on an error step). static/fold.js's elementClasses is the same."""
    classes = []
    if gid not in state.visible:
        classes.append("hidden")
    if state.marks.get(gid):
        classes.append(state.marks[gid])
    if gid in state.focus:
        classes.append("error" if phase == "error" else "focus")
    return classes


def frames(
    steps: list[dict],
    view: str,
    boxes: dict[str, tuple],
    size: tuple[float, float],
    pad: float = 8.0,
) -> list:
    """For each forward pass, the box [x, y, width, height] (viewBox units) around everything
    the view shows during it, or None, so a player can frame the pass being played."""
    visible: dict[str, None] = {}
    seen: dict[int, set[str]] = {}
    for step in steps:
        delta = step[view]
        gen = step["generation"]
        for i in delta.get("hide", ()):
            visible.pop(i, None)
        if gen not in seen:
            seen[gen] = set(visible)
        for i in delta.get("reveal", ()):
            visible[i] = None
            seen[gen].add(i)
    out: list = []
    for gen in range(1, max(seen, default=0) + 1):
        shown = [boxes[i] for i in seen.get(gen, ()) if i in boxes]
        if not shown:
            out.append(None)
            continue
        x0 = max(min(b[0] for b in shown) - pad, 0.0)
        y0 = max(min(b[1] for b in shown) - pad, 0.0)
        x1 = min(max(b[2] for b in shown) + pad, size[0])
        y1 = min(max(b[3] for b in shown) + pad, size[1])
        out.append([round(x0, 2), round(y0, 2), round(x1 - x0, 2), round(y1 - y0, 2)])
    return out


def still(rendered: dict, view: str, k: int, *, standalone: bool = True) -> str:
    """The SVG of `view` as it looks at step k. Standalone, it carries its own styles (exports).
    Inside a page (whose stylesheet has the same rules, and whose CSP refuses inline styles) it
    does not; it is then the page's only drawing of the view, which the player folds back to any
    step, so each text the state changed keeps its starting value in `data-start`."""
    root = ET.fromstring(rendered["views"][view]["svg"])
    return still_of(root, rendered["steps"], view, k, standalone=standalone)


def still_of(root: ET.Element, steps: list[dict], view: str, k: int, *, standalone: bool) -> str:
    """`still`, of a view's drawing as elements (layout.Drawing.tree), which it changes: what
    a page does with a drawing it has just made and will not read again."""
    state = state_at(steps, view, k)
    phase = steps[k]["phase"] if steps else "forward"
    ns = f"{{{SVG}}}"
    if standalone:
        style = ET.Element(f"{ns}style")
        style.text = STYLE
        root.insert(0, style)
    for group in root.iter(f"{ns}g"):
        gid = group.get("id")
        classes = (group.get("class") or "").split()
        if gid is None or not ({"node", "edge"} & set(classes)):
            continue
        group.set("class", " ".join(classes + element_classes(state, gid, phase)))
        for text in group.findall(f"{ns}text"):
            slot = text.get("class")
            texts = state.values if slot == "value" else state.grads if slot == "grad" else {}
            # a value or a gradient names what the snippet named (∂b/∂x): visible, as labels
            if gid in texts and (shown := visible(texts[gid])) != (text.text or ""):
                if not standalone:
                    text.set("data-start", text.text or "")
                text.text = shown
    return ET.tostring(root, encoding="unicode")


# ***** a step on paper *****
# A printed page or a slide cannot be zoomed. A long loop's pass is thousands of points across,
# and fitting it whole drew its labels at 1 pt; so a picture shows the step's whole pass when
# that is legible at the paper's size, and else a window of the paper's shape, as close as
# MIN_LABEL_PT allows, on what the step is about. The exports frame their slides with it, and
# the page carries the printed handout's windows (page.py), which static/handout.js reads.

MIN_LABEL_PT = 9.0  # no label smaller on paper
# A printed handout picture's room on an A4 page, in points: the text width (21 cm less
# player.css's 1.5 cm margins) by 8 cm (player.css, "printing: a handout"), 510.2 by 226.8,
# less a little for Chromium's print, which lays it out a fraction of a pixel smaller.
HANDOUT_PAPER = (508.0, 226.0)


def spots(steps: list[dict], view: str, boxes: dict[str, tuple]) -> list[list[float] | None]:
    """For each step, the box [x, y, width, height] around what it is about: its focused nodes,
    else the nodes it reveals, else the nodes its pass revealed last; None if none."""
    out: list[list[float] | None] = []
    newest: list[str] = []
    generation = None
    for step in steps:
        delta = step[view]
        if step["generation"] != generation:
            generation, newest = step["generation"], []
        revealed = [i for i in delta.get("reveal", ()) if i in boxes]
        newest = revealed or newest
        focused = [i for i in delta.get("focus", ()) if i in boxes]
        out.append(_around([boxes[i] for i in focused or revealed or newest]))
    return out


def _around(shown: list[tuple]) -> list[float] | None:
    if not shown:
        return None
    x0, y0 = min(b[0] for b in shown), min(b[1] for b in shown)
    x1, y1 = max(b[2] for b in shown), max(b[3] for b in shown)
    return [x0, y0, x1 - x0, y1 - y0]


def paper_window(
    frame: list[float], spot: list[float] | None, font: float, paper: tuple[float, float]
) -> list[float]:
    """What a picture `paper` points large (width, height) shows of the drawing: `frame` (the
    step's pass), if its smallest label (`font`) comes out at MIN_LABEL_PT or more when fitted;
    else a window of the paper's shape at that zoom, centred on `spot` (else the frame's
    middle), and moved back inside the frame along each side it fits in."""
    x, y, width, height = frame
    fit = min(paper[0] / width, paper[1] / height)
    if font <= 0 or fit * font >= MIN_LABEL_PT:
        return list(frame)
    scale = MIN_LABEL_PT / font
    w, h = paper[0] / scale, paper[1] / scale
    cx, cy = (
        (spot[0] + spot[2] / 2, spot[1] + spot[3] / 2) if spot else (x + width / 2, y + height / 2)
    )

    def along(centre: float, size: float, start: float, extent: float) -> float:
        if size >= extent:  # wider than the frame: the frame in its middle
            return start + (extent - size) / 2
        return min(max(centre - size / 2, start), start + extent - size)

    return [round(v, 2) for v in (along(cx, w, x, width), along(cy, h, y, height), w, h)]


def paper_windows(rendered: dict, view: str, paper: tuple[float, float]) -> list[list[float]]:
    """`paper_window` for every step of `view`: its pass's frame (or the whole drawing), what
    the step is about, the drawing's smallest label (as the layout drew them)."""
    meta = rendered["views"][view]
    steps = rendered["steps"]
    whole = [0.0, 0.0, meta["width"], meta["height"]]
    passes = meta.get("frames") or []
    font = meta["smallest_font"]
    out = []
    for step, spot in zip(steps, spots(steps, view, meta["node_boxes"]), strict=True):
        g = step["generation"]
        frame = (passes[g - 1] if 0 < g <= len(passes) else None) or whole
        out.append(paper_window(frame, spot, font, paper))
    return out
