"""Events → steps: each step is one thing to look at, with its narration and what changes.

Most events are a step of their own (each op, each node's backward, each accumulation). A few
are grouped, because a learner would see them as one thing: the parameters one layer creates,
everything `opt.step()` does, and the free that ends a backward with the end itself.

A step says what changes in each view, as differences from the step before (see
docs/render.md): ids to `reveal` and `hide`, ids to `focus` on for this step only, texts for
`values` and `grads` lines, and `marks` ("freed", or "" once recorded afresh). A new forward
pass (a training loop's next iteration) hides what the new pass does not use, so every
iteration shows a fresh graph.

Very long traces are condensed (see `condense`), so that the player stays usable.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from functools import partial

from app.render import grads, ops, values
from app.render.explain import explain_error, explain_status
from app.render.graph import Scene
from app.render.narration import Narrator, operand

VIEWS = ("tensors", "autograd")
DELTA_KEYS = ("reveal", "hide", "focus", "values", "grads", "marks")
RECORDING = ("op", "inplace", "pass")  # steps that record nodes (again, for a stacked node)

# Events that are bookkeeping around something else: grouped with neighbours at the same span.
_QUIET_INPLACE = {"optimizer.step"}

FORWARD = {"tensor", "op", "inplace", "grad_mode", "print", "grad_set", "data_set", "write"}


def _grad_change(event: dict) -> bool:
    """The program changing a .grad: `x.grad = …`, zero_grad(), or its in-place zeroing."""
    return event["kind"] == "grad_set" or (
        event["kind"] == "inplace" and event["name"] == "zero_grad"
    )


def _quiet(event: dict) -> bool:
    kind = event["kind"]
    return (
        kind == "grad_mode"
        or (kind == "tensor" and event["op"] is None)
        or (kind == "inplace" and event["name"] in _QUIET_INPLACE)
    )


def batches(events: list[dict]) -> list[list[dict]]:
    """Consecutive events that make one step.

    One pass, in time linear in the events: what `_joins` asks of the whole batch (are all its
    events quiet? are all `tensor` events of one op?) is kept up to date as the batch grows, so a
    line run 20,000 times costs no more per event than a line run once."""
    out: list[list[dict]] = []
    all_quiet = False
    common_op: object = _MIXED
    for event in events:
        if out and _joins(out[-1][-1], event, all_quiet, common_op):
            out[-1].append(event)
            all_quiet = all_quiet and _quiet(event)
            if common_op is not _MIXED and _tensor_op(event) != common_op:
                common_op = _MIXED
        else:
            out.append([event])
            all_quiet = _quiet(event)
            common_op = _tensor_op(event)
    return out


_MIXED = object()  # a batch whose events are not all `tensor` events of one op


def _tensor_op(event: dict) -> object:
    return event["op"] if event["kind"] == "tensor" else _MIXED


def _joins(last: dict, event: dict, all_quiet: bool, common_op: object) -> bool:
    """Whether `event` joins the batch that ends with `last`: `all_quiet` says whether every
    event of that batch is quiet, `common_op` which op all of them make tensors with."""
    if event["kind"] == "backward_end" and last["kind"] == "free":
        return True
    if event["span"] != last["span"]:
        return False
    if _grad_change(event) and _grad_change(last):  # one statement's changes of .grad
        return True
    if _quiet(event) and all_quiet:
        return True
    return (
        event["kind"] == "tensor"
        and event["op"] not in (None, "detach", "data")
        and event["op"] == common_op
    )


class _Delta:
    """What one step changes in one view, before stacking and before `reveal` is worked out:
    `show` lists everything the step needs visible."""

    def __init__(self) -> None:
        self.show: list[str] = []
        self.focus: list[str] = []
        self.values: dict[str, str] = {}
        self.grads: dict[str, str] = {}
        self.freed: list[str] = []


class _Stepper:
    """Walks the events once, batch by batch, keeping what a step's narration and changes
    depend on: grad mode, versions, .grad values, the backward under way, what was freed."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.trace = scene.trace
        self.narrator = Narrator(scene)
        self.grad_enabled = True
        self.version: dict[str, int] = {}  # tensor id → its version now
        self.alias_version: dict[str, int] = {}  # its version, as a change through an alias left it
        self.grad_values: dict[str, object] = {}  # .grad tensor id → its value now
        self.grad_tensor: dict[str, str | None] = {}  # leaf → its latest .grad tensor
        self.owner_of: dict[str, str] = {}  # .grad tensor → whose .grad it is (last set)
        self.roots: list[str] = []  # the running backward's roots, as ∂root/∂x writes them
        self.in_backward = False
        self.ran: set[str] = set()
        self.reached: dict[str, None] = {}  # nodes that have a gradient waiting, in order
        self.freed: set[str] = set()
        self.changed: dict[str, list[int]] = defaultdict(list)  # tensor → seqs of its changes
        self.dirty = {view: set() for view in VIEWS}  # ids with a grads text showing
        self.savers: dict[str, list[str]] = defaultdict(list)  # tensor → nodes that saved it
        # .grad as the program holds it (app/render/grads.py), and where the tensors view says it
        self.history = grads.history(self.trace)
        self.grad_state: dict[str, grads.Known] = {}  # tensor → what its .grad holds now
        self.standing: dict[str, str] = {}  # element → its `grad …` statement ("" for none)
        self.placed: dict[str, str] = {}  # tensor → the element showing its statement
        self.badges: list[str] = []  # elements with a ∂root/∂x badge on the latest step
        # a leaf's AccumulateGrad nodes, in the order they were made: a leaf holds its node
        # weakly, so one made anew after its graph was freed is another node
        self.accumulators: dict[str, list[tuple[int, str]]] = defaultdict(list)
        self.accumulator_made: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for nid, record in self.trace["nodes"].items():
            if record.get("variable"):
                self.accumulators[record["variable"]].append((record["created"], nid))
                self.accumulator_made[record["created"]].append((record["variable"], nid))
        for made in self.accumulators.values():
            made.sort()
        self.phase = "forward"  # the phase the run is in
        self.root_names: dict[str, str] = {}  # a running backward's roots: label → ∂ name
        for nid, record in self.trace["nodes"].items():
            for saved in dict.fromkeys(record["saved"]):
                if saved == "result" and record["outputs"]:
                    self.savers[record["outputs"][0]].append(nid)
                elif saved not in (None, "result"):
                    self.savers[saved].append(nid)
        self.steps: list[dict] = []

    # ***** helpers *****

    def element(self, tid: str) -> str:
        """The tensors-view element of a tensor's current version."""
        return self.scene.version.get((tid, self.version.get(tid, 0)), tid)

    def step(
        self,
        kind: str,
        phase: str | None,
        events: list[dict],
        text: str | Callable[[], str],
        name: str = "",
    ) -> dict:
        """A new step. Its text may be a function: written only if the step survives
        condensing (see `condense`), which saves most of the work on very long traces.
        A phase of None: the phase the run is in (a print after a backward is not forward)."""
        if phase is None:
            phase = self.phase
        self.phase = phase
        step = {
            "kind": kind,
            "phase": phase,
            "seq": [events[0]["seq"], events[-1]["seq"]] if events else None,
            "generation": self.scene.gens[events[0]["seq"]] if events else self._last_gen(),
            "span": events[0]["span"] if events else None,
            "text": text,
            "name": name,  # what the step is about (an op's name), to spot repeats
            "tensors": _Delta(),
            "autograd": _Delta(),
        }
        self.steps.append(step)
        for element in self.badges:  # a gradient passing through is gone after its step
            step["tensors"].grads[element] = self.standing.get(element, "")
        self.badges = []
        return step

    def badge(self, delta: _Delta, element: str, of: str, grad: object) -> None:
        """The gradient passing through a tensor, on this step only: ∂d/∂c = 1."""
        root = operand(self.roots[0]) if len(self.roots) == 1 else "L"
        of = self.root_names.get(of, of)  # the root itself is ∂L/∂L, whatever its label
        delta.grads[element] = f"∂{root}/∂{operand(of)} = {values.box(grad)}"
        self.badges.append(element)

    def settle_grads(self, batch: list[dict]) -> None:
        """The latest step's `grad …` statements: every .grad the batch's events changed,
        and those of tensors an in-place change gave a new version."""
        touched: dict[str, None] = {}
        made: list[tuple[str, str]] = []  # (leaf, node) of each AccumulateGrad the batch made
        for event in batch:
            for tid, state in self.history.get(event["seq"], ()):
                self.grad_state[tid] = state
                touched[tid] = None
            if event["kind"] == "inplace" and event["tensor"] in self.grad_state:
                touched[event["tensor"]] = None
            made += self.accumulator_made.get(event["seq"], ())
        if not touched and not made:
            return
        step = self.steps[-1]
        view, graph = step["tensors"], step["autograd"]
        for leaf, nid in made:  # a .grad the leaf had before this node: the node says it
            if leaf in self.grad_state and leaf not in touched:
                said = values.box(self.grad_state[leaf].value)
                graph.values[nid] = f"{self.scene.labels[leaf]}.grad = {said}"
        last = batch[-1]["seq"]
        for tid in touched:
            said = values.box(self.grad_state[tid].value)
            text = f"grad {said}"
            element, old = self.element(tid), self.placed.get(tid)
            if old is not None and old != element:  # a new version carries the statement
                if self.standing.get(old) and old not in self.badges:
                    view.grads[old] = ""
                self.standing[old] = ""
            said_before = self.standing.get(element) or element in self.badges
            self.standing[element], self.placed[tid] = text, element
            if element not in self.badges and (text or said_before):
                view.grads[element] = text
            nid = self.accumulator_at(tid, last)
            if nid is not None:
                graph.values[nid] = f"{self.scene.labels[tid]}.grad = {said}"

    def accumulator_at(self, leaf: str, seq: int) -> str | None:
        """The leaf's latest AccumulateGrad made by event `seq`, if any."""
        latest = None
        for created, nid in self.accumulators.get(leaf, ()):
            if created > seq:
                break
            latest = nid
        return latest

    def _last_gen(self) -> int:
        return self.scene.gens[-1] if self.scene.gens else 1

    # ***** walking the events *****

    def run(self) -> list[dict]:
        for batch in batches(self.trace["events"]):
            self.batch(batch)
            self.settle_grads(batch)
        self.ending()
        if not self.steps:
            self.step(
                "done",
                "forward",
                [],
                "The snippet ran to its end without making a tensor, so there is no graph.",
            )
        return self.steps

    def batch(self, batch: list[dict]) -> None:
        first = batch[0]
        kind = first["kind"]
        if any(e["kind"] == "inplace" and e["name"] in _QUIET_INPLACE for e in batch):
            self.optimizer(batch)
        elif _grad_change(first):
            self.grad_changes(batch)
        elif kind == "tensor":
            self.tensor(batch)
        elif kind == "grad_mode":
            self.grad_mode(batch)
        else:
            getattr(self, kind)(batch)

    # A batch of quiet events may mix grad-mode switches and the engine's own tensors, so the
    # next two take from it the events of each kind.

    def grad_mode(self, batch: list[dict]) -> None:
        switches = [e for e in batch if e["kind"] == "grad_mode"]
        for event in switches:
            self.grad_enabled = event["enabled"]
        step = self.step(
            "grad_mode",
            None,
            batch,
            partial(" ".join, [self.narrator.grad_mode(e) for e in switches]),
        )
        step["tensors"].show += [e["tensor"] for e in batch if e["kind"] == "tensor"]

    def tensor(self, batch: list[dict]) -> None:
        made = [e for e in batch if e["kind"] == "tensor"]
        for event in batch:
            if event["kind"] == "grad_mode":
                self.grad_enabled = event["enabled"]
        step = self.step(
            "tensor",
            None,
            batch,
            partial(self.narrator.tensors_made, made, self.in_backward),
            batch[0]["op"] or "",
        )
        view = step["tensors"]
        for event in made:
            tid = event["tensor"]
            view.show += [self.element(src) for src in event["inputs"]]
            view.show += self.scene.detach_edges.get(tid, [])
            view.show.append(tid)
            view.focus.append(tid)

    def op(self, batch: list[dict]) -> None:
        (event,) = batch
        step = self.step(
            "op",
            "forward" if event["node"] is not None else None,
            batch,
            partial(self.narrator.op, event, self.grad_enabled, self.in_backward),
            event["name"],
        )
        self.forward_op(step, event)

    def forward_op(self, step: dict, event: dict) -> None:
        """What an op (or in-place op) shows in both views."""
        seq = event["seq"]
        view = step["tensors"]
        op = self.scene.op_element[seq]
        edges = self.scene.tensors.edges
        inputs = [edges[e].tail for e in self.scene.in_edges[seq] if e]
        outputs = [edges[e].head for e in self.scene.out_edges[seq]]
        view.show += inputs + [e for e in self.scene.in_edges[seq] if e] + [op]
        view.show += self.scene.out_edges[seq] + outputs
        view.focus += [op, *outputs]
        nid = event["node"]
        if nid is None:
            return
        graph = step["autograd"]
        nexts = [t for t, _ in self.trace["nodes"][nid]["next"] if t is not None]
        graph.show += [*nexts, nid]
        graph.show += [e for e in self.scene.next_edges[nid] if e]
        graph.show += self.scene.saved_boxes[nid] + self.scene.saved_links[nid]
        graph.focus += [nid, *self.scene.saved_boxes[nid]]

    def inplace(self, batch: list[dict]) -> None:
        (event,) = batch
        tid = event["tensor"]
        saved_by = self.live_savers(tid, event["seq"])
        self.version[tid] = event["version"]
        if tid in self.grad_values:  # w.grad.zero_(): what the next backward adds to
            self.grad_values[tid] = event["value"]
        self.changed[tid].append(event["seq"])
        text = partial(self.narrator.inplace, event, self.grad_enabled, saved_by)
        recorded = "forward" if event["node"] is not None else None
        step = self.step("inplace", recorded, batch, text, event["name"])
        self.forward_op(step, event)
        self.shared(step, event)

    def shared(self, step: dict, event: dict) -> None:
        """The tensors sharing the changed memory: each current box shows what it holds now."""
        view = step["tensors"]
        for alias in event.get("aliases", ()):
            tid = alias["tensor"]
            element = self.element(tid)
            view.values[element] = values.box(alias["value"])
            view.show.append(element)
            if tid in self.grad_values:  # a .grad changed through a detach() or .data copy
                self.grad_values[tid] = alias["value"]
            # a view or detach() shares the counter too (saved tensors see the change); .data not
            if alias["version"] > max(self.alias_version.get(tid, 0), self.version.get(tid, 0)):
                self.changed[tid].append(event["seq"])
            self.alias_version[tid] = alias["version"]

    def data_set(self, batch: list[dict]) -> None:
        (event,) = batch
        tid = event["tensor"]
        if tid in self.grad_values:
            self.grad_values[tid] = event["value"]
        text = partial(self.narrator.data_set, event)
        step = self.step("data_set", None, batch, text)
        view, element = step["tensors"], self.element(tid)
        view.values[element] = values.box(event["value"])
        view.show += [self.element(event["source"]), element]
        view.focus.append(element)

    def write(self, batch: list[dict]) -> None:
        (event,) = batch
        tid = event["tensor"]
        if tid in self.grad_values:
            self.grad_values[tid] = event["value"]
        step = self.step("write", None, batch, partial(self.narrator.write, event))
        view, element = step["tensors"], self.element(tid)
        view.values[element] = values.box(event["value"])
        view.show.append(element)
        view.focus.append(element)
        self.shared(step, event)

    def live_savers(self, tid: str, seq: int) -> list[str]:
        """Names of the nodes, made before `seq` and not yet freed, that saved this tensor."""
        nodes = self.trace["nodes"]
        return list(
            dict.fromkeys(
                nodes[n]["name"]
                for n in self.savers.get(tid, ())
                if n not in self.freed and nodes[n]["created"] < seq
            )
        )

    def optimizer(self, batch: list[dict]) -> None:
        step = self.step(
            "inplace",
            None,
            batch,
            partial(self.narrator.optimizer_step, batch),
            "optimizer.step",
        )
        for event in batch:
            if event["kind"] == "grad_mode":
                self.grad_enabled = event["enabled"]
            elif event["kind"] == "inplace":
                self.version[event["tensor"]] = event["version"]
                self.changed[event["tensor"]].append(event["seq"])
                self.forward_op(step, event)
                self.shared(step, event)
            elif event["kind"] == "tensor":
                step["tensors"].show.append(event["tensor"])

    def grad_changes(self, batch: list[dict]) -> None:
        """One statement's changes of .grad: each owner, and the .grad it now has."""
        for event in batch:
            if event["kind"] == "grad_set":
                grad = event["grad_tensor"]
                self.grad_tensor[event["tensor"]] = grad
                if grad is not None:
                    self.owner_of[grad] = event["tensor"]
                    self.grad_values[grad] = event["grad"]
        text = partial(self.narrator.grad_changes, batch, dict(self.owner_of))
        step = self.step("grad_set", None, batch, text)
        view = step["tensors"]
        for event in batch:
            if event["kind"] == "inplace":  # zero_grad(set_to_none=False) zeroes in place
                tid = event["tensor"]
                self.version[tid] = event["version"]
                self.changed[tid].append(event["seq"])
                if tid in self.grad_values:
                    self.grad_values[tid] = event["value"]
                self.forward_op(step, event)
                self.shared(step, event)
                continue
            owner = self.element(event["tensor"])
            view.show.append(owner)
            view.focus.append(owner)
            grad = event["grad_tensor"]
            if grad is not None:
                shown = self.element(grad)
                view.show += [self.scene.grad_links[grad], shown]
                view.focus.append(shown)

    def retain_grad(self, batch: list[dict]) -> None:
        (event,) = batch
        root = self.roots[0] if self.roots else "the output"
        text = partial(self.narrator.retain_grad, event, root)
        tid = event["tensor"]
        if not event["captured"]:
            step = self.step("retain_grad", None, batch, text)
            step["tensors"].focus.append(self.element(tid))
            return
        step = self.step("retain_grad", "backward", batch, text)
        view, grad = step["tensors"], event["grad_tensor"]
        self.grad_values[grad] = event["grad"]
        self.owner_of[grad] = tid
        shown = self.element(grad)
        view.show += [self.element(tid), self.scene.grad_links[grad], shown]
        view.focus += [self.element(tid), shown]
        view.values[shown] = values.box(event["grad"])

    def print(self, batch: list[dict]) -> None:
        (event,) = batch
        self.step("print", None, batch, partial(self.narrator.printed, event))

    # ***** backward *****

    def backward_begin(self, batch: list[dict]) -> None:
        (event,) = batch
        self.in_backward = True
        span = event["span"] if len(event["roots"]) == 1 else None
        self.roots = [self.narrator.root(t, span) for t in event["roots"]]
        self.root_names = dict(
            zip((self.scene.labels[t] for t in event["roots"]), self.roots, strict=True)
        )
        self.ran, self.reached = set(), {}
        step = self.step(
            "backward_begin", "backward", batch, partial(self.narrator.backward_begin, event)
        )
        for view in VIEWS:  # the last backward's gradients are stale now
            step[view].grads.update({i: "" for i in sorted(self.dirty[view])})
            self.dirty[view].clear()
        graph, view = step["autograd"], step["tensors"]
        for (box, edge), grad in zip(
            self.scene.root_edges[event["seq"]], event["grads"], strict=True
        ):
            graph.show.append(box)
            graph.focus.append(box)
            if edge:
                graph.show.append(edge)
                self.grad(graph, "autograd", edge, values.box(grad))
                self.reached[self.scene.autograd.edges[edge].tail] = None
        for tid, name, grad in zip(event["roots"], self.roots, event["grads"], strict=True):
            shown = self.element(tid)
            view.focus.append(shown)
            self.badge(view, shown, name, grad)  # ∂L/∂L = 1 for a root called L

    def grad(self, delta: _Delta, view: str, element: str, text: str) -> None:
        delta.grads[element] = text
        self.dirty[view].add(element)

    def node_backward(self, batch: list[dict]) -> None:
        (event,) = batch
        nid = event["node"]
        record = self.trace["nodes"][nid]
        self.ran.add(nid)
        root = self.roots[0] if len(self.roots) == 1 else "the output"
        step = self.step(
            "node_backward",
            "backward",
            batch,
            partial(self.narrator.node_backward, event, root),
            record["name"],
        )
        graph, view = step["autograd"], step["tensors"]
        graph.focus.append(nid)
        for slot, edge in enumerate(self.scene.next_edges[nid]):
            grad = event["grad_inputs"][slot] if slot < len(event["grad_inputs"]) else None
            if edge is None or grad is None:
                continue
            graph.focus.append(edge)
            self.grad(graph, "autograd", edge, values.box(grad))
            self.reached[record["next"][slot][0]] = None
        seq = self.scene.node_event[nid]
        op = self.scene.op_element.get(seq)
        if op is None:
            return
        view.focus.append(op)
        for edge, tid, grad in zip(
            self.scene.out_edges[seq], record["outputs"], event["grad_outputs"], strict=False
        ):
            out = self.scene.tensors.edges[edge].head
            view.focus.append(out)
            if grad is not None:
                self.badge(view, out, self.scene.labels[tid], grad)
        for slot, edge in enumerate(self.scene.in_edges[seq]):
            grad = event["grad_inputs"][slot] if slot < len(event["grad_inputs"]) else None
            if edge is None or grad is None or record["next"][slot][0] is None:
                continue
            view.focus.append(edge)
            self.grad(view, "tensors", edge, values.box(grad))

    def accumulate(self, batch: list[dict]) -> None:
        (event,) = batch
        leaf, grad, nid = event["tensor"], event["grad_tensor"], event["node"]
        before = self.grad_values.get(grad)
        self.grad_values[grad] = event["grad"]
        previous = self.grad_tensor.get(leaf, grad)
        # a new .grad tensor for a leaf: after the program set .grad to None (a grad_set
        # event, so previous is None) what is added is all there is; with a .grad still there,
        # backward(create_graph=True) added out of place, old + new, into a new tensor
        if previous is not None and previous != grad:
            before = self.grad_values.get(previous)
        reset = previous != grad and before is None
        self.grad_tensor[leaf] = grad
        self.owner_of[grad] = leaf
        self.ran.add(nid)
        text = partial(self.narrator.accumulate, event, before, reset)
        step = self.step("accumulate", "backward", batch, text, leaf)
        graph = step["autograd"]
        graph.focus.append(nid)
        view = step["tensors"]
        shown, owner = self.element(grad), self.element(leaf)
        view.show += [owner, self.scene.grad_links[grad], shown]
        view.focus += [owner, shown]
        view.values[shown] = values.box(event["grad"])  # (owner's grad slot: settle_grads)

    def free(self, batch: list[dict]) -> None:
        free = batch[0]
        end = batch[1] if len(batch) > 1 else None
        self.freed.update(free["nodes"])
        text = partial(self.narrator.backward_end, end or {"retain_graph": False}, free)
        step = self.step("free", "freed", batch, text)
        for nid in free["nodes"]:
            step["autograd"].freed += [nid, *self.scene.saved_boxes[nid]]
            op = self.scene.op_element.get(self.scene.node_event[nid])
            if op is not None:
                step["tensors"].freed.append(op)
        self.in_backward = False

    def backward_end(self, batch: list[dict]) -> None:
        (event,) = batch
        self.step(
            "backward_end", "backward", batch, partial(self.narrator.backward_end, event, None)
        )
        self.in_backward = False

    # ***** errors and limits *****

    def error(self, batch: list[dict]) -> None:
        (event,) = batch
        kind, message = event["type"], event["message"]
        failing, why = self.failing(message) if self.in_backward else ([], "")
        names = [ops.plain(self.trace["nodes"][n]["name"]) for n in failing]
        text = self.narrator.error(kind, message, names, why)
        step = self.step("error", "error", batch, text)
        step["error"] = _error_box(kind, message)
        for nid in failing:
            step["autograd"].focus += [nid, *self.scene.saved_boxes.get(nid, [])]
            op = self.scene.op_element.get(self.scene.node_event.get(nid, -1))
            if op is not None:
                step["tensors"].focus.append(op)

    def failing(self, message: str) -> tuple[list[str], str]:
        """The node a backward() failed at: one with a gradient waiting that had not run, and
        (when the message says why) that lost its saved tensors or saw them changed."""
        waiting = [n for n in self.reached if n not in self.ran]
        if "second time" in message:
            hit = [n for n in waiting if n in self.freed]
            return hit[:1], ", whose saved tensors the earlier backward() freed"
        if "inplace operation" in message:
            for nid in waiting:
                record = self.trace["nodes"][nid]
                for saved in record["saved"]:
                    tid = record["outputs"][0] if saved == "result" else saved
                    if tid and any(s > record["created"] for s in self.changed.get(tid, ())):
                        return [nid], (
                            f", which saved {self.scene.labels[tid]} before it was changed in place"
                        )
            return [], ""
        return waiting[:1], ""

    def ending(self) -> None:
        """Steps for how the run ended, when the events alone do not say it."""
        trace = self.trace
        events = trace["events"]
        outcome = trace["outcome"]
        last = events[-1] if events else None
        stopped_line = trace["limits"].get("stopped_line")  # (traces stored before lack it)
        if stopped_line is not None:
            self.recording_stopped(stopped_line, outcome["status"])
        if outcome["status"] == "error" and (last is None or last["kind"] != "error"):
            kind, message = outcome["type"], outcome["message"]
            text = self.narrator.error(kind, message, [], "")
            step = self.step("error", "error", [], text)
            step["span"] = outcome.get("span")
            step["error"] = _error_box(kind, message)
        elif outcome["status"] not in ("ok", "error"):
            status, message = outcome["status"], outcome.get("message")
            step = self.step("limit", "error", [], self.narrator.stopped(status, message))
            step["span"] = last["span"] if last else None
            step["error"] = {
                "type": status,
                "message": message or "",
                "explanation": explain_status(status),
            }
        if (
            trace["limits"]["truncated"]
            and stopped_line is None
            and outcome["status"] in ("ok", "error")
        ):
            # a trace stored before the snippet ran on past the cap, or one cut for its size
            # (an event_limit or output_limit ending has said so already, in its own words)
            limit = trace["limits"]["max_events"]
            step = self.step("limit", "error", [], self.narrator.truncated(last, limit))
            step["span"] = last["span"] if last else None
            step["error"] = {
                "type": "truncated",
                "message": f"The trace stops after {limit:,} events.",
                "explanation": "Everything up to here is shown; a shorter loop shows the rest.",
            }

    def recording_stopped(self, line: int, status: str) -> None:
        """The event cap stopped recording at `line`; the snippet ran on, unrecorded, to its
        end (which the steps after this one tell, when it was not a plain finish)."""
        limit = self.trace["limits"]["max_events"]
        text = self.narrator.recording_stopped(line, limit, finished=status == "ok")
        step = self.step("limit", None, [], text)
        code_lines = self.trace["code"].splitlines()
        width = len(code_lines[line - 1]) if 0 < line <= len(code_lines) else 0
        step["span"] = [line, 0, line, width]
        step["error"] = {
            "type": "recording_stopped",
            "message": f"Recording stopped at line {line} after {limit:,} events.",
            "explanation": "The snippet ran on to its end; everything it printed is shown.",
        }


def _error_box(kind: str, message: str) -> dict:
    return {"type": kind, "message": message, "explanation": explain_error(kind, message)}


def build(scene: Scene) -> list[dict]:
    """The steps of a trace, with ids as in the full graphs and `show` lists (see `finish`)."""
    steps = condense(_Stepper(scene).run(), scene)
    for step in steps:
        if callable(step["text"]):
            step["text"] = step["text"]()
    _add_prefixes(steps, scene)
    return steps


# ***** condensing very long traces *****

STEP_LIMIT = 2000  # past this many steps, repeats are condensed
KEEP_PASSES = 2  # the first passes of a long loop, and its last, keep every step
KEEP_RUN = (2, 1)  # a long run of alike steps keeps this many at its start and its end


def condense(steps: list[dict], scene: Scene) -> list[dict]:
    """A long loop's steps, condensed so that the player stays usable: the middle passes of a
    training loop become one step each, and a long run of alike steps (a 1,000-step chain)
    keeps its first and last steps around one that stands for the rest."""
    if len(steps) <= STEP_LIMIT:
        return steps
    last = max(step["generation"] for step in steps)
    if last > KEEP_PASSES + 2:
        out: list[dict] = []
        for step in steps:
            gen = step["generation"]
            if KEEP_PASSES < gen < last and step["kind"] not in ("error", "limit"):
                if out and out[-1]["kind"] == "pass" and out[-1]["generation"] == gen:
                    _absorb(out[-1], step)
                    continue
                summary = _blank(step, "pass")
                summary["summary"] = _PassSummary(scene, gen, first=gen == KEEP_PASSES + 1)
                _absorb(summary, step)
                out.append(summary)
            else:
                out.append(step)
        steps = out
    return _condense_runs(steps, scene)


def _blank(step: dict, kind: str) -> dict:
    return {
        "kind": kind,
        "phase": "forward" if kind == "pass" else step["phase"],
        "seq": list(step["seq"]) if step["seq"] else None,
        "generation": step["generation"],
        "span": None if kind == "pass" else step["span"],
        "text": "",
        "name": step["name"],
        "tensors": _Delta(),
        "autograd": _Delta(),
    }


def _absorb(into: dict, step: dict) -> None:
    """Fold a step's changes into a condensed one: what it focused on is simply shown."""
    if step["seq"] and into["seq"]:
        into["seq"][1] = step["seq"][1]
    for view in VIEWS:
        a, b = into[view], step[view]
        a.show += b.show + b.focus
        a.values.update(b.values)
        a.grads.update(b.grads)
        a.freed += b.freed
    summary = into.get("summary")
    if summary is not None:
        summary.add(step)


class _PassSummary:
    """What one condensed pass of a loop did, for its one sentence."""

    def __init__(self, scene: Scene, gen: int, first: bool) -> None:
        self.scene, self.gen, self.first = scene, gen, first
        self.recorded = 0
        self.grads: dict[str, object] = {}  # leaf → its .grad after this pass
        self.printed: list[str] = []

    def add(self, step: dict) -> None:
        if not step["seq"]:
            return
        events = self.scene.trace["events"][step["seq"][0] : step["seq"][1] + 1]
        for event in events:
            kind = event["kind"]
            if kind in ("op", "inplace") and event["node"] is not None:
                self.recorded += 1
            elif kind == "accumulate":
                self.grads[event["tensor"]] = event["grad"]
            elif kind == "print":
                self.printed.append(event["text"].strip())

    def text(self) -> str:
        parts = [f"Pass {self.gen} runs the loop body again"]
        if self.recorded:
            parts.append(
                f"autograd records a fresh graph of {self.recorded:,} node"
                f"{'s' if self.recorded != 1 else ''}"
            )
        if self.grads:
            labels = self.scene.labels
            filled = [f"{labels[t]}.grad = {values.say(g)}" for t, g in self.grads.items()]
            parts.append("backward() gives " + ", ".join(filled))
        text = ": ".join(parts[:2]) + ("; " + "; ".join(parts[2:]) if len(parts) > 2 else "")
        text += "."
        if self.printed:
            text += f" It prints “{self.printed[-1][:60]}”."
        if self.first:
            text += (
                f" (This loop runs many times, so from pass {self.gen} until the last, each pass "
                f"is one step; the first passes and the last show every step.)"
            )
        return text


def _condense_runs(steps: list[dict], scene: Scene) -> list[dict]:
    head, tail = KEEP_RUN
    out: list[dict] = []
    i = 0
    while i < len(steps):
        j = i
        key = _run_key(steps[i])
        while key is not None and j + 1 < len(steps) and _run_key(steps[j + 1]) == key:
            j += 1
        run = steps[i : j + 1]
        if len(run) > head + tail + 2:
            middle = run[head : len(run) - tail]
            merged = _blank(middle[0], middle[0]["kind"])
            for step in middle:
                _absorb(merged, step)
            merged["text"] = _run_text(middle, scene)
            out += [*run[:head], merged, *run[len(run) - tail :]]
        else:
            out += run
        i = j + 1
    return out


def _run_key(step: dict) -> tuple | None:
    if step["kind"] in ("error", "limit", "pass", "done"):
        return None
    return (step["kind"], tuple(step["span"] or ()), step["name"], step["generation"])


def _run_text(middle: list[dict], scene: Scene) -> str:
    n, first = len(middle), middle[0]
    kind, name = first["kind"], first["name"]
    if kind == "op":
        text = f"The loop runs this line {n:,} more times, recording another {name} node each time."
    elif kind == "node_backward":
        text = (
            f"{name} runs {n:,} more times, once for each node of the chain, passing the "
            f"gradient along."
        )
    elif kind == "tensor":
        text = f"This line makes {n:,} more tensors the same way."
    elif kind == "accumulate":
        text = f"{n:,} more leaves get their .grad the same way."
    else:
        text = f"{n:,} more steps like the ones before happen here."
    return f"{text} (Condensed into one step.)"


def _add_prefixes(steps: list[dict], scene: Scene) -> None:
    """ "Line 4: " before forward steps, and a sentence where a new forward pass begins."""
    gen = 1
    for step in steps:
        if step["kind"] == "pass":
            step["text"] = step.pop("summary").text()
            gen = step["generation"]
        if step["generation"] != gen:
            gen = step["generation"]
            step["text"] = (
                f"A new forward pass begins (pass {gen}): autograd records a fresh graph, "
                f"the previous one is gone. " + step["text"]
            )
        span = step["span"]
        if span and (
            step["kind"] in FORWARD
            or step["kind"] in ("backward_begin", "error", "limit")
            or (step["kind"] == "retain_grad" and step["phase"] == "forward")
        ):
            step["text"] = f"Line {span[0]}: {step['text']}"


def finish(
    steps: list[dict],
    rename: dict[str, dict[str, str]],
    silent: dict[str, set[str]] | None = None,
) -> list[dict]:
    """Final steps: ids renamed (stacked nodes, module boxes), and `show` turned into `reveal`
    and `hide`. The values and grads of the ids in `silent` (what a module box holds) are not
    shown: a box stands for what it did, not for the numbers inside it.

    `reveal` lists only what becomes visible at a step. When a new forward pass begins, `hide`
    lists what was visible and the new pass does not use.
    """
    out = [{key: step[key] for key in STEP_KEYS if key in step} for step in steps]
    for index, step in enumerate(out):
        step["index"] = index
    for view in VIEWS:
        names = rename.get(view, {})
        quiet = (silent or {}).get(view, set())

        def mapped(ids: list[str], names: dict[str, str] = names) -> list[str]:
            return list(dict.fromkeys(names.get(i, i) for i in ids)) if names else ids

        deltas = []
        for step in steps:
            delta: _Delta = step[view]
            deltas.append(
                {
                    "show": mapped(delta.show),
                    "focus": mapped(delta.focus),
                    "values": {
                        names.get(k, k): v for k, v in delta.values.items() if k not in quiet
                    },
                    "grads": {names.get(k, k): v for k, v in delta.grads.items() if k not in quiet},
                    "freed": mapped(delta.freed),
                }
            )
        needed: dict[int, set[str]] = defaultdict(set)
        for step, delta in zip(steps, deltas, strict=True):
            needed[step["generation"]].update(_touched(delta))
        visible: dict[str, None] = {}
        marked: set[str] = set()
        gen = steps[0]["generation"] if steps else 1
        for step, delta, final in zip(steps, deltas, out, strict=True):
            result: dict = {}
            if step["generation"] != gen:
                gen = step["generation"]
                hide = [i for i in visible if i not in needed[gen]]
                for i in hide:
                    del visible[i]
                if hide:
                    result["hide"] = hide
            reveal = [i for i in _touched(delta) if i not in visible]
            for i in reveal:
                visible[i] = None
            if reveal:
                result["reveal"] = reveal
            for key in ("focus", "values", "grads"):
                if delta[key]:
                    result[key] = delta[key]
            marks = {}
            if marked and step["kind"] in RECORDING:  # a stacked node recorded afresh
                for i in [*delta["show"], *delta["focus"]]:
                    if i in marked:
                        marks[i] = ""
                        marked.discard(i)
            for i in delta["freed"]:
                marks[i] = "freed"
                marked.add(i)
            if marks:
                result["marks"] = marks
            final[view] = {key: result[key] for key in DELTA_KEYS if key in result}
    return [{key: step[key] for key in ORDER if key in step} for step in out]


STEP_KEYS = ("seq", "kind", "phase", "generation", "span", "text", "error")
ORDER = ("index", *STEP_KEYS, *VIEWS)


def _touched(delta: dict) -> list[str]:
    """Everything a step needs visible (a grads text being cleared does not count)."""
    grads = [k for k, v in delta["grads"].items() if v]
    said = [k for k, v in delta["values"].items() if v]  # ("" unsays a value: a .grad unknown)
    return list(dict.fromkeys([*delta["show"], *delta["focus"], *said, *grads, *delta["freed"]]))
