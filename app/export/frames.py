"""A step as a picture to keep: the view as the player shows it at that step, and the step's
narration as a caption beneath it. Every image export (PNG, PDF page, GIF frame, SVG) is one
of these, drawn by Cairo or handed out as it is.

The drawing is `playback.still`: the page's own SVG folded to the step, so a frame is the live
player's step, not another drawing of it. Every frame is a 16:9 slide, so a GIF does not jump,
a PDF's pages match and either fills a slide as it is. Each shows the forward pass its step
belongs to (a loop draws each pass beside the last, nothing moving), whole when its labels come
out at 9 pt or more; a pass too big for that is shown through a window at 9 pt on what the step
is about (`playback.paper_window`, the printed handout's rule too).
"""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass

from app.export.options import StepRange
from app.render.layout import SVG
from app.render.playback import paper_windows, still
from app.render.visible import visible

# A frame is a slide of PowerPoint's 16:9 size (13.33 × 7.5 in), in points: a label at 9 pt
# is 1/107 of the slide's width, on any screen it is projected on
SLIDE = (960.0, 540.0)
MAX_SCALE = 2.0  # a tiny graph is drawn at most twice its size, as the player opens it
PAD = 14.0  # around the drawing and the caption, in points
CAPTION_SIZE = 12.0
LINE_HEIGHT = 16.0
# Helvetica's average advance is about half its size; code is monospace at 0.6: the wrap aims
# for lines that fit, and the caption box is measured in the same units
SANS_ADVANCE = 0.52
MONO_ADVANCE = 0.6
FONT = "Helvetica,Arial,Liberation Sans,DejaVu Sans,sans-serif"
MONO = "DejaVu Sans Mono,Liberation Mono,monospace"

THEMES = {
    "light": {"background": "#ffffff", "ink": "#1a1a1a", "muted": "#555555", "style": ""},
    # node fills stay light with dark text; what is drawn on the background itself turns light
    "dark": {
        "background": "#16181d",
        "ink": "#eeeeee",
        "muted": "#b8b8b8",
        "style": """
.edge > path { stroke: #9cc8f0; }
.edge > polygon { fill: #9cc8f0; stroke: #9cc8f0; }
.edge > text, .edge > text.grad { fill: #ffb27a; }
""",
    },
}


@dataclass(frozen=True)
class Frame:
    index: int  # the renderer's step index (0-based)
    svg: str  # standalone: its own styles, no external reference
    width: float  # points, as in its viewBox
    height: float


def frames(rendered: dict, view: str, steps: StepRange, theme: str = "light") -> Iterator[Frame]:
    """The frames of `steps` (one per step, in order) of `view`, in `theme`."""
    all_steps = rendered["steps"]
    width = SLIDE[0]
    captions = [_caption_lines(all_steps[k], steps, width - 2 * PAD) for k in steps.indices]
    caption_height = max(len(lines) for lines in captions) * LINE_HEIGHT
    # the drawing has what the captions leave of the slide; a caption too long to leave it
    # half makes the frames taller instead
    graph_height = max(SLIDE[1] - 3 * PAD - caption_height, SLIDE[1] / 2)
    height = PAD + graph_height + PAD + caption_height + PAD
    area = (width - 2 * PAD, graph_height)
    windows = paper_windows(rendered, view, area)
    colours = THEMES[theme]
    for k, lines in zip(steps.indices, captions, strict=True):
        box = windows[k]
        scale = min(area[0] / box[2], area[1] / box[3], MAX_SCALE)
        root = ET.Element(
            f"{{{SVG}}}svg",
            {
                "width": f"{width:g}pt",
                "height": f"{height:g}pt",
                "viewBox": f"0 0 {width:g} {height:g}",
            },
        )
        ET.SubElement(
            root,
            f"{{{SVG}}}rect",
            {"width": "100%", "height": "100%", "fill": colours["background"]},
        )
        drawing = _without_hidden(ET.fromstring(still(rendered, view, k)))
        if colours["style"]:
            style = drawing.find(f"{{{SVG}}}style")
            style.text = (style.text or "") + colours["style"]
        x = (width - box[2] * scale) / 2
        y = PAD + (graph_height - box[3] * scale) / 2
        drawing.attrib.update(
            {
                "x": f"{x:.2f}",
                "y": f"{y:.2f}",
                "width": f"{box[2] * scale:.2f}",
                "height": f"{box[3] * scale:.2f}",
                "viewBox": " ".join(f"{v:g}" for v in box),
            }
        )
        root.append(drawing)
        _write_caption(root, lines, PAD, PAD + graph_height + PAD, colours)
        yield Frame(k, ET.tostring(root, encoding="unicode"), width, height)


def _without_hidden(drawing: ET.Element) -> ET.Element:
    """The drawing less its hidden nodes and edges: a loop's drawing holds every pass, and Cairo
    took half a second a frame walking mlp-training's (437 KB) to draw one pass of it."""
    hidden = [
        (group, child)
        for group in drawing.iter(f"{{{SVG}}}g")
        for child in group
        if "hidden" in (classes := (child.get("class") or "").split())
        and {"node", "edge"} & set(classes)
    ]
    for group, child in hidden:
        group.remove(child)
    return drawing


def _caption_lines(step: dict, steps: StepRange, width: float) -> list[list[tuple[str, bool]]]:
    """The heading ("Step 3 of 11 · forward") and the narration, wrapped to `width` points,
    as lines of (text, is_code) runs: the narration's `quoted` parts are code. It quotes what
    the snippet printed and raised, so it is made visible first, and wrapped as it is drawn."""
    heading = [(f"Step {step['index'] + 1} of {steps.total} · {step['phase']}", False)]
    columns = max(20, int(width / (CAPTION_SIZE * SANS_ADVANCE)))
    runs = _runs(visible(step["text"]))
    # wrap the plain text, then cut it back into runs; code keeps its backticks' boundaries
    flat = "".join(" " if char.isspace() else char for text, _ in runs for char in text)
    code_at = [is_code for text, is_code in runs for _ in text]
    lines = []
    position = 0
    for line in textwrap.wrap(flat, columns, break_long_words=True, break_on_hyphens=False):
        start = flat.index(line, position)
        position = start + len(line)
        lines.append(_cut(line, code_at[start:position]))
    return [heading, *lines]


def _runs(text: str) -> list[tuple[str, bool]]:
    parts = text.split("`")
    if len(parts) % 2 == 0:  # unbalanced backticks: shown as they are (as the player does)
        return [(text, False)]
    return [(part, i % 2 == 1) for i, part in enumerate(parts) if part]


def _cut(line: str, code_at: list[bool]) -> list[tuple[str, bool]]:
    runs: list[tuple[str, bool]] = []
    for char, is_code in zip(line, code_at, strict=True):
        if runs and runs[-1][1] == is_code:
            runs[-1] = (runs[-1][0] + char, is_code)
        else:
            runs.append((char, is_code))
    return runs


def _write_caption(root: ET.Element, lines: list, x: float, top: float, colours: dict) -> None:
    for number, runs in enumerate(lines):
        text = ET.SubElement(
            root,
            f"{{{SVG}}}text",
            {
                "x": f"{x:g}",
                "y": f"{top + (number + 0.8) * LINE_HEIGHT:g}",
                "font-family": FONT,
                "font-size": f"{CAPTION_SIZE:g}",
                "fill": colours["muted"] if number == 0 else colours["ink"],
                "{http://www.w3.org/XML/1998/namespace}space": "preserve",
            },
        )
        if number == 0:
            text.set("font-weight", "bold")
        for run, is_code in runs:
            span = ET.SubElement(text, f"{{{SVG}}}tspan")
            span.text = run
            if is_code:
                span.set("font-family", MONO)
