"""Check a trace that came out of a child before anything else reads it.

A child can write any bytes it likes to its result pipe (the snippet may have taken it over), so
a trace is hostile input: the server parses it with `json.loads` only (never anything that
builds objects) and accepts it only if it is well-formed *and bounded*, because the renderer,
Graphviz and the page all trust what gets stored:

- every key and type the renderer reads, per event kind (docs/trace-format.md), and every id an
  event, tensor or node names existing and introduced no later than where it is used;
- ids are the tracer's own tokens (`t12`, `n3`, `m2`), so nothing Graphviz interprets (`\\N`)
  can reach it as a node name;
- module calls each name an earlier call as their parent, at most 16 deep, and each holds an
  event, so a reader walks them in one pass and they are bounded by the events;
- counts, lengths, nesting and numbers capped from the sandbox settings (what the tracer can
  legitimately write, with a little room), and numbers finite;
- text from the snippet that may legitimately be long (labels, messages) is clipped rather than
  refused; text that is not valid Unicode (a lone surrogate from `print("\\ud800")`) gets
  visible escapes, so it is stored and shown as `\\ud800`. Controls (NUL, ESC, a BOM) are
  valid Unicode, and are kept as the snippet wrote them (see `_safe`).

One pass over the trace: the time is linear in its size. The full JSON Schema is checked in the
tests; this is what every run's result must satisfy.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from app.sandbox import statuses
from app.sandbox.settings import SandboxSettings

TOP_KEYS = {
    "version", "code", "tensors", "nodes", "modules", "events", "stdout", "stderr", "outcome",
    "limits", "unseeded_random",
}  # fmt: skip
TENSOR_KEYS = {"label", "shape", "dtype", "requires_grad", "is_leaf", "grad_fn", "value", "created"}
NODE_KEYS = {"name", "inputs", "outputs", "next", "saved", "formula", "created"}
OUTCOME_KEYS = {"status", "type", "message", "span"}
CALL_KEYS = {"module", "name", "type", "parent"}
LIMITS_KEYS = {"truncated", "max_events", "stopped_line"}
ACCUMULATE = "AccumulateGrad"

TENSOR_ID = re.compile(r"t[0-9]{1,7}")
NODE_ID = re.compile(r"n[0-9]{1,7}")
MODULE_TOKEN = re.compile(r"m[0-9]{1,6}")
DTYPE = re.compile(r"[a-z][a-z0-9_]{0,31}")

# Caps that do not depend on the settings. The tracer's labels are at most 40 characters of
# source or a variable's name; names and formulas are the engine's; messages are str(exception).
LABEL_CAP = 200  # clipped past it
NAME_CAP = 200  # grad_fn class names, creation ops: clipped past it
FORMULA_CAP = 1000  # clipped
MESSAGE_CAP = 4096  # error messages and types, outcome messages: clipped
TRUNCATION_MARKER_ROOM = 256  # the tracer's "[output truncated: …]" after the cut
EXTRA_EVENTS = 16  # events past max_events (there are none today; room for an ending)
ITEMS_PER_EVENT = 4  # tensors or nodes one event may introduce on average (unbind, new leaves)
VALUE_ITEMS_CAP = 4096  # numbers and lists in one value (the tracer writes ≤ 64 numbers)
RANK_CAP = 64  # numpy's maximum number of dimensions
DIM_CAP = 1 << 48  # elements along one dimension
INT_CAP = 1 << 64  # a number in a value, and any count or position
CLIP = "…"
ALIAS_CAP = 16  # tensors one change lists as sharing the memory (the tracer's ALIAS_LIMIT)
CALL_DEPTH_CAP = 16  # nested module calls listed (the tracer's MODULE_DEPTH_LIMIT)


class Malformed(ValueError):
    """The child's result is not a trace."""


@dataclass(frozen=True)
class Caps:
    """What one trace may hold, from the sandbox's settings."""

    events: int
    items: int  # tensors, nodes, and the entries of any list
    code: int
    output: int
    trace_bytes: int

    @classmethod
    def of(cls, settings: SandboxSettings) -> Caps:
        events = settings.max_events + EXTRA_EVENTS
        return cls(
            events=events,
            items=ITEMS_PER_EVENT * events,
            code=settings.max_source_bytes,
            output=settings.max_output_bytes + TRUNCATION_MARKER_ROOM,
            trace_bytes=settings.max_trace_bytes,
        )


def parse(data: bytes, settings: SandboxSettings | None = None) -> dict:
    """The trace in `data`, checked (and its text made safe); Malformed if it is not one.
    The caps come from `settings`, by default the defaults."""
    caps = Caps.of(settings or SandboxSettings())
    if len(data) > caps.trace_bytes:
        raise Malformed(f"larger than {caps.trace_bytes:,} bytes")
    try:
        trace = json.loads(data, parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:
        raise Malformed(f"not JSON: {error}") from None
    return check(trace, settings)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def check(trace, settings: SandboxSettings | None = None) -> dict:
    """`trace`, checked, its strings made safe in place; Malformed if it is not a trace."""
    _Checker(trace, Caps.of(settings or SandboxSettings())).run()
    return trace


class _Checker:
    def __init__(self, trace, caps: Caps) -> None:
        self.trace = trace
        self.caps = caps

    def run(self) -> None:
        trace, caps = self.trace, self.caps
        _expect(type(trace) is dict and set(trace) == TOP_KEYS, "top-level keys")
        _expect(trace["version"] == 1 and type(trace["version"]) is int, "version")
        trace["code"] = _text(trace["code"], caps.code, "code")
        # the renderer's lines of the code (splitlines breaks at more than \n, never at fewer)
        self.code_lines = len(trace["code"].splitlines())
        for key in ("stdout", "stderr"):
            trace[key] = _text(trace[key], caps.output, key)
        tensors, nodes, events = trace["tensors"], trace["nodes"], trace["events"]
        _expect(type(tensors) is dict and type(nodes) is dict and type(events) is list, "tables")
        _expect(len(events) <= caps.events, "event count")
        _expect(len(tensors) <= caps.items and len(nodes) <= caps.items, "table size")
        self.tensors, self.nodes, self.count = tensors, nodes, len(events)
        for tid, record in tensors.items():
            _expect(type(tid) is str and TENSOR_ID.fullmatch(tid) is not None, "tensor id")
            self.tensor(record)
        for nid, record in nodes.items():
            _expect(type(nid) is str and NODE_ID.fullmatch(nid) is not None, "node id")
            self.node(record)
        self.calls(trace["modules"])
        self.made_by_ops: set[str] = set()  # the nodes op and inplace events name as theirs
        self.named_at_birth: set[str] = set()  # nodes something names at the event made them
        for record in tensors.values():
            self.ref(nodes, record["grad_fn"], record["created"])
            self.introduced(record["grad_fn"], record["created"])
        for record in nodes.values():
            self.node_refs(record)
        for seq, event in enumerate(events):
            self.event(event, seq)
        self.no_phantom_nodes()
        self.no_empty_calls()
        self.outcome(trace["outcome"])
        limits = trace["limits"]
        _expect(type(limits) is dict and set(limits) == LIMITS_KEYS, "limits")
        _expect(type(limits["truncated"]) is bool and _count(limits["max_events"]), "limits")
        stopped = limits["stopped_line"]  # set exactly when the cap stopped recording
        _expect(stopped is None or limits["truncated"], "limits")
        _expect(stopped is None or (_count(stopped) and stopped >= 1), "limits")
        _expect(type(trace["unseeded_random"]) is bool, "unseeded_random")

    # ***** tables *****

    def tensor(self, record) -> None:
        _expect(type(record) is dict and set(record) == TENSOR_KEYS, "tensor keys")
        record["label"] = _clipped(record["label"], LABEL_CAP, "tensor label")
        shape = record["shape"]
        _expect(type(shape) is list and len(shape) <= RANK_CAP, "tensor shape")
        _expect(all(_count(n) and n <= DIM_CAP for n in shape), "tensor shape")
        dtype = record["dtype"]
        _expect(type(dtype) is str and DTYPE.fullmatch(dtype) is not None, "tensor dtype")
        for key in ("requires_grad", "is_leaf"):
            _expect(type(record[key]) is bool, f"tensor {key}")
        _value(record["value"], "tensor value")
        self.created(record)

    def node(self, record) -> None:
        _expect(type(record) is dict, "node")
        keys = set(record)
        _expect(keys == NODE_KEYS or keys == NODE_KEYS | {"variable"}, "node keys")
        record["name"] = _clipped(record["name"], NAME_CAP, "node name")
        record["formula"] = _clipped(record["formula"], FORMULA_CAP, "node formula")
        for key in ("inputs", "outputs", "next", "saved"):
            self.items(record[key], f"node {key}")
        # an AccumulateGrad stands for a leaf (its `variable`) and is the end of the graph
        accumulate = record["name"].endswith(ACCUMULATE)
        _expect(accumulate == ("variable" in record), "node variable")
        if accumulate:
            _expect(not any(record[k] for k in ("inputs", "outputs", "next", "saved")), "leaf node")
        # `next` says where each input slot's gradient goes: one entry per slot
        _expect(accumulate or len(record["next"]) == len(record["inputs"]), "node next")
        # a node met in backward was made by no op, so it is the grad_fn of no tensor it names
        _expect(not _discovered(record) or not record["outputs"], "node met in backward outputs")
        self.created(record)

    def node_refs(self, record: dict) -> None:
        created = record["created"]
        for ref in record["inputs"]:
            self.ref(self.tensors, ref, created)
        for ref in record["outputs"]:
            self.ref(self.tensors, ref, created, optional=False)
        if "variable" in record:
            self.ref(self.tensors, record["variable"], created, optional=False)
        for ref in record["saved"]:
            if ref != "result":
                self.ref(self.tensors, ref, created)
        # what a node saved is one of its inputs or its result (never some other tensor)
        inputs = set(record["inputs"])
        _expect(all(s == "result" or s in inputs for s in record["saved"]), "node saved")
        for pair in record["next"]:
            _expect(type(pair) is list and len(pair) == 2 and _count(pair[1]), "node next")
            target = pair[0]
            self.ref(self.nodes, target, created)
            if target is not None and self.nodes[target]["created"] == created:
                self.made_with(record, self.nodes[target])
                self.named_at_birth.add(target)

    def made_with(self, record: dict, target: dict) -> None:
        """An edge between two nodes made at the same event. That can only be a node leading to
        a leaf's new AccumulateGrad, or an op's node to one the tracer first met with it (a
        view's AsStridedBackward0 rebuilt after CopySlices), which leads only to older nodes or
        AccumulateGrad. So the graph has no cycle, and drawing a node draws at most two others
        first (the renderer does that recursively)."""
        if "variable" in target:
            return
        _expect(_discovered(target), "node next made with it")
        _expect(not _discovered(record), "node met in backward next made with it")

    def created(self, record: dict) -> None:
        created = record["created"]
        _expect(_count(created) and created < self.count, "created")

    def introduced(self, nid, seq: int) -> None:
        """`nid` is named at event `seq`: if that is where it was made, it did not come from
        nowhere (the tracer makes a node only when an event, node or tensor names it)."""
        if nid is not None and self.nodes[nid]["created"] == seq:
            self.named_at_birth.add(nid)

    def no_phantom_nodes(self) -> None:
        """Every node is an op's, a leaf's AccumulateGrad, or one met in backward, and was named
        where it was made: the graph draws no grad_fn that nothing in the snippet made."""
        for nid, record in self.nodes.items():
            made = nid in self.made_by_ops or "variable" in record or _discovered(record)
            _expect(made, "node no op made")
            _expect(nid in self.named_at_birth, "node nothing named where it was made")

    # ***** module calls *****

    def calls(self, calls) -> None:
        """The module calls events happened in. Each names its enclosing call by the index of an
        earlier one, so the calls form a forest, at most CALL_DEPTH_CAP deep, that a reader can
        walk in one pass. Each holds an event (no_empty_calls), so there are at most
        CALL_DEPTH_CAP calls per event (not one: the first op in a Sequential's Linear lists
        both calls)."""
        _expect(type(calls) is list, "modules")
        _expect(len(calls) <= min(self.caps.items, CALL_DEPTH_CAP * self.count), "module count")
        depths: list[int] = []
        for index, call in enumerate(calls):
            _expect(type(call) is dict and set(call) == CALL_KEYS, "module call keys")
            token = call["module"]
            _expect(type(token) is str and MODULE_TOKEN.fullmatch(token) is not None, "module")
            if call["name"] is not None:
                call["name"] = _clipped(call["name"], LABEL_CAP, "module name")
            call["type"] = _clipped(call["type"], NAME_CAP, "module type")
            parent = call["parent"]
            if parent is None:
                depths.append(1)
            else:
                _expect(type(parent) is int and 0 <= parent < index, "module parent")
                depths.append(depths[parent] + 1)
                _expect(depths[index] <= CALL_DEPTH_CAP, "module depth")
        self.module_calls = calls
        self.used_calls = [False] * len(calls)

    def in_call(self, event: dict) -> None:
        """A tensor, op or inplace event's `module`, when it has one: a listed call."""
        if "module" not in event:
            return
        index = event["module"]
        _expect(type(index) is int and 0 <= index < len(self.module_calls), "event module")
        self.used_calls[index] = True

    def no_empty_calls(self) -> None:
        """Every call is listed because an event happened in it or in a call inside it."""
        used, calls = self.used_calls, self.module_calls
        for index in reversed(range(len(calls))):  # children come after their parents
            _expect(used[index], "module call with nothing in it")
            parent = calls[index]["parent"]
            if parent is not None:
                used[parent] = True

    # ***** events *****

    def event(self, event, seq: int) -> None:
        # an int, not just equal to one: 0.0 == 0, and the renderer indexes lists with it
        _expect(type(event) is dict and type(event.get("seq")) is int, "event seq")
        _expect(event["seq"] == seq, "event seq")
        kind = event.get("kind")
        _expect(type(kind) is str and kind in EVENT_KINDS, "event kind")
        _expect("span" in event, "event span")
        self.span(event["span"])
        getattr(self, f"event_{kind}")(event, seq)

    def event_tensor(self, event: dict, seq: int) -> None:
        self.keys(event, {"tensor", "op", "inputs"} | ({"module"} & set(event)))
        self.in_call(event)
        self.ref(self.tensors, event["tensor"], seq, optional=False)
        if event["op"] is not None:
            event["op"] = _clipped(event["op"], NAME_CAP, "tensor op")
        self.refs(self.tensors, event["inputs"], seq, "tensor inputs", optional=False)

    def event_op(self, event: dict, seq: int) -> None:
        self.keys(event, {"name", "node", "inputs", "outputs"} | ({"module"} & set(event)))
        self.in_call(event)
        event["name"] = _clipped(event["name"], NAME_CAP, "op name")
        self.refs(self.tensors, event["inputs"], seq, "op inputs")
        self.refs(self.tensors, event["outputs"], seq, "op outputs", optional=False)
        self.recorded(event, seq)
        _expect(bool(event["inputs"]) and bool(event["outputs"]), "op without inputs or outputs")

    def event_inplace(self, event: dict, seq: int) -> None:
        fields = {"tensor", "name", "node", "inputs", "version", "value"}
        self.keys(event, fields | ({"aliases", "module"} & set(event)))
        self.in_call(event)
        event["name"] = _clipped(event["name"], NAME_CAP, "inplace name")
        # what it changes (and with what) existed before the change
        self.ref(self.tensors, event["tensor"], seq - 1, optional=False)
        self.refs(self.tensors, event["inputs"], seq - 1, "inplace inputs")
        self.recorded(event, seq)
        self.version(event["version"])
        _value(event["value"], "inplace value")
        self.aliases(event, seq)

    def event_data_set(self, event: dict, seq: int) -> None:
        self.keys(event, {"tensor", "source", "value"})
        self.ref(self.tensors, event["tensor"], seq - 1, optional=False)
        self.ref(self.tensors, event["source"], seq - 1, optional=False)
        _value(event["value"], "data_set value")

    def event_write(self, event: dict, seq: int) -> None:
        fields = {"tensor", "value"} | ({"aliases"} & set(event)) | ({"op"} & set(event))
        self.keys(event, fields)
        if "op" in event:  # written by an op's kernel (BatchNorm's running statistics)
            event["op"] = _clipped(event["op"], NAME_CAP, "write op")
        self.ref(self.tensors, event["tensor"], seq - 1, optional=False)
        _value(event["value"], "write value")
        self.aliases(event, seq)

    def event_grad_mode(self, event: dict, seq: int) -> None:
        self.keys(event, {"enabled"})
        _expect(type(event["enabled"]) is bool, "grad_mode enabled")

    def event_retain_grad(self, event: dict, seq: int) -> None:
        captured = event.get("captured")
        _expect(type(captured) is bool, "retain_grad captured")
        fields = (
            {"tensor", "captured", "grad", "grad_tensor"} if captured else {"tensor", "captured"}
        )
        self.keys(event, fields)
        self.ref(self.tensors, event["tensor"], seq, optional=False)
        if captured:
            self.ref(self.tensors, event["grad_tensor"], seq, optional=False)
            _value(event["grad"], "retain_grad grad")

    def event_grad_set(self, event: dict, seq: int) -> None:
        self.keys(event, {"tensor", "grad", "grad_tensor"})
        self.ref(self.tensors, event["tensor"], seq, optional=False)
        # the new .grad existed before it was assigned; None (no tensor) has no value
        self.ref(self.tensors, event["grad_tensor"], seq - 1)
        if event["grad_tensor"] is None:
            _expect(event["grad"] is None, "grad_set grad")
        else:
            _value(event["grad"], "grad_set grad")

    def event_backward_begin(self, event: dict, seq: int) -> None:
        self.keys(event, {"roots", "grads", "retain_graph"})
        self.refs(self.tensors, event["roots"], seq, "roots", optional=False)
        _expect(bool(event["roots"]), "backward without roots")
        grads = event["grads"]
        self.items(grads, "backward grads")
        _expect(len(grads) == len(event["roots"]), "one grad per root")
        for grad in grads:
            _value(grad, "backward grad")
        _expect(type(event["retain_graph"]) is bool, "retain_graph")

    def event_node_backward(self, event: dict, seq: int) -> None:
        self.keys(event, {"node", "grad_outputs", "grad_inputs", "sources"})
        self.ref(self.nodes, event["node"], seq, optional=False)
        self.introduced(event["node"], seq)
        record = self.nodes[event["node"]]
        _expect("variable" not in record, "node_backward of an AccumulateGrad")
        for key in ("grad_outputs", "grad_inputs"):
            self.items(event[key], key)
        # a gradient in per output (one for a node of none), one out per input slot
        _expect(len(event["grad_outputs"]) == max(1, len(record["outputs"])), "grad_outputs")
        _expect(len(event["grad_inputs"]) == len(record["next"]), "grad_inputs")
        for key in ("grad_outputs", "grad_inputs"):
            for grad in event[key]:
                if key == "grad_outputs" or grad is not None:  # None: nothing sent that way
                    _value(grad, key)
        self.sources(event["sources"], seq)

    def event_accumulate(self, event: dict, seq: int) -> None:
        self.keys(event, {"tensor", "node", "contribution", "grad", "grad_tensor", "sources"})
        self.ref(self.tensors, event["tensor"], seq, optional=False)
        self.ref(self.tensors, event["grad_tensor"], seq, optional=False)
        self.ref(self.nodes, event["node"], seq, optional=False)
        self.introduced(event["node"], seq)
        _expect(self.nodes[event["node"]].get("variable") == event["tensor"], "accumulate node")
        _value(event["contribution"], "contribution")
        _value(event["grad"], "accumulated grad")
        self.sources(event["sources"], seq)

    def event_free(self, event: dict, seq: int) -> None:
        self.keys(event, {"nodes"})
        self.refs(self.nodes, event["nodes"], seq, "freed nodes", optional=False)
        for nid in event["nodes"]:
            self.introduced(nid, seq)
        # only nodes that saved something are freed, and an AccumulateGrad saves nothing
        _expect(all("variable" not in self.nodes[n] for n in event["nodes"]), "freed nodes")

    def event_backward_end(self, event: dict, seq: int) -> None:
        self.keys(event, {"retain_graph"})
        _expect(type(event["retain_graph"]) is bool, "retain_graph")

    def event_print(self, event: dict, seq: int) -> None:
        self.keys(event, {"text"})
        event["text"] = _text(event["text"], self.caps.output, "print text")

    def event_error(self, event: dict, seq: int) -> None:
        self.keys(event, {"type", "message"})
        event["type"] = _clipped(event["type"], NAME_CAP, "error type")
        event["message"] = _clipped(event["message"], MESSAGE_CAP, "error message")

    # ***** parts *****

    def version(self, version) -> None:
        _expect(_count(version) and version <= self.caps.events, "version")

    def aliases(self, event: dict, seq: int) -> None:
        """The other tensors a change of memory reached: listed only when there are some, each
        once, never the changed tensor itself, at most ALIAS_CAP of them."""
        if "aliases" not in event:
            return
        aliases = event["aliases"]
        _expect(type(aliases) is list and 0 < len(aliases) <= ALIAS_CAP, "aliases")
        seen = {event["tensor"]}
        for alias in aliases:
            _expect(type(alias) is dict and set(alias) == {"tensor", "value", "version"}, "alias")
            self.ref(self.tensors, alias["tensor"], seq - 1, optional=False)
            _expect(alias["tensor"] not in seen, "alias listed twice")
            seen.add(alias["tensor"])
            self.version(alias["version"])
            _value(alias["value"], "alias value")

    def keys(self, event: dict, fields: set[str]) -> None:
        _expect(set(event) == fields | {"seq", "kind", "span"}, f"{event['kind']} keys")

    def recorded(self, event: dict, seq: int) -> None:
        """An op's grad_fn: a node of its own made with it (never a leaf's AccumulateGrad),
        whose inputs and outputs are the op's (so it cannot pass for one met in backward,
        which has no outputs); or None."""
        node = event["node"]
        self.ref(self.nodes, node, seq)
        if node is not None:
            record = self.nodes[node]
            _expect("variable" not in record, "op node")
            _expect(record["created"] == seq, "op node made by another event")
            _expect(record["inputs"] == event["inputs"], "op node inputs")
            made = event["outputs"] if event["kind"] == "op" else [event["tensor"]]
            _expect(record["outputs"] == made, "op node outputs")
            self.made_by_ops.add(node)
            self.named_at_birth.add(node)

    def sources(self, sources, seq: int) -> None:
        self.items(sources, "sources")
        for source in sources:
            _expect(type(source) is dict and set(source) == {"from", "grad"}, "source")
            self.ref(self.nodes, source["from"], seq)
            self.introduced(source["from"], seq)
            _value(source["grad"], "source grad")

    def items(self, value, what: str) -> None:
        _expect(type(value) is list and len(value) <= self.caps.items, what)

    def refs(self, table: dict, refs, seq: int, what: str, *, optional: bool = True) -> None:
        self.items(refs, what)
        for ref in refs:
            self.ref(table, ref, seq, optional=optional)

    def ref(self, table: dict, ref, seq: int, *, optional: bool = True) -> None:
        if ref is None and optional:
            return
        _expect(type(ref) is str and ref in table, "reference")
        _expect(table[ref]["created"] <= seq, "reference to the future")

    def outcome(self, outcome) -> None:
        _expect(type(outcome) is dict and outcome.get("status") in statuses.ALL, "outcome")
        _expect(set(outcome) <= OUTCOME_KEYS, "outcome keys")
        for key in ("type", "message"):
            if key in outcome:
                outcome[key] = _clipped(outcome[key], MESSAGE_CAP, f"outcome {key}")
        if outcome["status"] == statuses.ERROR:
            _expect("type" in outcome and "message" in outcome, "error outcome")
        if "span" in outcome:
            self.span(outcome["span"])

    def span(self, span) -> None:
        """None, or [line, col, end_line, end_col] on lines of the code (1-based, in order)."""
        if span is not None:
            _expect(type(span) is list and len(span) == 4 and all(map(_count, span)), "span")
            _expect(1 <= span[0] <= span[2] <= self.code_lines, "span outside the code")


def _discovered(record: dict) -> bool:
    """A node the tracer first met in backward or as another's next: no op event made it, so
    it has a slot per edge but none of its inputs is a tensor the trace saw."""
    return bool(record["inputs"]) and all(i is None for i in record["inputs"])


# The event kinds are the checker's `event_<kind>` methods (docs/trace.schema.json lists the
# same ones; a test holds the two together), so a kind cannot be accepted without its check.
EVENT_KINDS = frozenset(
    name.removeprefix("event_") for name in vars(_Checker) if name.startswith("event_")
)


# ***** values and text *****


def _value(value, what: str) -> None:
    """A traced value: a number, nested lists of numbers, or a summary object; bounded."""
    if type(value) is dict:
        _expect(set(value) == {"shape", "min", "max", "mean", "first"}, what)
        shape = value["shape"]
        _expect(type(shape) is list and len(shape) <= RANK_CAP, what)
        _expect(all(_count(n) and n <= DIM_CAP for n in shape), what)
        for key in ("min", "max", "mean"):
            _expect(_number(value[key]), what)
        first = value["first"]
        _expect(type(first) is list and len(first) <= 64 and all(map(_number, first)), what)
        return
    if type(value) is not list:
        _expect(_number(value), what)
        return
    # nested lists, walked without recursion: (list, depth) pairs still to look at
    budget = VALUE_ITEMS_CAP
    pending = [(value, 1)]
    while pending:
        items, depth = pending.pop()
        _expect(depth <= RANK_CAP, what)
        budget -= len(items) + 1
        _expect(budget >= 0, what)
        for item in items:
            if type(item) is list:
                pending.append((item, depth + 1))
            else:
                _expect(_number(item), what)


def _number(x) -> bool:
    kind = type(x)
    if kind is float:
        return math.isfinite(x)
    if kind is int:
        return -INT_CAP <= x <= INT_CAP
    return kind is bool or (kind is str and x in ("nan", "inf", "-inf"))


def _text(value, cap: int, what: str) -> str:
    """A string of at most `cap` characters, made safe."""
    _expect(type(value) is str and len(value) <= cap, what)
    return _safe(value)


def _clipped(value, cap: int, what: str) -> str:
    """A string, cut to `cap` characters (with …) when longer, made safe."""
    _expect(type(value) is str, what)
    if len(value) > cap:
        value = value[: cap - 1] + CLIP
    return _safe(value)


def _safe(text: str) -> str:
    """The text, with whatever UTF-8 cannot hold (a lone surrogate) written as an escape."""
    # Only what the store cannot hold. A NUL or a BOM in a label or a print is the snippet's
    # own text, which the API and `gradtrace trace` give back as it was; refusing it would fail
    # a legal program's run. Where XML cannot hold it, a drawing writes it out as it draws it
    # (app/render/visible.py), for traces stored before this rule too.
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _count(value) -> bool:
    return type(value) is int and 0 <= value <= INT_CAP


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise Malformed(f"bad {what}")
