"""Drawing a graph with Graphviz (pygraphviz, in-process) and making its SVG ours.

Graphviz lays the graph out once, with every element it will ever show, sized for the longest
text each will ever hold; then the SVG is rewritten:

- element ids are ours (`t3`, `n2`, `e-t1-o2`), and every other id is removed or made unique,
  so both views' SVGs can sit in one page;
- each label line is a <text> with a class saying what it is: `label`, `sub`, `value` (changes
  as steps play) or `grad` (a gradient, empty until backward reaches it). Edges that carry a
  gradient get an empty `grad` text at their middle;
- every text is written by ElementTree, so labels taken from user code (`<script>`, quotes,
  backslashes, any Unicode) stay text, with what XML cannot hold or a reader cannot see written
  out (app/render/visible.py); Graphviz sees them only to measure them, through `_measure`,
  which leaves nothing it would interpret;
- Graphviz names nodes and edges by our ids only, checked against SAFE_ID here whatever the
  trace's validation said: a node name is text Graphviz expands (`\\N` in a label is the node's
  name), so a hostile name could make one label megabytes long;
- the XML prolog, DOCTYPE, comments and Graphviz's <title> tooltips (node names) are dropped,
  and each node gets a <title> that says what it is;
- data-kind, data-gen and (for stacks) data-group attributes, and CSS classes (`node tensor
  leaf`, `node fn`, `edge next`, …) that the player styles. The fills are set too, from the
  Okabe–Ito palette (safe for colour-blind readers and in print), so an SVG stands on its own.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import OrderedDict
from dataclasses import dataclass

from app.render.graph import Edge, Element, Graph
from app.render.visible import visible

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG)
ET.register_namespace("xlink", XLINK)

FONT = "Helvetica,Arial,sans-serif"
FONT_SIZE = 11

# Okabe & Ito (2008): orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple;
# fills are the same hues mixed with white, so black text stays readable on them.
INK = "#222222"
GREY = "#777777"
BLUE, SKY, GREEN, ORANGE = "#0072B2", "#56B4E9", "#009E73", "#E69F00"
YELLOW, VERMILLION, PURPLE = "#F0E442", "#D55E00", "#CC79A7"
# Text and lines need contrast that the palette's light hues lack (vermillion is 3.9:1 on
# white, orange 2.3:1): gradients are written in a darker vermillion (4.9:1 or more on white
# and on every fill below, WCAG's 4.5:1 for text), saved tensors drawn in a darker orange
# (4.2:1 on white, 3.6:1 on their fill: WCAG's 3:1 for graphics).
GRAD_INK = "#A04000"
SAVED_LINE = "#A87000"
MODULE_LINE = "#8F3F71"  # a darker reddish purple: the palette's is 2.9:1 on white
TINT = {
    BLUE: "#CCE3F0",
    SKY: "#DDF0FB",
    GREEN: "#CCECE3",
    ORANGE: "#FAECCC",
    YELLOW: "#FCFAD9",
    PURPLE: "#F5E4EE",
}

_NODE_STYLE: dict[str, dict[str, str]] = {
    "tensor": {"shape": "box", "style": "rounded,filled", "color": GREY, "fillcolor": "white"},
    "op": {
        "shape": "circle",
        "style": "filled",
        "color": BLUE,
        "fillcolor": "white",
        "width": "0.3",
        "margin": "0.02",
        "fontsize": "12",
    },
    "fn": {"shape": "box", "style": "filled", "color": BLUE, "fillcolor": TINT[BLUE]},
    "accumulate": {"shape": "box", "style": "filled", "color": GREEN, "fillcolor": TINT[GREEN]},
    "saved": {
        "shape": "box",
        "style": "filled,dashed",
        "color": SAVED_LINE,
        "fillcolor": TINT[ORANGE],
        "fontsize": "10",
        "height": "0.3",
    },
    "root": {"shape": "box", "style": "rounded,filled", "color": INK, "fillcolor": TINT[YELLOW]},
    # a module call drawn as one box (app/render/modules.py): a heavier border than anything
    "module": {
        "shape": "box",
        "style": "rounded,filled,bold",
        "color": MODULE_LINE,
        "fillcolor": TINT[PURPLE],
        "penwidth": "2",
    },
}
_CLASS_FILL = {  # tensors, by what they are
    "requires-grad": TINT[SKY],
    "nonleaf": TINT[ORANGE],
    "grad": TINT[GREEN],
}
_EDGE_STYLE: dict[str, dict[str, str]] = {
    "flow": {"color": INK},
    "next": {"color": BLUE},
    "root-link": {"color": INK},
    "saved-link": {"color": SAVED_LINE, "style": "dashed"},
    "grad-link": {"color": GREEN, "style": "dashed"},
    "detach": {"color": GREY, "style": "dotted"},
}


# Our own ids (t3, t2-v1, n1-s0, o5, g2, e-t1-o2, e-t4-root-n4-2): lower-case words and
# numbers joined by hyphens, nothing Graphviz reads as an escape, a port or markup.
SAFE_ID = re.compile(r"[a-z][a-z0-9]{0,15}(?:-[a-z0-9]{1,16}){0,7}")


class UnsafeId(ValueError):
    """An id that is not one of ours reached Graphviz's door."""


@dataclass
class Drawing:
    tree: ET.Element  # the SVG as elements: `svg` writes it out
    width: float  # in points, as Graphviz sizes it
    height: float
    boxes: dict[str, tuple[float, float, float, float]]  # node id → x0, y0, x1, y1 (viewBox)
    ids: list[str]  # the nodes and edges drawn, as their <g id> in the SVG, in its order
    smallest_font: float = 0.0  # the smallest font size of its texts (viewBox units)

    @property
    def svg(self) -> str:
        """The SVG as text, written each time it is asked for: a page makes its still from
        the tree itself (playback.still_of), as writing a big view out costs twice what
        reading it back does, and the page would do both for nothing."""
        return ET.tostring(self.tree, encoding="unicode")


def draw(graph: Graph, texts: dict[str, dict[str, str]]) -> Drawing:
    """Lay out and draw `graph`. `texts[id]` holds the longest `value` and `grad` text each
    element will ever show (the node is sized for them); elements start with their own value
    and an empty gradient."""
    import pygraphviz  # here, so steps and narration work where Graphviz is not installed

    agraph = pygraphviz.AGraph(directed=True, strict=False, name=graph.view)
    agraph.graph_attr.update(
        rankdir="TB",
        nodesep="0.25",
        ranksep="0.35",
        bgcolor="transparent",
        outputorder="edgesfirst",
        fontname=FONT,
        fontsize=str(FONT_SIZE),
    )
    agraph.node_attr.update(
        fontname=FONT, fontsize=str(FONT_SIZE), penwidth="1.2", margin="0.08,0.03", height="0.3"
    )
    agraph.edge_attr.update(arrowsize="0.6", penwidth="1.1")
    _check_ids(graph)
    for element in graph.elements.values():
        lines = _slots(element, texts.get(element.id, {}))
        label = "\n".join(_measured_line(slot, text) for slot, text in lines)
        classes = " ".join(element.classes)
        attrs = {"id": element.id, "class": classes, **_node_style(element), "label": label}
        _add_node(agraph, element.id, attrs)
    routed = _hub_edges(graph)
    skipped = set(routed)
    for edge in graph.edges.values():
        if edge.id in skipped:
            continue
        attrs = {**_EDGE_STYLE.get(edge.classes[0], {})}
        grad = texts.get(edge.id, {}).get("grad")
        if grad:  # a label Graphviz places itself, so that it keeps clear of every node
            attrs.update(label=_measure(visible(grad)), fontsize=str(FONT_SIZE - 1))
        if edge.back:
            attrs["dir"] = "back"
        if not edge.arrow:
            attrs["dir"] = "none"
        classes = " ".join(edge.classes)
        _add_edge(agraph, edge.tail, edge.head, edge.id, {"id": edge.id, "class": classes, **attrs})
    return _rewrite(_laid_out(agraph), graph, texts, routed)


# pygraphviz's add_node and add_edge make Python objects for each node and edge, and set each
# attribute through a few layers of Python: for a 20-pass MLP's ~1,000 nodes and edges, 25 ms
# before Graphviz starts. These make the same calls into Graphviz, in the same order (so the
# same graph, the same layout), and nothing else: pygraphviz 2.0's own calls (constraints.txt).
_CREATE, _FIND = 1, 0  # pygraphviz.agraph._Action


def _add_node(agraph, name: str, attrs: dict[str, str]) -> None:
    from pygraphviz import graphviz as gv

    node = gv.agnode(agraph.handle, name.encode(), _CREATE)
    _set(agraph.handle, node, attrs, label_default=b"\\N")


def _add_edge(agraph, tail: str, head: str, key: str, attrs: dict[str, str]) -> None:
    from pygraphviz import graphviz as gv

    ends = (gv.agnode(agraph.handle, end.encode(), _FIND) for end in (tail, head))
    edge = gv.agedge(agraph.handle, *ends, key.encode(), _CREATE)
    _set(agraph.handle, edge, attrs, label_default=b"")


def _set(graph_handle, handle, attrs: dict[str, str], label_default: bytes) -> None:
    """As pygraphviz's ItemAttribute.__setitem__: a node's label defaults to its name (\\N)."""
    from pygraphviz import graphviz as gv

    for name, value in attrs.items():
        default = label_default if name == "label" else b""
        gv.agsafeset_label(graph_handle, handle, name.encode(), value.encode(), default)


# Graphviz's SVGs of the graphs laid out lately in this process, by the dot text it was given.
# A live edit that changes only numbers (a learning rate, a starting value) gives the same text,
# as every digit is measured as 0 (`_measure`): its layout, most of a big page's drawing, is
# taken from here. Only what Graphviz drew is kept; our texts are written over it each time.
_LAYOUTS: OrderedDict[str, bytes] = OrderedDict()
LAYOUT_BYTES = 24 * 1024 * 1024  # in each render worker: a few large pages' layouts


def _laid_out(agraph) -> bytes:
    source = agraph.string()
    raw = _LAYOUTS.get(source)
    if raw is not None:
        _LAYOUTS.move_to_end(source)
        return raw
    agraph.layout(prog="dot")
    raw = agraph.draw(format="svg")
    remember(source, raw)
    return raw


def remember(source: str, raw: bytes) -> None:
    """Keep Graphviz's SVG of the dot text `source`, forgetting the oldest past LAYOUT_BYTES."""
    if len(raw) + len(source) <= LAYOUT_BYTES // 4:
        _LAYOUTS[source] = raw
        _LAYOUTS.move_to_end(source)
        while sum(len(k) + len(v) for k, v in _LAYOUTS.items()) > LAYOUT_BYTES:
            _LAYOUTS.popitem(last=False)


def layouts_known() -> frozenset[str]:
    """The dot texts whose layouts are remembered now (to tell `layouts_since` what is new)."""
    return frozenset(_LAYOUTS)


def layouts_since(known: frozenset[str]) -> list[tuple[str, bytes]]:
    """The layouts remembered here and not in `known`: what a forked child learned, for its
    parent to remember too (app/render/page.py)."""
    return [(source, raw) for source, raw in _LAYOUTS.items() if source not in known]


def _check_ids(graph: Graph) -> None:
    """Every name Graphviz will see is one of our tokens, and every edge joins drawn nodes (an
    edge to an unknown name would make Graphviz invent a node under that name)."""
    for element in graph.elements:
        if not SAFE_ID.fullmatch(element):
            raise UnsafeId(f"node id {element[:40]!r}")
    for edge in graph.edges.values():
        if not SAFE_ID.fullmatch(edge.id):
            raise UnsafeId(f"edge id {edge.id[:40]!r}")
        if edge.tail not in graph.elements or edge.head not in graph.elements:
            raise UnsafeId(f"edge {edge.id} joins an element that is not drawn")


HUB_KEEP = 3  # a hub's first few edges, which Graphviz lays out…
HUB_LIMIT = 6  # …once it has more than this many; the rest we draw (see _hub_edges)


def _hub_edges(graph: Graph) -> list[str]:
    """Edges from a hub (a tensor used all through a loop, a leaf's AccumulateGrad) past its
    first few, in order. Each such edge spans many ranks, and Graphviz's cost grows with the
    span of every edge: a 500-node recurrence takes seconds with them and milliseconds
    without. So they are left out of the layout and drawn afterwards, down a lane beside the
    picture (see _curve)."""
    by_tail: dict[str, list[str]] = {}
    for edge in graph.edges.values():
        # a .grad's link, a saved tensor's: short by nature, and they place what they lead to
        if edge.tail != edge.head and edge.classes[0] in ("flow", "next"):
            by_tail.setdefault(edge.tail, []).append(edge.id)
    return [e for edges in by_tail.values() if len(edges) > HUB_LIMIT for e in edges[HUB_KEEP:]]


def _slots(element: Element, texts: dict[str, str]) -> list[tuple[str, str]]:
    """(class, text to size for) for each line of a node's label, as it is drawn: labels,
    values and gradients ("∂b/∂x") hold names from the snippet, escapes and all."""
    lines = [("label", element.lines[0])] + [("sub", line) for line in element.lines[1:]]
    if element.value is not None:
        lines.append(("value", _longest(visible(element.value), visible(texts.get("value", "")))))
    if texts.get("grad"):
        lines.append(("grad", texts["grad"]))
    return [(slot, visible(text)) for slot, text in lines]


def _longest(a: str, b: str) -> str:
    return b if len(b) > len(a) else a


def _measure(text: str) -> str:
    """A stand-in of the same width that Graphviz can measure but never interprets. Its escapes
    (\\N \\G \\E \\H \\T \\L \\n \\l \\r) all start with a backslash, and an HTML-like label
    with `<`, so neither is left; control characters (a NUL would end the C string) become
    spaces. Record fields (`{ | }`) mean something only in record shapes, which we never use."""
    text = text.replace("\\", "/").replace("<", "‹").replace(">", "›").translate(_CONTROLS)
    text = text.translate(_DIGITS)  # all as wide in Graphviz's fonts: one layout for any values
    text = text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate cannot go to C
    return text.strip() or " "


_CONTROLS = {code: " " for code in (*range(0x20), 0x7F)}
_DIGITS = str.maketrans("123456789", "000000000")


def _measured_line(slot: str, text: str) -> str:
    """The stand-in Graphviz sizes a node's line by. The grad line is drawn bold (the player's
    CSS), about 15% wider than the regular type Graphviz measures: one wide letter more per six
    characters keeps "grad None" inside its node."""
    stand_in = _measure(text)
    return stand_in + "m" * -(-len(text) // 6) if slot == "grad" else stand_in


def _node_style(element: Element) -> dict[str, str]:
    kind = element.kind
    stacked = kind == "group"
    if stacked:  # a stack looks like what it stacks, drawn doubled
        kind = element.classes[1] if len(element.classes) > 1 else "tensor"
    style = dict(_NODE_STYLE.get(kind, _NODE_STYLE["tensor"]))
    if stacked:
        style["peripheries"] = "2"
        if kind == "op":
            style.update(shape="box", style="rounded,filled")
    if kind == "tensor":
        for cls, fill in _CLASS_FILL.items():
            if cls in element.classes:
                style["fillcolor"] = fill
    elif kind == "op" and "unrecorded" in element.classes:
        style.update(color=GREY, style="filled,dashed")
    return style


# ***** rewriting Graphviz's SVG *****

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _rewrite(
    raw: bytes, graph: Graph, texts: dict[str, dict[str, str]], routed: list[str]
) -> Drawing:
    root = ET.fromstring(raw)  # comments, the prolog and the DOCTYPE are dropped here
    ns = f"{{{SVG}}}"
    view = graph.view
    root.set("class", f"gradtrace-graph {view}")
    root.set("data-view", view)
    root.set("role", "img")
    root.set("aria-label", f"The {view} graph")
    boxes: dict[str, tuple[float, float, float, float]] = {}
    drawn: list[str] = []
    local: dict[str, tuple[float, float, float, float]] = {}  # in the graph's own coordinates
    shift = (0.0, 0.0)
    drawing = root
    for group in root.iter(f"{ns}g"):
        for title in group.findall(f"{ns}title"):
            group.remove(title)
        classes = (group.get("class") or "").split()
        gid = group.get("id", "")
        if "graph" in classes:
            group.set("id", f"{view}-graph")
            shift = _translation(group.get("transform", ""))
            drawing = group
        elif "node" in classes and gid in graph.elements:
            drawn.append(gid)
            _node(group, graph.elements[gid], texts.get(gid, {}), ns)
            box = _extent(group, ns)
            if box is not None:
                x0, y0, x1, y1 = box
                local[gid] = box
                boxes[gid] = (x0 + shift[0], y0 + shift[1], x1 + shift[0], y1 + shift[1])
        elif "edge" in classes and gid in graph.edges:
            drawn.append(gid)
            _edge(group, graph.edges[gid], bool(texts.get(gid, {}).get("grad")), ns)
        elif gid:
            del group.attrib["id"]  # clusters and the like: Graphviz numbers them per SVG
    width = float(root.get("width", "0pt").removesuffix("pt"))
    height = float(root.get("height", "0pt").removesuffix("pt"))
    lanes = _lanes(graph, routed, local)
    for n, edge_id in enumerate(routed):  # under the nodes, as Graphviz draws its edges
        edge = graph.edges[edge_id]
        if edge.tail in local and edge.head in local:
            group = _curve(edge, local[edge.tail], local[edge.head], lanes[edge.tail], ns)
            drawing.insert(n, group)
            drawn.insert(n, edge_id)
            left = lanes[edge.tail] < local[edge.tail][0]
            _edge(group, edge, bool(texts.get(edge_id, {}).get("grad")), ns, left)
    if lanes:  # lanes beside the picture: widen it to hold them (and their gradients' text)
        left = max(0.0, -(min(lanes.values()) + shift[0]) + 12)
        right = max(0.0, max(lanes.values()) + shift[0] + 60 - width)
        if left or right:
            width += left + right
            shift = (shift[0] + left, shift[1])
            drawing.set("transform", f"translate({shift[0]:.2f} {shift[1]:.2f})")
            root.set("width", f"{width:.0f}pt")
            root.set("viewBox", f"0.00 0.00 {width:.2f} {height:.2f}")
            boxes = {k: (b[0] + left, b[1], b[2] + left, b[3]) for k, b in boxes.items()}
    sizes = [float(t.get("font-size")) for t in root.iter(f"{ns}text") if t.get("font-size")]
    return Drawing(root, width, height, boxes, drawn, min(sizes, default=0.0))


def _translation(transform: str) -> tuple[float, float]:
    found = re.search(r"translate\(([-\d.]+)[ ,]+([-\d.]+)\)", transform)
    return (float(found.group(1)), float(found.group(2))) if found else (0.0, 0.0)


def _extent(group: ET.Element, ns: str) -> tuple[float, float, float, float] | None:
    """The bounding box of a node's shapes, in its graph's coordinates."""
    xs: list[float] = []
    ys: list[float] = []
    for shape in group:
        if shape.tag == f"{ns}ellipse":
            cx, cy = float(shape.get("cx", 0)), float(shape.get("cy", 0))
            rx, ry = float(shape.get("rx", 0)), float(shape.get("ry", 0))
            xs += [cx - rx, cx + rx]
            ys += [cy - ry, cy + ry]
        elif shape.tag in (f"{ns}polygon", f"{ns}path", f"{ns}polyline"):
            numbers = [float(n) for n in _NUMBER.findall(shape.get("points") or shape.get("d", ""))]
            xs += numbers[0::2]
            ys += numbers[1::2]
    if not xs or not ys:
        return None
    return min(xs), min(ys), max(xs), max(ys)


def _node(group: ET.Element, element: Element, texts: dict[str, str], ns: str) -> None:
    group.set("data-kind", element.kind)
    group.set("data-gen", str(element.gen))
    if element.members:
        group.set("data-group", " ".join(element.members))
    title = ET.Element(f"{ns}title")
    title.text = visible(element.title or element.lines[0])
    group.insert(0, title)
    lines = _slots(element, texts)
    shown = [text for _, text in lines]
    shown[len(element.lines) :] = [
        visible(element.value) if cls == "value" else "" for cls, _ in lines[len(element.lines) :]
    ]
    for line, node, (cls, _) in zip(shown, group.findall(f"{ns}text"), lines, strict=False):
        node.set("class", cls)
        node.text = line
        if cls == "grad":
            node.set("fill", GRAD_INK)


def _edge(group: ET.Element, edge: Edge, carries_grad: bool, ns: str, left: bool = False) -> None:
    """An edge's attributes; one that carries a gradient gets its (empty) `grad` text where
    Graphviz placed its label, or, for an edge drawn down a lane, beside the lane on the side
    away from the nodes."""
    group.set("data-gen", str(edge.gen))
    placed = group.find(f"{ns}text")
    if not carries_grad:
        return
    style = {"font-family": FONT, "font-size": str(FONT_SIZE - 1), "fill": GRAD_INK}
    if placed is not None:
        for key in list(placed.attrib):
            if key not in ("x", "y"):
                del placed.attrib[key]
        placed.attrib.update({"class": "grad", "text-anchor": "middle", **style})
        placed.text = ""
        return
    path = group.find(f"{ns}path")
    if path is None:
        return
    x, y = _middle(path.get("d", ""))
    text = ET.SubElement(
        group,
        f"{ns}text",
        {
            "class": "grad",
            "x": f"{x - 4 if left else x + 4:.2f}",
            "y": f"{y + 3:.2f}",
            "text-anchor": "end" if left else "start",
            **style,
        },
    )
    text.text = ""


LANE_GAP = 10.0  # between the nodes and the first lane, and between lanes


def _lanes(graph: Graph, routed: list[str], boxes: dict[str, tuple]) -> dict[str, float]:
    """For each hub, the x of the lane its drawn edges run down: beside every node they pass,
    on the side of the picture nearer the hub, each hub on a lane of its own."""
    if not boxes:
        return {}
    middle = (min(b[0] for b in boxes.values()) + max(b[2] for b in boxes.values())) / 2
    reach: dict[str, list[float]] = {}
    for edge_id in routed:
        edge = graph.edges[edge_id]
        if edge.tail in boxes and edge.head in boxes:
            span = reach.setdefault(edge.tail, [boxes[edge.tail][1], boxes[edge.tail][3]])
            span[0] = min(span[0], boxes[edge.head][1])
            span[1] = max(span[1], boxes[edge.head][3])
    lanes: dict[str, float] = {}
    used = {"left": 0, "right": 0}
    for hub, (top, bottom) in reach.items():
        passed = [b for b in boxes.values() if b[3] >= top and b[1] <= bottom]
        side = "left" if (boxes[hub][0] + boxes[hub][2]) / 2 <= middle else "right"
        used[side] += 1
        gap = LANE_GAP * used[side]
        if side == "left":
            lanes[hub] = min(b[0] for b in passed) - gap
        else:
            lanes[hub] = max(b[2] for b in passed) + gap
    return lanes


def _curve(edge: Edge, tail: tuple, head: tuple, lane: float, ns: str) -> ET.Element:
    """An edge Graphviz did not lay out: out of the bottom of its tail, across the gap below
    it to its hub's lane, down the lane, and across the gap above its head into its top, so
    that it crosses no node. Three Bézier segments, the middle one straight (the lane)."""
    style = _EDGE_STYLE.get(edge.classes[0], {})
    color = style.get("color", INK)
    x0, x1 = (tail[0] + tail[2]) / 2, (head[0] + head[2]) / 2
    down = head[1] >= tail[3]
    y0, y1 = (tail[3], head[1]) if down else (tail[1], head[3])
    g = 9.0 if down else -9.0  # about half the gap between ranks
    d = (
        f"M{x0:.2f},{y0:.2f}C{x0:.2f},{y0 + g:.2f} {lane:.2f},{y0 + g:.2f} "
        f"{lane:.2f},{y0 + 2 * g:.2f}"
        f"C{lane:.2f},{y0 + 2 * g:.2f} {lane:.2f},{y1 - 2 * g:.2f} {lane:.2f},{y1 - 2 * g:.2f}"
        f"C{lane:.2f},{y1 - g:.2f} {x1:.2f},{y1 - g:.2f} {x1:.2f},{y1:.2f}"
    )
    group = ET.Element(f"{ns}g", {"id": edge.id, "class": " ".join(("edge", *edge.classes))})
    path = {"fill": "none", "stroke": color, "stroke-width": "1.1", "d": d}
    if style.get("style") in ("dashed", "dotted"):
        path["stroke-dasharray"] = "5,2" if style["style"] == "dashed" else "1,5"
    ET.SubElement(group, f"{ns}path", path)
    if edge.arrow:  # into the head, or into the tail for a `back` edge, as Graphviz would
        x, y, back = (x0, y0, 7.0 if down else -7.0) if edge.back else (x1, y1, -g / 9 * 7)
        points = f"{x - 3:.2f},{y + back:.2f} {x + 3:.2f},{y + back:.2f} {x:.2f},{y:.2f}"
        ET.SubElement(group, f"{ns}polygon", {"fill": color, "stroke": color, "points": points})
    return group


def _middle(d: str) -> tuple[float, float]:
    """The middle of a Graphviz edge path ("M p0 C p1 p2 p3 p4 p5 p6 …", cubic Béziers)."""
    numbers = [float(n) for n in _NUMBER.findall(d)]
    points = list(zip(numbers[0::2], numbers[1::2], strict=False))
    if len(points) < 4:
        return points[0] if points else (0.0, 0.0)
    segments = (len(points) - 1) // 3
    k = segments // 2
    if segments % 2 == 0:  # an even count: the middle is where two segments meet
        return points[3 * k]
    p0, p1, p2, p3 = points[3 * k : 3 * k + 4]
    return (
        (p0[0] + 3 * p1[0] + 3 * p2[0] + p3[0]) / 8,
        (p0[1] + 3 * p1[1] + 3 * p2[1] + p3[1]) / 8,
    )
