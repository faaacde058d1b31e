"""From a trace to what the player shows: two drawn views and a list of narrated steps.

`render(trace)` is a pure function of the trace (docs/trace-format.md): the same trace gives
the same output, byte for byte. Its shape is documented in docs/render.md. In short:

    {"version": 1,
     "views": {"tensors": {"svg", "width", "height", "nodes", "ids", "frames", "notice"},
               "autograd": {...}},
     "steps": [{"index", "seq", "kind", "phase", "generation", "span", "text", ["error"],
                "tensors": {reveal, hide, focus, values, grads, marks},
                "autograd": {...}}, ...],
     "groups": {"g1": {"view", "members", "expanded"}},
     "notices": [...],
     "generations": 3}

Modules, one concept each: `graph` (the two graphs), `stacks` (big graphs stacked),
`layout` (Graphviz and the SVG), `steps` (events → steps), `narration` and `ops` (the words),
`explain` (errors and limits), `values` (numbers as text), `grads` (what `.grad` holds
when), `inspector` (facts for the node inspector), `playback` (a step's still frame).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from app.render import graph, layout, modules, playback, stacks, steps
from app.render.steps import VIEWS

RENDER_VERSION = 1

# Plain text, as every notice: the page escapes it and shows no markup.
UNSEEDED_NOTICE = (
    "This run drew random numbers without torch.manual_seed (a new layer's weights are random "
    "too): gradtrace starts torch's generator from seed 0, so this snippet gives these numbers "
    "every time, where PyTorch gives different ones on each run. Add torch.manual_seed(0) at the "
    "top to get these same numbers from PyTorch."
)


def render(trace: dict, *, expand: Iterable[str] = ()) -> dict:
    """Both views of a trace, drawn, and its steps. `expand` names stacks (g1, g2, …) of a big
    graph to draw member by member."""
    with no_gc():
        prepared = prepare(trace, expand)
        return assemble(prepared, {name: draw_view(prepared, name) for name in VIEWS})


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Rendering makes many small objects and no garbage cycles worth chasing; the collector's
    passes over a big trace would otherwise take a third of the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class Prepared:
    """Everything `render` works out before Graphviz: the graphs as drawn (boxed, stacked) and
    the finished steps. Each view is then drawn from it alone (`draw_view`), so the views may
    be drawn apart (app/render/page.py draws a big one in a process of its own)."""

    trace: dict
    wanted: frozenset[str]
    scene: graph.Scene
    boxed: dict[str, modules.Boxed]
    stacked: dict[str, stacks.Stacked]
    steps: list[dict]


def prepare(trace: dict, expand: Iterable[str] = ()) -> Prepared:
    wanted = frozenset(expand)
    scene = graph.build(trace)
    raw = steps.build(scene)
    calls = trace.get("modules", [])
    boxed = {name: modules.box(scene.view(name), calls, wanted) for name in VIEWS}
    tensors = stacks.stack(boxed["tensors"].graph, first=1, expand=wanted)
    autograd = stacks.stack(boxed["autograd"].graph, first=1 + len(tensors.groups), expand=wanted)
    stacked = {"tensors": tensors, "autograd": autograd}
    final = steps.finish(
        raw,
        {name: _then(boxed[name].rename, stacked[name].rename) for name in VIEWS},
        {name: _inside_boxes(boxed[name]) for name in VIEWS},
    )
    return Prepared(trace, wanted, scene, boxed, stacked, final)


def draw_view(prepared: Prepared, name: str, *, written: bool = True) -> dict:
    """One view laid out and drawn: `render`'s `views[name]`. Not `written`, its drawing is
    left as elements (`tree`, in place of `svg`) for a caller that changes it before writing
    it out (app/render/page.py: the page's still)."""
    result = prepared.stacked[name]
    drawing = layout.draw(result.graph, _widest(prepared.steps, name))
    return {
        **({"svg": drawing.svg} if written else {"tree": drawing.tree}),
        "width": drawing.width,
        "height": drawing.height,
        "nodes": len(result.graph.elements),
        "ids": drawing.ids,
        "node_boxes": drawing.boxes,  # id → x0, y0, x1, y1: where the layout put each node
        "smallest_font": drawing.smallest_font,
        "frames": playback.frames(
            prepared.steps, name, drawing.boxes, (drawing.width, drawing.height)
        ),
        "notice": result.notice or _empty_notice(name, result.graph),
    }


def view_size(prepared: Prepared, name: str) -> int:
    """How much a view has to draw (its nodes and edges): what its layout's time grows with."""
    drawn = prepared.stacked[name].graph
    return len(drawn.elements) + len(drawn.edges)


def assemble(prepared: Prepared, views: dict[str, dict]) -> dict:
    """`render`'s answer, from what was prepared and each view as `draw_view` drew it."""
    groups, notices = {}, []
    for name, result in prepared.stacked.items():
        for gid, members in result.groups.items():
            groups[gid] = {"view": name, "members": members, "expanded": gid in prepared.wanted}
        if result.notice:
            notices.append(result.notice)
    trace = prepared.trace
    if trace.get("unseeded_random"):  # traces stored before the key have no say
        notices.append(UNSEEDED_NOTICE)
    boxed = prepared.boxed
    return {
        "version": RENDER_VERSION,
        "views": {name: views[name] for name in prepared.stacked},
        "steps": prepared.steps,
        "groups": groups,
        "boxes": {bid: about for b in boxed.values() for bid, about in b.boxes.items()},
        "modules": _modules(trace.get("modules", []), boxed, prepared.wanted),
        "notices": notices,
        "generations": max(prepared.scene.gens, default=1),
    }


def _then(first: dict[str, str], second: dict[str, str]) -> dict[str, str]:
    """One renaming that does `first`, then `second`."""
    if not first:
        return second
    return {**{k: second.get(v, v) for k, v in first.items()}, **second}


def _inside_boxes(boxed: modules.Boxed) -> set[str]:
    """The ids drawn as a module box: their values and grads are not the box's."""
    return {k for k, v in boxed.rename.items() if v in boxed.boxes}


def _modules(calls: list[dict], boxed: dict, wanted: frozenset[str]) -> dict[str, dict]:
    """The modules a page can open or close: those drawn as boxes, and those opened."""
    shown = set().union(*(b.used for b in boxed.values())) | wanted
    found: dict[str, dict] = {}
    for call in calls:
        token = call["module"]
        if token in shown and token not in found:
            found[token] = {
                "name": call["name"],
                "type": call["type"],
                "opened": token in wanted,
            }
    return found


def narrate(trace: dict) -> list[str]:
    """Only the steps' texts, in order: what lessons, quizzes and golden tests need, without
    drawing anything (so without Graphviz)."""
    return [step["text"] for step in steps.build(graph.build(trace))]


def _empty_notice(view: str, drawn: graph.Graph) -> str | None:
    if drawn.elements:
        return None
    if view == "autograd":
        return (
            "No graph was recorded: no operation had an input that requires grad while grad "
            "mode was on."
        )
    return "The snippet made no tensors."


def _widest(final: list[dict], view: str) -> dict[str, dict[str, str]]:
    """The longest value and grad text each element of a view will show."""
    texts: dict[str, dict[str, str]] = {}
    for step in final:
        delta = step[view]
        for slot in ("values", "grads"):
            key = slot[:-1]
            for element, text in delta.get(slot, {}).items():
                held = texts.setdefault(element, {})
                if len(text) > len(held.get(key, "")):
                    held[key] = text
    return texts


__all__ = ["RENDER_VERSION", "assemble", "draw_view", "narrate", "prepare", "render", "view_size"]
