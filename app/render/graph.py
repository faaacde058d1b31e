"""The two pictures of one trace, as plain graphs: what is drawn, with which id, label and class.

- **tensors**: the snippet's tensors as boxes and the operations between them as small round
  nodes, the picture most tutorials draw. An in-place change (`y += 1`, an optimizer step) makes
  a new version of the tensor (`t2-v1`), so data only ever flows downwards.
- **autograd**: PyTorch's own graph. grad_fn nodes and their `next_functions`, an
  `AccumulateGrad` per leaf, the tensors each node saved for backward, and a box for each tensor
  that `backward()` started from. Arrows follow `next_functions`, the way gradients travel.

Every element the run will ever show is here from the start; steps only reveal, emphasise and
relabel them. Ids are the trace's ids where there is one (`t3`, `n2`), so they are stable, and
unique across both views, so both SVGs can sit in one page.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from app.render import ops, values
from app.render.spans import one_line, span_text

LABEL_LIMIT = 40


@dataclass(slots=True)
class Element:
    """A node of the picture."""

    id: str
    kind: str  # tensor, op, fn, accumulate, saved, root, group
    classes: tuple[str, ...]
    lines: tuple[str, ...]  # the label's fixed lines
    value: str | None = None  # the value line as first shown; None: no value line
    gen: int = 1  # the forward pass (generation) it belongs to
    key: tuple = ()  # what makes elements "the same" when a big graph is stacked
    title: str = ""  # tooltip
    members: tuple[str, ...] = ()  # for a stack or a module box: the ids it stands for
    call: int | None = None  # the innermost module call it was made in (trace["modules"])


@dataclass(slots=True)
class Edge:
    """An edge from `source` to `target` (what its id says), drawn from `tail` (upper) to
    `head` (lower); `back` puts the arrow at the tail."""

    id: str
    source: str
    target: str
    tail: str
    head: str
    classes: tuple[str, ...]
    gen: int = 1
    back: bool = False
    arrow: bool = True


@dataclass
class Graph:
    view: str
    elements: dict[str, Element] = field(default_factory=dict)
    edges: dict[str, Edge] = field(default_factory=dict)
    # e-<source>-<target> → the last -n given to that pair, so a pair used 10,000 times (an op
    # with one input repeated) names each new edge at once instead of trying -2, -3, … again
    repeats: dict[str, int] = field(default_factory=dict)

    def add(self, element: Element) -> str:
        self.elements[element.id] = element
        return element.id

    def connect(self, source: str, target: str, tail: str, head: str, **kw) -> str:
        """An edge named e-<source>-<target>; a repeat of the same pair gets -2, -3, …"""
        base = f"e-{source}-{target}"
        n = self.repeats.get(base, 1)
        edge_id = base if n == 1 else f"{base}-{n}"
        while edge_id in self.edges:
            n += 1
            edge_id = f"{base}-{n}"
        self.repeats[base] = n
        self.edges[edge_id] = Edge(edge_id, source, target, tail, head, **kw)
        return edge_id

    def merged(
        self,
        rename: Mapping[str, str],
        make: Callable[[str, Element], Element],
        absorb_inner: bool = False,
    ) -> tuple[Graph, dict[str, str]]:
        """This graph with the elements `rename` maps to one id drawn as one element (`make`
        gets that id and its first member), and the edges between merged elements merged too.

        Gives the new graph and the new name of each edge that got one. An edge between two
        members of the same merged element becomes a loop on it, or, with `absorb_inner`, is
        not drawn and stands for the element itself (steps that name it name the element).
        """
        out = Graph(self.view)
        for element in self.elements.values():
            merged = rename.get(element.id)
            if merged is None:
                out.add(element)
            elif merged not in out.elements:
                out.add(make(merged, element))
        names: dict[str, str] = {}
        for edge in self.edges.values():
            source = rename.get(edge.source, edge.source)
            target = rename.get(edge.target, edge.target)
            if source == edge.source and target == edge.target:
                out.edges[edge.id] = edge
                continue
            if absorb_inner and source == target:
                names[edge.id] = source
                continue
            new_id = f"e-{source}-{target}"
            names[edge.id] = new_id
            if new_id not in out.edges:
                out.edges[new_id] = replace(
                    edge,
                    id=new_id,
                    source=source,
                    target=target,
                    tail=rename.get(edge.tail, edge.tail),
                    head=rename.get(edge.head, edge.head),
                )
        return out, names


@dataclass
class Scene:
    """Both graphs, and where each event's things ended up in them (what steps need)."""

    trace: dict
    tensors: Graph
    autograd: Graph
    labels: dict[str, str]  # tensor id → the name narration and boxes use
    gens: list[int]  # event seq → generation (forward pass), from 1
    version: dict[tuple[str, int], str] = field(default_factory=dict)  # (tid, v) → element
    op_element: dict[int, str] = field(default_factory=dict)  # op/inplace seq → op element
    in_edges: dict[int, list[str | None]] = field(default_factory=dict)  # seq → per input slot
    out_edges: dict[int, list[str]] = field(default_factory=dict)  # seq → per output
    node_event: dict[str, int] = field(default_factory=dict)  # node id → the event recording it
    next_edges: dict[str, list[str | None]] = field(default_factory=dict)  # node → per slot
    saved_boxes: dict[str, list[str]] = field(default_factory=dict)  # node → its saved boxes
    saved_links: dict[str, list[str]] = field(default_factory=dict)  # node → edges to them
    root_edges: dict[int, list[tuple[str, str | None]]] = field(default_factory=dict)
    grad_links: dict[str, str] = field(default_factory=dict)  # .grad tensor id → link edge
    detach_edges: dict[str, list[str]] = field(default_factory=dict)  # tensor → edges into it

    def view(self, name: str) -> Graph:
        return self.tensors if name == "tensors" else self.autograd


def generations(events: list[dict]) -> list[int]:
    """Which forward pass each event belongs to: a new one starts at the first op recorded
    after a backward() ended, so a training loop's iterations are generations 1, 2, 3, …"""
    gens, gen, ended = [], 1, False
    for event in events:
        kind = event["kind"]
        if kind == "backward_end":
            ended = True
        elif ended and kind in ("op", "inplace") and event["node"] is not None:
            gen, ended = gen + 1, False
        gens.append(gen)
    return gens


def build(trace: dict) -> Scene:
    """Both graphs of a trace, every element they will ever hold."""
    events = trace["events"]
    scene = Scene(
        trace=trace,
        tensors=Graph("tensors"),
        autograd=Graph("autograd"),
        labels=display_labels(trace),
        gens=generations(events),
    )
    _Builder(scene).run()
    return scene


class _Builder:
    """Walks the events once, adding what each one introduces to both graphs."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.trace = scene.trace
        self.tensors = scene.tensors
        self.autograd = scene.autograd
        self.current: dict[str, str] = {}  # tensor id → element of its latest version
        self.grad_fn: dict[str, str | None] = {}  # tensor id → its grad_fn now
        self.grads: set[str] = set()  # ids of .grad tensors
        self.made: dict[int, list[str]] = {}  # seq → tensors it introduced
        for tid, record in self.trace["tensors"].items():
            self.made.setdefault(record["created"], []).append(tid)
        self.nodes_made: dict[int, list[str]] = {}
        for nid, record in self.trace["nodes"].items():
            self.nodes_made.setdefault(record["created"], []).append(nid)
        self.first_grad: dict[str, int] = {}  # tensor → the event that first gave it a .grad
        for event in self.trace["events"]:
            if event["kind"] in ("accumulate", "retain_grad", "grad_set") and event.get(
                "grad_tensor"
            ):
                self.grads.add(event["grad_tensor"])
                self.first_grad.setdefault(event["tensor"], event["seq"])

    def run(self) -> None:
        for event in self.trace["events"]:
            seq, kind = event["seq"], event["kind"]
            gen = self.scene.gens[seq]
            if kind == "inplace":
                self.inplace(event, gen)  # before the new tensors: it bumps a version
            for tid in self.made.get(seq, ()):
                self.tensor(tid, event, gen)
            for nid in self.nodes_made.get(seq, ()):
                self.node(nid, gen, seq)
            if kind == "op":
                self.op(event, gen)
            elif kind == "tensor":
                tid = event["tensor"]
                self.scene.detach_edges[tid] = [  # detach(), .data: a copy cut from the graph
                    self.tensors.connect(
                        self.current[src],
                        tid,
                        self.current[src],
                        tid,
                        classes=("detach",),
                        gen=gen,
                    )
                    for src in event["inputs"]
                ]
            elif kind == "backward_begin":
                self.roots(event, gen)
            elif kind in ("accumulate", "retain_grad", "grad_set") and event.get("grad_tensor"):
                self.grad_link(event, gen)

    # ***** tensors view *****

    def tensor(self, tid: str, event: dict, gen: int) -> None:
        record = self.trace["tensors"][tid]
        self.current[tid] = tid
        self.grad_fn[tid] = record["grad_fn"]
        self.scene.version[(tid, 0)] = tid
        self.tensors.add(
            Element(
                id=tid,
                kind="tensor",
                classes=_tensor_classes(record, event, tid in self.grads),
                lines=(self.scene.labels[tid],),
                value=values.box(record["value"]),
                gen=gen,
                key=("tensor", _maker(event), _span(event)),
                title=_tensor_title(record, self.scene.labels[tid]),
                call=event.get("module"),
            )
        )

    def op(self, event: dict, gen: int) -> None:
        seq, name = event["seq"], event["name"]
        element = f"o{seq}"
        recorded = event["node"] is not None
        self.tensors.add(
            Element(
                id=element,
                kind="op",
                classes=("op",) if recorded else ("op", "unrecorded"),
                lines=(ops.symbol(name),),
                gen=gen,
                key=("op", name, _span(event)),
                title=ops.plain(name) + ("" if recorded else " (not recorded)"),
                call=event.get("module"),
            )
        )
        self.scene.op_element[seq] = element
        self.scene.in_edges[seq] = self.inputs(event["inputs"], element, gen)
        outs = []
        for tid in event["outputs"]:
            outs.append(
                self.tensors.connect(element, tid, element, tid, classes=("flow",), gen=gen)
            )
            if recorded:
                self.grad_fn[tid] = event["node"]
        self.scene.out_edges[seq] = outs

    def inplace(self, event: dict, gen: int) -> None:
        seq, name, tid = event["seq"], event["name"], event["tensor"]
        element = f"o{seq}"
        recorded = event["node"] is not None
        mark = ops.symbol(name)
        if name not in ops.UNRECORDED_INPLACE:
            mark = f"{mark}=" if len(mark) == 1 else f"{mark}_"
        self.tensors.add(
            Element(
                id=element,
                kind="op",
                classes=("op", "inplace") if recorded else ("op", "inplace", "unrecorded"),
                lines=(mark,),
                gen=gen,
                key=("op", name, _span(event)),
                title=f"{ops.plain(name)}, in place" + ("" if recorded else " (not recorded)"),
                call=event.get("module"),
            )
        )
        self.scene.op_element[seq] = element
        self.scene.in_edges[seq] = self.inputs(event["inputs"], element, gen)
        before = self.tensors.elements[self.current[tid]]
        version = f"{tid}-v{event['version']}"
        self.tensors.add(
            Element(
                id=version,
                kind="tensor",
                classes=tuple(dict.fromkeys((*before.classes, "version"))),
                lines=before.lines,
                value=values.box(event["value"]),
                gen=gen,
                key=("version", name, _span(event)),
                title=f"{before.title}, version {event['version']}",
                call=event.get("module"),
            )
        )
        self.scene.version[(tid, event["version"])] = version
        self.current[tid] = version
        self.scene.out_edges[seq] = [
            self.tensors.connect(element, version, element, version, classes=("flow",), gen=gen)
        ]
        if recorded:
            self.grad_fn[tid] = event["node"]

    def inputs(self, inputs: list, element: str, gen: int) -> list[str | None]:
        edges: list[str | None] = []
        for tid in inputs:
            if tid is None:  # a Python number
                edges.append(None)
                continue
            source = self.current[tid]
            edges.append(
                self.tensors.connect(source, element, source, element, classes=("flow",), gen=gen)
            )
        return edges

    def grad_link(self, event: dict, gen: int) -> None:
        grad = event["grad_tensor"]
        if grad in self.scene.grad_links:
            return
        owner = self.current[event["tensor"]]
        self.scene.grad_links[grad] = self.tensors.connect(
            owner, grad, owner, grad, classes=("grad-link",), gen=gen
        )

    # ***** autograd view *****

    def node(self, nid: str, gen: int, seq: int) -> None:
        if nid in self.autograd.elements:  # an AccumulateGrad, already made with its first user
            return
        record = self.trace["nodes"][nid]
        name = ops.plain(record["name"])
        self.scene.node_event[nid] = seq
        labels = self.scene.labels
        if name == "AccumulateGrad":
            leaf = labels[record["variable"]]
            empty = self.first_grad.get(record["variable"], seq + 1) > seq
            self.autograd.add(
                Element(
                    id=nid,
                    kind="accumulate",
                    classes=("accumulate",),
                    lines=(name,),
                    value=f"{leaf}.grad = None" if empty else "",
                    gen=gen,
                    key=("accumulate", name, _span(self.trace["events"][seq])),
                    title=f"AccumulateGrad of {leaf}: {record['formula']}",
                )
            )
            self.scene.next_edges[nid] = []
            return
        outputs = record["outputs"]
        of = labels[outputs[0]] if outputs else ""
        # (an AccumulateGrad, made with its leaf's first user, belongs to no call: a
        # parameter's stays outside its module's box)
        call = self.trace["events"][seq].get("module")
        self.autograd.add(
            Element(
                id=nid,
                kind="fn",
                classes=("fn",),
                lines=(name, of) if of else (name,),
                gen=gen,
                key=("fn", name, _span(self.trace["events"][seq])),
                title=f"{name}: {record['formula']}" if record["formula"] else name,
                call=call,
            )
        )
        edges: list[str | None] = []
        for target, _ in record["next"]:
            if target is None:
                edges.append(None)
                continue
            if target not in self.autograd.elements:  # an AccumulateGrad made with this node
                self.node(target, gen, seq)
            edges.append(
                self.autograd.connect(
                    nid, target, target, nid, classes=("next",), gen=gen, back=True
                )
            )
        self.scene.next_edges[nid] = edges
        boxes, links = [], []
        for k, saved in enumerate(record["saved"]):
            if saved is None:  # a Python number
                continue
            box = f"{nid}-s{k}"
            what = of if saved == "result" else labels[saved]
            self.autograd.add(
                Element(
                    id=box,
                    kind="saved",
                    classes=("saved",),
                    lines=(f"result {what}" if saved == "result" else what,),
                    gen=gen,
                    key=("saved", name, k, _span(self.trace["events"][seq])),
                    title=f"saved by {name} for its backward",
                    call=call,
                )
            )
            links.append(
                self.autograd.connect(
                    box, nid, box, nid, classes=("saved-link",), gen=gen, arrow=False
                )
            )
            boxes.append(box)
        self.scene.saved_boxes[nid] = boxes
        self.scene.saved_links[nid] = links

    def roots(self, event: dict, gen: int) -> None:
        placed = []
        lines = self.trace["code"].splitlines()
        for tid in event["roots"]:
            box = f"{tid}-root"
            if box not in self.autograd.elements:
                name = root_name(self.scene.labels, lines, tid, event["span"])
                self.autograd.add(
                    Element(
                        id=box,
                        kind="root",
                        classes=("root",),
                        lines=(name,),
                        gen=gen,
                        key=("root", "root", _span(event)),
                        title=f"{name}: where backward() starts",
                    )
                )
            fn = self.grad_fn.get(tid)
            edge = None
            if fn is not None:
                edge = f"e-{box}-{fn}"
                if edge not in self.autograd.edges:
                    edge = self.autograd.connect(
                        box, fn, fn, box, classes=("root-link",), gen=gen, back=True
                    )
            placed.append((box, edge))
        self.scene.root_edges[event["seq"]] = placed


# ***** labels *****


def display_labels(trace: dict) -> dict[str, str]:
    """The trace's labels, except that the helpers a single call makes (inside `model(x)`, all
    labelled "model(x)") are named after what made them: `model.weightᵀ`, not `model(x)`."""
    labels = {tid: record["label"] for tid, record in trace["tensors"].items()}
    short: dict[str, str] = {}  # derived labels, as they read inside another: relu(…)
    lines = trace["code"].splitlines()
    run: list[dict] = []
    for event in [*trace["events"], None]:
        if event is not None and event["kind"] == "op" and run and event["span"] == run[-1]["span"]:
            run.append(event)
            continue
        # (one op repeated is a loop going round, not a call made of several ops)
        if len(run) > 1 and len({step["name"] for step in run}) > 1:
            text = _source(lines, run[-1]["span"])  # labels equal to it are not names
            for step in run[:-1]:
                for tid in step["outputs"]:
                    if labels[tid] == text:
                        labels[tid], short[tid] = _derived(
                            step["name"], step["inputs"], ChainMap(short, labels)
                        )
        run = [event] if event is not None and event["kind"] == "op" else []
    _number_rebindings(trace, labels, lines)
    return labels


_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def subscript(n: int) -> str:
    """3 → "₃": the k-th tensor a name was bound to, in creation order."""
    return str(n).translate(_SUBSCRIPTS)


def _number_rebindings(trace: dict, labels: dict[str, str], lines: list[str]) -> None:
    """A name bound to several tensors (`y = y * x` in a loop, `loss` in each pass) labels
    each its own way, y₁, y₂, … in creation order, so that ∂y₄/∂y₃ means something. A name
    bound once stays plain; in-place versions are one tensor; `y₂.grad` follows its owner."""
    tensors = trace["tensors"]
    events = trace["events"]
    owners = {}  # .grad tensor → its owner
    for event in events:
        if event.get("grad_tensor"):
            owners.setdefault(event["grad_tensor"], event["tensor"])
    bound: dict[str, list[str]] = {}
    for tid, record in tensors.items():
        label = record["label"]
        if labels[tid] != label or tid in owners or label == "tensor":
            continue
        created = record["created"]
        span = events[created]["span"] if 0 <= created < len(events) else None
        if label != _expression(lines, span):  # a name, not the source text it was made by
            bound.setdefault(label, []).append(tid)
    for label, tids in bound.items():
        if len(tids) > 1:
            tids.sort(key=lambda t: (tensors[t]["created"], len(t), t))
            for k, tid in enumerate(tids, start=1):
                labels[tid] = f"{label}{subscript(k)}"
    for grad, owner in owners.items():
        if labels[grad] == f"{tensors[owner]['label']}.grad" and owner in labels:
            labels[grad] = f"{labels[owner]}.grad"


def _expression(lines: list[str], span: list | None) -> str:
    """The label the tracer gives a tensor no variable names: its span's text, whitespace
    collapsed, cut to LABEL_LIMIT (engine/tracer.py, `Tracer._expression`)."""
    if not span:
        return "tensor"
    line, col, end_line, end_col = span
    chunk = lines[line - 1 : end_line]
    if chunk:
        chunk[-1] = chunk[-1][:end_col] if line != end_line else chunk[-1][col:end_col]
        if line != end_line:
            chunk[0] = chunk[0][col:]
    text = " ".join(" ".join(chunk).split())
    return text if len(text) <= LABEL_LIMIT else text[: LABEL_LIMIT - 1] + "…"


def root_name(labels: dict[str, str], lines: list[str], tid: str, span: list | None) -> str:
    """What a backward's root is called: the expression `.backward()` was called on when it
    is a name (`loss.backward()` on a tensor made as `result` inside a function is `loss`),
    else the tensor's label. A name bound several times gives the tensor's own label (y₆)."""
    text = _source(lines, span)
    receiver = text[: text.rindex(".backward(")].strip() if ".backward(" in text else ""
    label = labels[tid]
    if receiver.split(".")[0] == "torch":  # torch.autograd.backward(loss): not a receiver
        return label
    if not receiver.isidentifier() and not all(p.isidentifier() for p in receiver.split(".")):
        return label
    if label == receiver or label.rstrip("₀₁₂₃₄₅₆₇₈₉") == receiver:
        return label
    return receiver


_INFIX = {"+": "+", "−": "-", "×": "*", "÷": "/", "@": "@", "**": "**"}


def _source(lines: list[str], span: list | None) -> str:
    """The text of a one-line span (as the tracer labels expressions)."""
    return span_text(lines, span) if one_line(span) else ""


def _derived(name: str, inputs: list, labels: Mapping[str, str]) -> tuple[str, str]:
    """A label from the op and its inputs' labels (`model.weightᵀ`, `relu(addmm(…))`), and
    its short form for use inside another such label."""
    names = [labels[t] if t is not None else "c" for t in inputs]
    mark = ops.symbol(name)
    if mark == "ᵀ" and names:
        text = short = f"{names[0]}ᵀ"
    elif mark in _INFIX and len(names) == 2:
        text = f"{names[0]} {_INFIX[mark]} {names[1]}"
        short = f"({text})"
    else:
        text, short = f"{mark}({', '.join(names)})", f"{mark}(…)"
    if len(text) > LABEL_LIMIT:
        text = text[: LABEL_LIMIT - 1] + "…"
    return text, short if len(short) <= LABEL_LIMIT else f"{mark}(…)"


# ***** small helpers *****


def _span(event: dict) -> tuple | None:
    span = event.get("span")
    return tuple(span) if span else None


def _maker(event: dict) -> str:
    return event.get("op") or event.get("name") or event["kind"]


def _tensor_classes(record: dict, event: dict, is_grad: bool) -> tuple[str, ...]:
    if is_grad:
        return ("tensor", "grad")
    if not record["is_leaf"]:
        return ("tensor", "nonleaf")
    if event["kind"] == "tensor" and event["op"] == "parameter":
        return ("tensor", "leaf", "requires-grad", "param")
    if record["requires_grad"]:
        return ("tensor", "leaf", "requires-grad")
    return ("tensor", "leaf")


def _tensor_title(record: dict, label: str) -> str:
    shape = record["shape"]
    kind = f"{values.dims(shape)} {record['dtype']}" if shape else record["dtype"]
    return f"{label}: {kind}"
