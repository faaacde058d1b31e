"""Networks: each nn.Module call drawn as one box, which opens into what it did.

A model of a few layers makes dozens of elements a pass, and a training loop makes that many
every pass: drawn one by one, a learner sees a wall of ops and not the network. Past LIMIT
elements a view, everything a module call made (trace["modules"], each event's `module`) is
drawn as one box, "model · Sequential", with its inputs and the tensors it was given drawn
around it. What was made outside any call stays as it is: the data, the parameters (made when
the module was built, not called) and their AccumulateGrad nodes, the loss, the .grads.

`render(expand=["m1"])` opens every call of module m1: what it did is drawn again, and the
calls inside it (a Sequential's layers) become boxes of their own. A call that did a single
operation (a ReLU) is drawn as that operation: a box would hide nothing.

Boxing happens before stacking (app/render/stacks.py), so the boxes of a loop's passes stack
like any element made by the same line.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from app.render.graph import Element, Graph

LIMIT = 100
# what counts as one operation inside a box, per view
_OPERATIONS = {"tensors": "op", "autograd": "fn"}


@dataclass
class Boxed:
    graph: Graph
    rename: dict[str, str] = field(default_factory=dict)  # member (or edge) id → box's
    boxes: dict[str, dict] = field(default_factory=dict)  # box id → what the inspector says
    used: set[str] = field(default_factory=set)  # module tokens drawn as boxes somewhere


def box_id(view: str, call: int) -> str:
    """c3 in the tensors view, c3-fn in the autograd view: ids are unique across both."""
    return f"c{call}" if view == "tensors" else f"c{call}-fn"


def box(
    graph: Graph, calls: list[dict], expand: frozenset[str] = frozenset(), limit: int = LIMIT
) -> Boxed:
    """The graph with each module call's elements drawn as one box, when it has more than
    `limit` elements; calls of the modules in `expand` are opened."""
    if len(graph.elements) <= limit or not calls:
        return Boxed(graph)
    outer = _boxing_calls(calls, expand)
    members: dict[int, list[str]] = defaultdict(list)
    for element in graph.elements.values():
        if element.call is not None and outer[element.call] is not None:
            members[outer[element.call]].append(element.id)
    operation = _OPERATIONS[graph.view]
    rename: dict[str, str] = {}
    boxes: dict[str, dict] = {}
    for call, ids in members.items():
        inside = sum(graph.elements[i].kind == operation for i in ids)
        if inside <= 1:  # one operation: drawn as it is
            continue
        bid = box_id(graph.view, call)
        record = calls[call]
        boxes[bid] = {
            "module": record["module"],
            "name": record["name"],
            "type": record["type"],
            "operations": inside,
            "members": ids,
        }
        for i in ids:
            rename[i] = bid
    if not boxes:
        return Boxed(graph)

    def make(bid: str, first: Element) -> Element:
        about = boxes[bid]
        return Element(
            id=bid,
            kind="module",
            classes=("module",),
            lines=(title(about), f"{about['operations']:,} {_plural(graph.view)}"),
            gen=first.gen,
            key=("module", about["module"], first.key),
            title=f"{title(about)}: one call, drawn as a box; open it to see what it did",
            members=tuple(about["members"]),
        )

    drawn, edge_names = graph.merged(rename, make, absorb_inner=True)
    used = {about["module"] for about in boxes.values()}
    return Boxed(drawn, {**rename, **edge_names}, boxes, used)


def title(about: dict) -> str:
    """What a box is called: `model · Sequential`, or just `MSELoss` for a module no name
    reaches."""
    return f"{about['name']} · {about['type']}" if about["name"] else about["type"]


def _plural(view: str) -> str:
    return "operations inside" if view == "tensors" else "nodes inside"


def _boxing_calls(calls: list[dict], expand: frozenset[str]) -> list[int | None]:
    """For each call, the call whose box holds what it made: its outermost ancestor (or
    itself) that is not opened, or None when it and every call around it are open. Parents
    are listed before their children (docs/trace-format.md), so one pass does it."""
    outer: list[int | None] = []
    for index, call in enumerate(calls):
        parent = call["parent"]
        held = outer[parent] if parent is not None else None
        if held is None and call["module"] not in expand:
            held = index
        outer.append(held)
    return outer
