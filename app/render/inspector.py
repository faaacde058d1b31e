"""What the node inspector shows when a learner clicks an element: facts from the trace.

Keyed by element id (contract C1), so the player looks a click up directly: tensors (`t3`, its
versions `t3-v1` after an in-place change, `t3-root` where a backward starts), autograd nodes
(`n2`), what a node saved (`n1-s0`) and operations (`o5`). Edges and stacks say nothing more
than their tooltip.

Facts are written as PyTorch prints them: `.grad` as `print(t.grad)` shows it (the engine's own
printing, engine/printing.py), `grad_fn` and `next_functions` as `<MulBackward0 object at
0x…>`, saved tensors by PyTorch's attribute names (`_saved_self`). An object's address is where
it sits in memory, different on every run, so the trace keeps none: its form stays, the digits
are `…`. A fact that changes during the run (`.grad`, `_version`, whether saved tensors are
freed) is a list of `[step, text]` pairs, the first at step 0: the text shown from that step on.
"""

from __future__ import annotations

import re

import numpy as np

from app.render import grads, graph, ops, values
from app.render.spans import span_text
from engine import printing
from engine.saved import RESULT_NAMES, input_names

_TENSOR = re.compile(r"^(t\d+)(?:-v(\d+)|-root)?$")
_NODE = re.compile(r"^(n\d+)$")
_SAVED = re.compile(r"^(n\d+)-s(\d+)$")
_OP = re.compile(r"^o(\d+)$")

# Ops whose result shares its input's memory, and so its version counter (`v = x[0]; v.add_(1)`
# bumps x._version too). UnsafeView is not one: PyTorch gives it a counter of its own.
VIEWS = {
    "ViewBackward0",
    "AliasBackward0",
    "TBackward0",
    "PermuteBackward0",
    "TransposeBackward0",
    "SqueezeBackward0",
    "SqueezeBackward1",
    "SqueezeBackward4",
    "UnsqueezeBackward0",
    "ExpandBackward0",
    "SelectBackward0",
    "SliceBackward0",
    "UnbindBackward0",
}

ADDRESS = "0x…"


def facts(trace: dict, element_ids: list[str], steps: list[dict]) -> dict[str, list[list]]:
    """[term, detail] rows for each element id that stands for a tensor, a node, something a
    node saved, or an operation. Linear in the trace and the ids."""
    return _Facts(trace, steps).rows(element_ids)


def saved_name(node_name: str, slot: int | None) -> str:
    """PyTorch's attribute for a saved tensor: `_saved_result`, `_saved_self`, `_saved_mat2`."""
    if slot is None:
        return f"_saved_{RESULT_NAMES.get(node_name, 'result')}"
    names = input_names(node_name)
    return f"_saved_{names[slot]}" if slot < len(names) else f"_saved_{slot}"


def object_text(name: str | None) -> str:
    """A node as PyTorch prints it: None, or <MulBackward0 object at 0x…>."""
    return "None" if name is None else f"<{name} object at {ADDRESS}>"


class _Facts:
    def __init__(self, trace: dict, steps: list[dict]) -> None:
        self.trace = trace
        self.tensors = trace["tensors"]
        self.nodes = trace["nodes"]
        self.events = trace["events"]
        self.lines = trace["code"].splitlines()
        self.labels = graph.display_labels(trace)
        self.step_of = _step_of(steps, len(self.events))
        self.grad_rows: dict[str, list[list]] = {}  # tensor → its .grad over the run
        for seq, changes in sorted(grads.history(trace).items()):
            for tid, state in changes:
                row = self.grad_rows.setdefault(tid, [[0, "None"]])
                _put(row, self.step_of[seq], self._grad_text(state))
        self.version_rows: dict[str, list[list]] = {}
        self.version_fn: dict[tuple[str, int], str | None] = {}  # (tensor, version) → grad_fn
        self.version_value: dict[tuple[str, int], object] = {}  # its values then
        self.freed_at: dict[str, int] = {}  # node → the step its saved tensors were freed
        fn_now: dict[str, str | None] = {}  # tensor → its grad_fn after its latest change
        self.base: dict[str, str] = {}  # a view → the tensor whose memory (and counter) it shares
        # (tensor, version) → [(step, value)]: its values changed through memory it shares
        self.later_values: dict[tuple[str, int], list[tuple[int, object]]] = {}
        own: dict[str, int] = {}  # tensor → the version its own latest in-place change gave it
        for event in self.events:
            kind = event["kind"]
            step = self.step_of[event["seq"]]
            if kind in ("data_set", "write"):
                tid = event["tensor"]
                self.later_values.setdefault((tid, own.get(tid, 0)), []).append(
                    (step, event["value"])
                )
            for alias in event.get("aliases", ()) if kind in ("inplace", "write") else ():
                tid = alias["tensor"]
                self.later_values.setdefault((tid, own.get(tid, 0)), []).append(
                    (step, alias["value"])
                )
                row = self.version_rows.setdefault(self.base.get(tid, tid), [[0, "0"]])
                _put(row, step, str(alias["version"]))
            if kind == "inplace":
                own[event["tensor"]] = event["version"]
            if kind == "op" and event["name"] in VIEWS and event["inputs"] and event["inputs"][0]:
                source = event["inputs"][0]
                for out in event["outputs"]:
                    self.base[out] = self.base.get(source, source)
            elif kind == "inplace":
                tid = event["tensor"]
                row = self.version_rows.setdefault(self.base.get(tid, tid), [[0, "0"]])
                _put(row, self.step_of[event["seq"]], str(event["version"]))
                self.version_value[(tid, event["version"])] = event["value"]
                fn_now[tid] = event["node"] or fn_now.get(tid, self.tensors[tid].get("grad_fn"))
                self.version_fn[(tid, event["version"])] = fn_now[tid]
            elif kind == "free":
                for nid in event["nodes"]:
                    self.freed_at.setdefault(nid, self.step_of[event["seq"]])

    def rows(self, element_ids: list[str]) -> dict[str, list[list]]:
        out: dict[str, list[list]] = {}
        for element in element_ids:
            rows = None
            if match := _TENSOR.match(element):
                if match.group(1) in self.tensors:
                    version = int(match.group(2)) if match.group(2) else 0
                    rows = self.tensor(match.group(1), version, element.endswith("-root"))
            elif match := _NODE.match(element):
                if match.group(1) in self.nodes:
                    rows = self.node(match.group(1))
            elif match := _SAVED.match(element):
                if match.group(1) in self.nodes:
                    rows = self.saved(match.group(1), int(match.group(2)))
            elif match := _OP.match(element):
                seq = int(match.group(1))
                if seq < len(self.events) and self.events[seq]["kind"] in ("op", "inplace"):
                    rows = self.op(self.events[seq])
            if rows is not None:
                out[element] = rows
        return out

    # ***** tensors *****

    def tensor(self, tid: str, version: int, root: bool) -> list[list]:
        record = self.tensors[tid]
        fn = self.version_fn.get((tid, version), record.get("grad_fn"))  # this version's
        name = self.nodes[fn]["name"] if fn in self.nodes else None
        rows = [["tensor", self.labels.get(tid, tid)]]
        if root:
            rows.append(["role", "where backward() starts"])
        value = self.version_value.get((tid, version), record.get("value"))
        requires = bool(record.get("requires_grad", False))
        shown = printed(value, record.get("dtype", "float32"), requires, name)
        made = (
            self.events[record["created"]] if record.get("created", -1) < len(self.events) else {}
        )
        parameter = made.get("kind") == "tensor" and made.get("op") == "parameter"
        if parameter:
            shown = f"Parameter containing:\n{shown}"  # how print() shows an nn.Parameter
        value_row = [[0, shown]]
        for step, later in self.later_values.get((tid, version), ()):
            text = printed(later, record.get("dtype", "float32"), requires, name)
            _put(value_row, step, f"Parameter containing:\n{text}" if parameter else text)
        rows += [
            ["value", _once(value_row)],
            [".grad", _once(self.grad_rows.get(tid)) or "None"],
            ["grad_fn", object_text(name)],
            ["is_leaf", str(fn is None)],
            ["requires_grad", str(record.get("requires_grad", False))],
            ["_version", _once(self.version_rows.get(self.base.get(tid, tid))) or "0"],
            ["shape", f"torch.Size({list(record.get('shape', []))})"],
            ["dtype", f"torch.{record.get('dtype', 'float32')}"],
            ["made by", self._where(record.get("created"))],
        ]
        if name is not None:
            rows.append([ADDRESS, _ADDRESS_NOTE])
        return rows

    def _grad_text(self, state: grads.Known) -> str:
        if state.value is None:
            return "None"
        holder = self.tensors.get(state.holder, {})
        dtype = state.dtype or holder.get("dtype", "float32")
        return printed(state.value, dtype, shape=holder.get("shape"))

    # ***** autograd nodes *****

    def node(self, nid: str) -> list[list]:
        record = self.nodes[nid]
        name = record["name"]
        rows = [["node", name]]
        if name == "AccumulateGrad":
            leaf = record.get("variable")
            label = self.labels.get(leaf, "?")
            rows += [
                ["variable", label],
                ["next_functions", "()"],
                ["computes", f"{label}.grad += the gradient that arrives"],
                [f"{label}.grad", _once(self.grad_rows.get(leaf)) or "None"],
            ]
        else:
            rows += [
                ["next_functions", self._next_functions(record)],
                ["saved tensors", self._saved_row(nid, record)],
            ]
            if record.get("formula"):
                rows.append(["computes", record["formula"]])
            if record["outputs"]:
                rows.append(["grad_fn of", ", ".join(self._label(t) for t in record["outputs"])])
        rows.append(["recorded by", self._where(record.get("created"))])
        rows.append([ADDRESS, _ADDRESS_NOTE])
        return rows

    def _next_functions(self, record: dict) -> str:
        parts = []
        for target, nr in record["next"]:
            name = self.nodes[target]["name"] if target in self.nodes else None
            parts.append(f"({object_text(name)}, {nr})")
        if len(parts) == 1:
            return f"({parts[0]},)"
        return f"({', '.join(parts)})"

    def _saved_row(self, nid: str, record: dict) -> str | list[list]:
        saved = [s for s in dict.fromkeys(record["saved"]) if s is not None]
        saved.sort(key=lambda s: (self._slot(record, s) is None, self._slot(record, s) or 0))
        if ops.is_custom(record["name"]):  # what ctx.save_for_backward kept, in its order
            names = [f"ctx.saved_tensors[{k}]" for k in range(len(saved))]
        else:
            names = [saved_name(record["name"], self._slot(record, s)) for s in saved]
        kept = [
            f"{name} = {self._saved_label(record, s)}" for name, s in zip(names, saved, strict=True)
        ]
        if not kept:
            return "nothing"
        text = "; ".join(kept)
        if nid in self.freed_at:
            return [[0, text], [self.freed_at[nid], f"freed by backward() (was {text})"]]
        return text

    def saved(self, nid: str, k: int) -> list[list] | None:
        record = self.nodes[nid]
        if k >= len(record["saved"]) or record["saved"][k] is None:
            return None
        what = record["saved"][k]
        name = record["name"]
        attribute = saved_name(name, self._slot(record, what))
        state: str | list[list] = "kept for backward"
        if nid in self.freed_at:
            state = [[0, "kept for backward"], [self.freed_at[nid], "freed by backward()"]]
        rows = [
            ["saved tensor", self._saved_label(record, what)],
            ["saved by", name],
            ["as", f"grad_fn.{attribute}"],
            ["state", state],
        ]
        why = ops.lookup(name).why if name in ops.OPS else ""
        if why:
            rows.append(["why", why[0].upper() + why[1:] + "."])
        rows.append(["recorded by", self._where(record.get("created"))])
        return rows

    def _slot(self, record: dict, saved: str) -> int | None:
        if saved == "result":
            return None
        inputs = record["inputs"]
        if saved not in inputs:
            return None
        # the trace names a saved tensor, not its slot: of a tensor passed in several slots
        # (x.addcmul(x, x)), name the last, which the ops that save one operand for another's
        # gradient keep (addcmul saves tensor1 and tensor2, never self)
        return len(inputs) - 1 - inputs[::-1].index(saved)

    def _saved_label(self, record: dict, saved: str) -> str:
        if saved == "result":
            outputs = record["outputs"]
            return f"its result, {self._label(outputs[0])}" if outputs else "its result"
        return self._label(saved)

    # ***** operations *****

    def op(self, event: dict) -> list[list]:
        name = event["name"]
        node = event["node"]
        inputs = event["inputs"][1:] if event["kind"] == "inplace" else event["inputs"]
        entry = ops.lookup(name)
        names = [self._label(t) for t in event["inputs"]]
        template = entry.inplace if event["kind"] == "inplace" and entry.inplace else entry.does
        does = ops.fill(template, names) if ops.plain(name) in ops.OPS else ""
        label = f"{entry.symbol}: {does}" if does else ops.plain(name)
        rows = [["operation", label + (", in place" if event["kind"] == "inplace" else "")]]
        rows.append(["inputs", ", ".join(self._label(t) for t in inputs) or "none"])
        made = [event["tensor"]] if event["kind"] == "inplace" else event.get("outputs", [])
        rows.append(
            ["makes" if event["kind"] == "op" else "changes", ", ".join(map(self._label, made))]
        )
        if node is not None:
            rows.append(["records", object_text(self.nodes[node]["name"])])
        else:
            rows.append(["records", "nothing: grad mode was off, or no input requires grad"])
        rows.append(["line", self._where(event["seq"])])
        return rows

    # ***** helpers *****

    def _label(self, tid: str | None) -> str:
        return "a number" if tid is None else self.labels.get(tid, tid)

    def _where(self, seq: int | None) -> str:
        span = self.events[seq].get("span") if seq is not None and seq < len(self.events) else None
        text = span_text(self.lines, span)
        return f"line {span[0]}: {text}" if text else "—"


_ADDRESS_NOTE = "where the object sits in memory: different on every run, so not recorded"


def printed(
    value: object,
    dtype: str,
    requires_grad: bool = False,
    grad_fn: str | None = None,
    shape: list | None = None,
) -> str:
    """A traced value as print() shows the tensor: tensor(5.), tensor([1., 2.]),
    tensor(12., grad_fn=<MulBackward0>); a summary (over 64 values, which the trace does not
    keep whole) by its shape and range."""
    if isinstance(value, dict):
        shape = value.get("shape", [])
        return (
            f"a {values.dims(shape)} tensor (too big for the trace to keep every value; "
            f"min {values.number(value.get('min'))}, max {values.number(value.get('max'))})"
        )
    try:
        array = np.array(_floats(value), dtype=np.float64)
        if array.size == 0 and shape is not None:
            array = array.reshape(shape)  # [] in JSON is any empty shape: (0, 3) prints its size
        return printing.tensor_repr(
            array, dtype, requires_grad=requires_grad and grad_fn is None, grad_fn=grad_fn
        )
    except (ValueError, TypeError):
        return values.say(value)


def _floats(value: object) -> object:
    """A trace value's numbers, with "nan"/"inf" strings made floats again."""
    if isinstance(value, list):
        return [_floats(v) for v in value]
    if isinstance(value, str):
        return float(value)
    return value


def _step_of(steps: list[dict], n_events: int) -> list[int]:
    """Event seq → the index of the step showing it (a step shows its events' aftermath);
    an event no step covers belongs to the step before it."""
    out: list[int | None] = [None] * n_events
    for index, step in enumerate(steps):
        seq = step.get("seq")
        if seq:
            for s in range(max(seq[0], 0), min(seq[1], n_events - 1) + 1):
                out[s] = index
    last = 0
    for s in range(n_events):
        last = out[s] if out[s] is not None else last
        out[s] = last
    return out  # type: ignore[return-value]


def _once(row: list[list] | None) -> str | list[list] | None:
    """A time-varying fact that never changed is a plain string."""
    if row is not None and len(row) == 1:
        return row[0][1]
    return row


def _put(row: list[list], step: int, text: str) -> None:
    """Set what a time-varying fact says from `step` on (the latest text for a step wins)."""
    if row and row[-1][0] == step:
        row[-1][1] = text
    elif row[-1][1] != text:
        row.append([step, text])
    if len(row) > 1 and row[0][0] == row[1][0]:
        del row[0]
