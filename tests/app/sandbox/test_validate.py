"""The server's check of a child's trace: hostile traces are refused or made safe, and whatever
it accepts the renderer can draw (a property test over mutated real traces)."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import trace_cut
from app.render import narrate, render
from app.render.playback import still
from app.sandbox import SandboxSettings, validate
from engine.tracer import DEFAULT_MAX_EVENTS, trace_snippet
from tests import corpus
from tests.engine.goldens import BY_SLUG
from tests.timing import cpu_seconds

SNIPPETS = [
    """import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a*b + a
d.backward()
print(a.grad.item(), b.grad.item())
""",
    """import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x = torch.ones(3)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    opt.zero_grad()
    y = (w * x).sum()
    y.retain_grad()
    y.backward()
    opt.step()
with torch.no_grad():
    z = w.detach() * 2
""",
    """import torch
a = torch.ones(2, 2, requires_grad=True)
b = a.exp()
b += 1
b.sum().backward()
""",
    """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x ** 2).sum()
y.backward()
y.backward()
""",
    """import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
(w * 3).sum().backward()
opt.zero_grad(set_to_none=False)
w.grad = torch.ones(2)
(w * w).sum().backward()
del w.grad
""",
    # a view's AsStridedBackward0, rebuilt after CopySlices, that no op event made
    BY_SLUG["shape-inplace-view-then-use-view"]["source"],
    """import torch
x = torch.zeros(2, 2)
v = x[0]
v.add_(1)
w = torch.tensor([1.0, 2.0], requires_grad=True)
w.data = torch.tensor([5.0, 6.0])
a = x.numpy()
a[1, 1] = 7.0
print(x)
""",
    # module calls: Sequential → Linear and ReLU, an anonymous loss, two passes
    """import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
x = torch.ones(1, 2)
for step in range(2):
    loss = nn.MSELoss()(model(x), torch.zeros(1, 2))
    loss.backward()
print(loss.item())
""",
]


@pytest.fixture(scope="module")
def traces() -> list[dict]:
    return [trace_snippet(code) for code in SNIPPETS]


def _payload(trace: dict) -> bytes:
    return json.dumps(trace).encode()


def test_real_traces_pass_unchanged(traces):
    for trace in traces:
        assert validate.parse(_payload(trace)) == trace


@pytest.mark.parametrize("snippet", corpus.spread(corpus.SNIPPETS, lambda s: s["slug"]))
def test_every_engine_golden_snippet_passes(snippet):
    trace = corpus.traced(snippet["source"], snippet.get("max_events") or DEFAULT_MAX_EVENTS)
    assert validate.parse(_payload(trace)) == trace


def test_the_checked_event_kinds_are_the_schemas():
    from pathlib import Path

    schema = json.loads(
        (Path(__file__).resolve().parents[3] / "docs" / "trace.schema.json").read_text()
    )
    defs = schema["$defs"]
    kinds = {
        defs[ref["$ref"].split("/")[-1]]["properties"]["kind"]["const"]
        for ref in defs["event"]["oneOf"]
    }
    assert kinds == validate.EVENT_KINDS


def _grad_sets(trace: dict) -> list[dict]:
    return [e for e in trace["events"] if e["kind"] == "grad_set"]


@pytest.mark.parametrize(
    "break_it",
    [
        lambda e: e.update(tensor="t99"),  # no such tensor
        lambda e: e.update(tensor=None),
        lambda e: e.update(grad_tensor="n1"),  # a node, not a tensor
        lambda e: e.update(grad_tensor=7),
        lambda e: e.update(grad=None),  # a .grad tensor without its value
        lambda e: e.update(grad="many"),
        lambda e: e.pop("grad"),
        lambda e: e.update(extra=1),
    ],
)
def test_a_grad_set_is_checked_strictly(traces, break_it):
    trace = copy.deepcopy(traces[4])
    assigned = next(e for e in _grad_sets(trace) if e["grad_tensor"])
    validate.check(copy.deepcopy(trace))
    break_it(assigned)
    with pytest.raises(validate.Malformed):
        validate.check(trace)


def test_a_grad_set_to_none_has_no_value_and_no_future_tensor(traces):
    trace = copy.deepcopy(traces[4])
    reset = next(e for e in _grad_sets(trace) if not e["grad_tensor"])
    reset["grad"] = 1.0
    with pytest.raises(validate.Malformed, match="grad_set grad"):
        validate.check(trace)
    trace = copy.deepcopy(traces[4])
    assigned = next(e for e in _grad_sets(trace) if e["grad_tensor"])
    assigned["grad_tensor"] = f"t{len(trace['tensors'])}"  # made later than the event
    with pytest.raises(validate.Malformed, match="future"):
        validate.check(trace)


def _alias_events(trace: dict) -> dict[str, dict]:
    return {e["kind"]: e for e in trace["events"] if e["kind"] in ("inplace", "data_set", "write")}


@pytest.mark.parametrize(
    "kind, break_it",
    [
        ("inplace", lambda e: e.update(aliases=[])),  # listed only when there are some
        ("inplace", lambda e: e["aliases"].append(dict(e["aliases"][0]))),  # twice
        ("inplace", lambda e: e["aliases"][0].update(tensor=e["tensor"])),  # itself
        ("inplace", lambda e: e["aliases"][0].update(tensor="t99")),
        ("inplace", lambda e: e["aliases"][0].update(version=-1)),
        ("inplace", lambda e: e["aliases"][0].update(value="many")),
        ("inplace", lambda e: e["aliases"][0].pop("version")),
        ("inplace", lambda e: e.update(aliases=e["aliases"] * 17)),  # past the cap
        ("data_set", lambda e: e.update(source="n1")),
        ("data_set", lambda e: e.pop("value")),
        ("data_set", lambda e: e.update(version=1)),
        ("write", lambda e: e.update(tensor="t99")),
        ("write", lambda e: e.update(value=None)),
        ("write", lambda e: e.update(aliases={"t1": 1})),
    ],
)
def test_alias_changes_are_checked_strictly(traces, kind, break_it):
    trace = copy.deepcopy(traces[6])
    events = _alias_events(trace)
    assert set(events) == {"inplace", "data_set", "write"} and "aliases" in events["inplace"]
    validate.check(copy.deepcopy(trace))
    break_it(events[kind])
    with pytest.raises(validate.Malformed):
        validate.check(trace)


# ***** module calls *****


def _module_trace(traces) -> dict:
    trace = copy.deepcopy(traces[7])
    calls = [(c["module"], c["name"], c["type"], c["parent"]) for c in trace["modules"]]
    assert calls == [
        ("m1", "model", "Sequential", None),
        ("m2", "model[0]", "Linear", 0),
        ("m3", "model[1]", "ReLU", 0),
        ("m4", None, "MSELoss", None),
        ("m1", "model", "Sequential", None),
        ("m2", "model[0]", "Linear", 4),
        ("m3", "model[1]", "ReLU", 4),
        ("m5", None, "MSELoss", None),
    ]
    return trace


def _first(trace: dict, kind: str) -> dict:
    return next(e for e in trace["events"] if e["kind"] == kind)


def _in_call(trace: dict) -> dict:
    return next(e for e in trace["events"] if "module" in e)


def test_a_trace_with_module_calls_passes_unchanged(traces):
    trace = _module_trace(traces)
    assert {e["kind"] for e in trace["events"] if "module" in e} == {"op"}
    assert validate.parse(_payload(trace)) == trace


def _nested_calls(trace: dict, depth: int) -> None:
    """Calls nested `depth` deep, the innermost holding the first event made in a call."""
    trace["modules"] = [
        {"module": f"m{i + 1}", "name": None, "type": "Sequential", "parent": i - 1 if i else None}
        for i in range(depth)
    ]
    for event in trace["events"]:
        event.pop("module", None)
    _first(trace, "op")["module"] = depth - 1


@pytest.mark.parametrize(
    "forge, reason",
    [
        (lambda t: t.pop("modules"), "top-level keys"),
        (lambda t: t.update(modules={}), "modules"),
        (lambda t: t["modules"][1].update(parent=1), "module parent"),  # itself
        (lambda t: t["modules"][1].update(parent=2), "module parent"),  # a later call
        (lambda t: t["modules"][1].update(parent=-1), "module parent"),
        (lambda t: t["modules"][1].update(parent="0"), "module parent"),
        (lambda t: t["modules"][1].update(parent=0.0), "module parent"),
        (lambda t: t["modules"][1].update(parent=False), "module parent"),
        (lambda t: t["modules"][0].update(name=7), "module name"),
        (lambda t: t["modules"][0].update(type=None), "module type"),
        (lambda t: t["modules"][0].pop("type"), "module call keys"),
        (lambda t: t["modules"][0].update(extra=1), "module call keys"),
        (lambda t: t["modules"].append("m1"), "module call keys"),
        (lambda t: t["modules"][0].update(module=1), "module"),
        (lambda t: t["modules"][0].update(module="m"), "module"),
        (lambda t: t["modules"][0].update(module="m1234567"), "module"),
        (lambda t: t["modules"][0].update(module="n1"), "module"),
        (lambda t: t["modules"][0].update(module="m1<x>"), "module"),
        (lambda t: t["modules"][0].update(module="m\u0661"), "module"),  # an Arabic-Indic 1
        (lambda t: _in_call(t).update(module=len(t["modules"])), "event module"),
        (lambda t: _in_call(t).update(module=-1), "event module"),
        (lambda t: _in_call(t).update(module="0"), "event module"),
        (lambda t: _in_call(t).update(module=True), "event module"),
        (lambda t: _in_call(t).update(module=0.0), "event module"),
        (lambda t: _in_call(t).update(module=None), "event module"),
        (lambda t: _first(t, "print").update(module=0), "print keys"),
        (lambda t: _first(t, "backward_begin").update(module=0), "backward_begin keys"),
        (lambda t: _first(t, "accumulate").update(module=0), "accumulate keys"),
        # a call nothing happened in: listed calls are bounded by the events in them
        (lambda t: t["modules"].append(dict(t["modules"][0])), "nothing in it"),
        (lambda t: t["modules"].extend([t["modules"][0]] * 16 * len(t["events"])), "count"),
        (lambda t: _nested_calls(t, 17), "module depth"),
    ],
)
def test_forged_module_calls_are_refused(traces, forge, reason):
    trace = _module_trace(traces)
    forge(trace)
    with pytest.raises(validate.Malformed, match=reason):
        validate.check(trace)


def test_module_calls_nested_to_the_limit_pass(traces):
    trace = _module_trace(traces)
    _nested_calls(trace, validate.CALL_DEPTH_CAP)
    validate.check(trace)
    render(trace)


def test_module_call_text_is_clipped(traces):
    trace = _module_trace(traces)
    trace["modules"][0]["name"] = "n" * 100_000
    trace["modules"][0]["type"] = "T" * 100_000
    validate.check(trace)
    assert len(trace["modules"][0]["name"]) == validate.LABEL_CAP
    assert len(trace["modules"][0]["type"]) == validate.NAME_CAP


def test_a_trace_cut_anywhere_keeps_only_the_calls_its_events_were_in(traces):
    trace = _module_trace(traces)
    for events in range(len(trace["events"]) + 1):
        cut = trace_cut.keep_first(trace, events, {"status": "output_limit"})
        validate.check(copy.deepcopy(cut))
        assert cut["modules"] == trace["modules"][: len(cut["modules"])]
    assert trace_cut.keep_first(trace, 0, {"status": "output_limit"})["modules"] == []


def test_a_cut_renumbers_calls_listed_out_of_order():
    """The tracer lists calls in the order of their first events; a cut keeps any valid
    trace's calls valid all the same."""
    made = {"shape": [], "dtype": "float32", "requires_grad": False, "is_leaf": True,
            "grad_fn": None, "value": 1.0}  # fmt: skip
    call = {"name": None, "type": "ReLU", "parent": None}
    trace = {
        "version": 1, "code": "import torch\nx = f()\n",
        "tensors": {"t1": {"label": "x", **made, "created": 0},
                    "t2": {"label": "x", **made, "created": 1}},
        "nodes": {},
        "modules": [{"module": "m1", **call}, {"module": "m2", **call}],
        "events": [
            {"seq": 0, "kind": "tensor", "tensor": "t1", "op": None, "inputs": [],
             "span": [2, 4, 2, 7], "module": 1},
            {"seq": 1, "kind": "tensor", "tensor": "t2", "op": None, "inputs": [],
             "span": [2, 4, 2, 7], "module": 0},
        ],
        "stdout": "", "stderr": "", "outcome": {"status": "ok"},
        "limits": {"truncated": False, "max_events": 2, "stopped_line": None},
        "unseeded_random": False,
    }  # fmt: skip
    validate.check(copy.deepcopy(trace))
    cut = trace_cut.keep_first(trace, 1, {"status": "output_limit"})
    assert cut["modules"] == [{"module": "m2", **call}]
    assert cut["events"][0]["module"] == 0
    assert trace["events"][0]["module"] == 1  # the trace cut is left as it was
    validate.check(cut)


# ***** random numbers drawn before any seed *****


def test_the_unseeded_flag_passes_either_way_and_a_cut_keeps_it(traces):
    trace = copy.deepcopy(traces[0])
    assert trace["unseeded_random"] is False
    trace["unseeded_random"] = True
    assert validate.parse(_payload(trace)) == trace
    assert trace_cut.keep_first(trace, 1, {"status": "output_limit"})["unseeded_random"] is True


@pytest.mark.parametrize(
    "forge, reason",
    [
        (lambda t: t.pop("unseeded_random"), "top-level keys"),
        (lambda t: t.update(unseeded_random=1), "unseeded_random"),  # an int, not a bool
        (lambda t: t.update(unseeded_random=0), "unseeded_random"),
        (lambda t: t.update(unseeded_random="true"), "unseeded_random"),
        (lambda t: t.update(unseeded_random=None), "unseeded_random"),
        (lambda t: t.update(unseeded_random=[True]), "unseeded_random"),
    ],
)
def test_a_missing_or_non_bool_unseeded_flag_is_refused(traces, forge, reason):
    trace = copy.deepcopy(traces[0])
    forge(trace)
    with pytest.raises(validate.Malformed, match=reason):
        validate.check(trace)


# ***** where recording stopped *****


def _limits(**changes):
    return lambda t: t["limits"].update(changes)


@pytest.mark.parametrize(
    "forge",
    [
        _limits(stopped_line=3),  # a stop, yet nothing was cut
        lambda t: t["limits"].pop("stopped_line"),
        _limits(truncated=True, stopped_line=0),
        _limits(truncated=True, stopped_line=-2),
        _limits(truncated=True, stopped_line="3"),
        _limits(truncated=True, stopped_line=3.0),
        _limits(truncated=True, stopped_line=True),
        _limits(truncated=True, stopped_line=[3]),
        _limits(truncated=True, stopped_line=2**70),
        _limits(extra=1),
    ],
)
def test_a_forged_recording_stop_is_refused(traces, forge):
    trace = copy.deepcopy(traces[0])
    forge(trace)
    with pytest.raises(validate.Malformed, match="limits"):
        validate.check(trace)


def test_a_recording_stop_at_a_line_passes(traces):
    trace = copy.deepcopy(traces[0])
    trace["limits"].update(truncated=True, stopped_line=3)
    validate.check(trace)


# ***** nodes the tracer first met in backward (no op made them) *****
# In SNIPPETS[5], g = f * 3 after f.exp_() records n5 (MulBackward0), whose first edge goes to
# n6: f's AsStridedBackward0, rebuilt after CopySlices and first met there (inputs [None]).


def _met_in_backward(next_pairs: list, created: int = 4) -> dict:
    return {
        "name": "AsStridedBackward0", "inputs": [None] * len(next_pairs), "outputs": [],
        "next": next_pairs, "saved": [], "formula": "", "created": created,
    }  # fmt: skip


def _rebuilt_view_trace(traces) -> dict:
    trace = copy.deepcopy(traces[5])
    nodes = trace["nodes"]
    assert nodes["n6"] == _met_in_backward([["n4", 0]]) | {"formula": nodes["n6"]["formula"]}
    assert nodes["n5"]["next"][0] == ["n6", 0] and nodes["n5"]["created"] == 4
    return trace


def test_a_node_met_in_backward_passes_and_renders(traces):
    trace = _rebuilt_view_trace(traces)
    validate.check(trace)
    render(trace)


def _chain(trace: dict) -> None:
    """n5 → 3,000 nodes met in backward, each made at n5's event → n4: drawn recursively, that
    overflowed the renderer's stack (every view of the page failed)."""
    trace["nodes"]["n5"]["next"][0][0] = "n100"
    for i in range(3000):
        trace["nodes"][f"n{100 + i}"] = _met_in_backward([[f"n{101 + i}", 0]])
    trace["nodes"]["n3099"]["next"] = [["n4", 0]]


def _cycle(trace: dict) -> None:
    trace["nodes"]["n6"]["next"] = [["n8", 0]]
    trace["nodes"]["n8"] = _met_in_backward([["n6", 0]])


def _phantom(trace: dict) -> None:
    """A MulBackward0 of x no op made, drawn in the graph as if the snippet had."""
    trace["nodes"]["n9"] = {
        "name": "MulBackward0", "inputs": ["t1", None], "outputs": ["t3"],
        "next": [["n2", 0], [None, 0]], "saved": ["t1"], "formula": "", "created": 4,
    }  # fmt: skip


@pytest.mark.parametrize(
    "forge, reason",
    [
        (_chain, "node met in backward next made with it"),
        (_cycle, "node met in backward next made with it"),
        (lambda t: t["nodes"]["n6"].update(next=[["n6", 0]]), "met in backward next"),  # a loop
        # back to the op's node made with it: a cycle n5 → n6 → n5
        (lambda t: t["nodes"]["n6"].update(next=[["n5", 0]]), "node next made with it"),
        # the op's node leading to another op-like node made at its event
        (lambda t: t["nodes"]["n5"]["next"][0].__setitem__(0, "n5"), "node next made with it"),
        # claiming to be f's grad_fn: the inspector would say "grad_fn of f"
        (lambda t: t["nodes"]["n6"].update(outputs=["t3"]), "met in backward outputs"),
        # saving a tensor that is none of its inputs (drawn as a saved box of x)
        (lambda t: t["nodes"]["n6"].update(saved=["t1"]), "node saved"),
        (lambda t: t["nodes"]["n5"].update(saved=["t2"]), "node saved"),
        # an op's node with other inputs than the op: a false graph and narration
        (lambda t: t["nodes"]["n5"].update(inputs=["t2", None]), "op node inputs"),
        # an op's node passing for one met in backward (and so free to lead to any node)
        (lambda t: _disguise_op_node(t), "met in backward outputs"),
        (_phantom, "node no op made"),
        # shaped like one met in backward (or a leaf's AccumulateGrad), but nothing names it
        # where it was made: the tracer makes a node only when an event, node or tensor does
        (lambda t: t["nodes"].update(n9=_met_in_backward([["n4", 0]], created=7)), "nothing"),
        (lambda t: t["nodes"].update(n9=dict(t["nodes"]["n2"], created=7)), "nothing named"),
        (lambda t: t["nodes"]["n2"].update(inputs=["t1"]), "leaf node"),  # an AccumulateGrad
        (lambda t: t["nodes"]["n2"].update(saved=["result"]), "leaf node"),
    ],
)
def test_a_forged_node_met_in_backward_is_refused(traces, forge, reason):
    trace = _rebuilt_view_trace(traces)
    forge(trace)
    with pytest.raises(validate.Malformed, match=reason):
        validate.check(trace)


def _disguise_op_node(trace: dict) -> None:
    op = next(e for e in trace["events"] if e.get("node") == "n5")
    op["inputs"] = trace["nodes"]["n5"]["inputs"] = [None, None]


@pytest.mark.parametrize("seq", [-0.0, 0.0, True])
def test_an_event_seq_is_an_int(traces, seq):
    """Found by the property test below: seq -0.0 equals 0, and rendering indexed with it."""
    trace = copy.deepcopy(traces[2])
    trace["events"][0]["seq"] = seq
    with pytest.raises(validate.Malformed, match="event seq"):
        validate.check(trace)


@pytest.mark.parametrize(
    "forge",
    [
        lambda t: t.update(code=""),  # the narration quoted a line of it: IndexError
        lambda t: t["events"][-1].update(span=[99, 0, 99, 4]),
        lambda t: t["events"][-1].update(span=[0, 0, 1, 4]),  # lines count from 1
        lambda t: t["events"][-1].update(span=[3, 0, 2, 4]),  # ends before it starts
        lambda t: t["outcome"].update(span=[99, 0, 99, 4]),
    ],
)
def test_a_span_is_on_lines_of_the_code(traces, forge):
    trace = copy.deepcopy(traces[6])  # w.data = ...: its narration quotes the line
    assert trace["events"][-1]["span"] is not None
    validate.check(copy.deepcopy(trace))
    forge(trace)
    with pytest.raises(validate.Malformed, match="span outside the code"):
        validate.check(trace)


def test_an_id_graphviz_would_expand_is_refused(traces):
    """The red team's F4: a tensor id of `\\N` × 8,000 (Graphviz expands each into the node's
    name, a GET took seconds and 750 MB) never gets stored."""
    trace = copy.deepcopy(traces[0])
    forged = "\\N" * 8000
    trace["tensors"][forged] = trace["tensors"].pop("t1")
    for event in trace["events"]:
        for key in ("tensor", "inputs", "outputs", "roots"):
            if event.get(key) == "t1":
                event[key] = forged
            elif isinstance(event.get(key), list):
                event[key] = [forged if i == "t1" else i for i in event[key]]
    with pytest.raises(validate.Malformed, match="tensor id"):
        validate.parse(_payload(trace))


@pytest.mark.parametrize("key", ["nodes", "tensors"])
def test_table_keys_must_be_the_tracers_tokens(traces, key):
    trace = copy.deepcopy(traces[0])
    table = trace[key]
    first = next(iter(table))
    table[f"{first}<x>"] = table[first]
    with pytest.raises(validate.Malformed, match="id"):
        validate.check(trace)


def test_lone_surrogates_become_visible_escapes(traces):
    trace = copy.deepcopy(traces[0])
    trace["stdout"] = "\ud800 and π"
    trace["events"][-1]["text"] = "\udfff\n"
    trace["tensors"]["t1"]["label"] = "a\ud800"
    payload = json.dumps(trace).encode()  # json escapes them as \ud800, as a child would
    checked = validate.parse(payload)
    assert checked["stdout"] == "\\ud800 and π"
    assert checked["events"][-1]["text"] == "\\udfff\n"
    assert checked["tensors"]["t1"]["label"] == "a\\ud800"
    json.dumps(checked, ensure_ascii=False).encode("utf-8")  # storable as UTF-8
    render(checked)


def test_controls_are_kept_as_written_and_drawn_as_escapes(traces):
    """A NUL, an ESC or a BOM is the snippet's own text, valid JSON and UTF-8: stored as it was
    (the API gives back what was printed), and written out where a drawing holds it."""
    trace = copy.deepcopy(traces[0])
    trace["stdout"] = "\x1b[31mred\x07\x00\n"
    trace["tensors"]["t1"]["label"] = "\ufeffa\x00"
    checked = validate.parse(json.dumps(trace).encode())
    assert checked["stdout"] == "\x1b[31mred\x07\x00\n"
    assert checked["tensors"]["t1"]["label"] == "\ufeffa\x00"
    rendered = render(checked)
    last = len(rendered["steps"]) - 1
    drawings = [still(rendered, view, last) for view in rendered["views"]]
    for drawing in drawings:
        ET.fromstring(drawing)  # XML reads it
    assert "\\ufeffa\\x00" in drawings[0]


def test_text_the_tracer_bounds_is_refused_past_its_cap(traces):
    small = SandboxSettings(max_output_bytes=1024, max_source_bytes=1000)
    trace = copy.deepcopy(traces[0])
    trace["stdout"] = "x" * (1024 + validate.TRUNCATION_MARKER_ROOM + 1)
    with pytest.raises(validate.Malformed, match="stdout"):
        validate.check(trace, small)
    trace = copy.deepcopy(traces[0])
    trace["code"] = "#" * 1001
    with pytest.raises(validate.Malformed, match="code"):
        validate.check(trace, small)


def test_long_free_text_is_clipped(traces):
    trace = copy.deepcopy(traces[0])
    trace["tensors"]["t1"]["label"] = "a" * 100_000
    trace["nodes"]["n1"]["formula"] = "f" * 100_000
    validate.check(trace)
    assert len(trace["tensors"]["t1"]["label"]) == validate.LABEL_CAP
    assert trace["tensors"]["t1"]["label"].endswith("…")
    assert len(trace["nodes"]["n1"]["formula"]) == validate.FORMULA_CAP


def test_counts_are_capped(traces):
    few = SandboxSettings(max_events=4)
    with pytest.raises(validate.Malformed, match="event count"):
        validate.check(copy.deepcopy(traces[1]), few)
    trace = copy.deepcopy(traces[0])
    with pytest.raises(validate.Malformed, match="larger than"):
        validate.parse(_payload(trace), SandboxSettings(max_trace_bytes=100))


@pytest.mark.parametrize(
    "value",
    [float("inf"), float("nan"), 10**30, [[[1.0]]] * 5000, {"shape": [2], "min": 1}, [None]],
)
def test_values_are_bounded_numbers(traces, value):
    trace = copy.deepcopy(traces[0])
    trace["tensors"]["t1"]["value"] = value
    with pytest.raises(validate.Malformed, match="value"):
        validate.check(trace)


def test_json_constants_are_refused(traces):
    text = json.dumps(traces[0]).replace('"value": 3.0', '"value": NaN', 1)
    assert "NaN" in text
    with pytest.raises(validate.Malformed, match="not JSON"):
        validate.parse(text.encode())


def test_deep_values_cost_no_recursion(traces):
    trace = copy.deepcopy(traces[0])
    deep: list = [1.0]
    for _ in range(validate.RANK_CAP + 5):
        deep = [deep]
    trace["tensors"]["t1"]["value"] = deep
    with pytest.raises(validate.Malformed, match="value"):
        validate.check(trace)


def test_validation_is_linear_in_the_trace():
    """Same-line events, n and 4n of them: validating 4n takes < 8× the time of n."""
    big = SandboxSettings(max_events=200_000)

    def forged(n: int) -> bytes:
        return _payload(_same_line_trace(n))

    def seconds(payload: bytes) -> float:
        return cpu_seconds(lambda: validate.parse(payload, big))

    small, large = forged(5_000), forged(20_000)
    seconds(small)  # warm up
    assert seconds(large) < 8 * seconds(small)


def _same_line_trace(n: int) -> dict:
    tensors = {
        f"t{i + 1}": {
            "label": "torch.ones(1)", "shape": [1], "dtype": "float32", "requires_grad": False,
            "is_leaf": True, "grad_fn": None, "value": [1.0], "created": i,
        }
        for i in range(n)
    }  # fmt: skip
    events = [
        {"seq": i, "kind": "tensor", "tensor": f"t{i + 1}", "op": None, "inputs": [],
         "span": [3, 4, 3, 17]}
        for i in range(n)
    ]  # fmt: skip
    return {
        "version": 1, "code": "import torch\nfor i in range(n):\n    torch.ones(1)\n",
        "tensors": tensors, "nodes": {}, "modules": [], "events": events, "stdout": "",
        "stderr": "", "outcome": {"status": "ok"},
        "limits": {"truncated": False, "max_events": n, "stopped_line": None},
        "unseeded_random": False,
    }  # fmt: skip


# ***** whatever passes validation renders *****

REPLACEMENTS = [
    None, 0, 1, -1, 2, 7, 10**9, 1.5, -0.0, True, False, "", "t1", "t2", "t99", "n1", "n2",
    "n99", "result", "\\N\\G", "<b>x</b>", "{a|b}", "\ud800", "nan", "inf", "AccumulateGrad",
    "MulBackward0", "optimizer.step", "setitem", "tensor", "op", "free", "error", "ok",
    "grad_mode", "inplace", "accumulate", "node_backward", "backward_end", "print", "grad_set",
    [], [None], [0], ["t1"], ["n1"], [["n1", 0]], [[None, 0]], [1, 2, 3, 4], [[1.0, 2.0]],
    {}, {"from": None, "grad": 1.0}, {"shape": [2, 3], "min": 0, "max": 1, "mean": 0.5,
    "first": [0, 1]}, {"status": "error", "type": "E", "message": "m"},
]  # fmt: skip


def _paths(value, path=()):
    """Every place in a JSON value: (path, value) pairs."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _mutate(trace: dict, data) -> dict:
    trace = copy.deepcopy(trace)
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        places = [p for p, _ in _paths(trace) if p]
        path = data.draw(st.sampled_from(places), label="path")
        parent = trace
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        how = data.draw(st.sampled_from(["replace", "replace", "delete", "duplicate"]))
        if how == "replace":
            parent[last] = copy.deepcopy(data.draw(st.sampled_from(REPLACEMENTS), label="with"))
        elif how == "delete":
            del parent[last]
        elif isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
        else:
            parent[f"{last}x"] = copy.deepcopy(parent[last])
    return trace


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_trace_that_passes_validation_renders(traces, data):
    base = data.draw(st.sampled_from(traces), label="trace")
    mutated = _mutate(base, data)
    try:
        validate.check(mutated)
    except validate.Malformed:
        return
    json.dumps(mutated, ensure_ascii=False, allow_nan=False).encode("utf-8")
    render(mutated)
    narrate(mutated)
