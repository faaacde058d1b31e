"""Big graphs: nodes made by the same source line in a loop, stacked into one node with a count.

Up to LIMIT nodes a graph is drawn whole. Past it, a 1,000-iteration loop would be a picture
nobody can read (and a layout nobody wants to wait for), so elements that repeat are stacked:

1. first across forward passes: the k-th thing made at a line in one pass is stacked with the
   k-th thing made there in every other pass (a training loop becomes one graph, × 1,000);
2. if that is not enough, within a pass too: everything made at the same line by the same op
   (a chain `y = y * 1.01` run 1,000 times becomes one node with a loop).

A stack keeps the ids of its members (`data-group` in the SVG), and `render(expand=…)` draws
the members of chosen stacks one by one again.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from app.render.graph import Element, Graph
from app.render.narration import count

LIMIT = 500


@dataclass
class Stacked:
    graph: Graph
    rename: dict[str, str] = field(default_factory=dict)  # member (or edge) id → stack's
    groups: dict[str, list[str]] = field(default_factory=dict)  # stack id → member ids
    notice: str | None = None


def stack(
    graph: Graph, first: int = 1, expand: frozenset[str] = frozenset(), limit: int = LIMIT
) -> Stacked:
    """The graph with repeated elements stacked when it has more than `limit` elements.

    Stacks are numbered g<first>, g<first+1>, … in the order of their first member, the same
    whichever are expanded, so an id keeps meaning the same stack.
    """
    total = len(graph.elements)
    if total <= limit:
        return Stacked(graph)
    buckets = _buckets(graph, across_passes=True)
    if total - sum(len(m) - 1 for m in buckets) > limit:
        buckets = _buckets(graph, across_passes=False)
    groups: dict[str, list[str]] = {}
    rename: dict[str, str] = {}
    for n, members in enumerate(buckets, start=first):
        gid = f"g{n}"
        groups[gid] = members
        if gid in expand:
            continue
        for member in members:
            rename[member] = gid
    drawn, edge_names = graph.merged(rename, _stack_of(groups))
    stacked = len([g for g in groups if g not in expand])
    notice = (
        f"This graph has {total:,} nodes, more than the {limit} drawn one by one, so nodes made "
        f"by the same line in a loop are stacked: {count(stacked, 'stack')}, each labelled "
        f"with how many nodes it stands for (× n). Expand a stack to draw its members."
    )
    return Stacked(drawn, {**rename, **edge_names}, groups, notice)


def _buckets(graph: Graph, across_passes: bool) -> list[list[str]]:
    """Lists of element ids to stack (each of two or more), in order of first member."""
    seen: Counter = Counter()
    by_key: dict[tuple, list[str]] = defaultdict(list)
    for element in graph.elements.values():
        if not element.key:
            continue
        key = element.key
        if across_passes:  # the k-th element with this key in its pass
            seen[(element.gen, key)] += 1
            key = (key, seen[(element.gen, key)])
        by_key[key].append(element.id)
    return [members for members in by_key.values() if len(members) > 1]


def _stack_of(groups: dict[str, list[str]]):
    """How a stack is drawn: as what it stacks, doubled, with a count."""

    def make(gid: str, first: Element) -> Element:
        members = groups[gid]
        return Element(
            id=gid,
            kind="group",
            classes=("group", *first.classes),
            lines=(first.lines[0], f"× {len(members):,}"),
            value=first.value,
            gen=first.gen,
            title=(
                f"{len(members):,} {first.kind} nodes made by the same line, stacked; "
                f"expand to see them one by one"
            ),
            members=tuple(members),
        )

    return make
