"""The Tracer: what a snippet's trace holds, checked against docs/trace.schema.json.

Every trace made here is validated against the schema and checked for dangling references, so
each test also guards the format as a whole.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

import engine
from app.sandbox import validate
from engine import tracing
from engine.snippet import run_snippet
from engine.trace_values import encode, shortest_float32
from engine.tracer import MODULE_DEPTH_LIMIT, trace_snippet
from tests import corpus
from tests.engine.goldens import assert_printed
from tests.trace_schema import SCHEMA, VALIDATOR, ValidationError

DOCS = Path(__file__).resolve().parents[2] / "docs"
GOLDEN = corpus.STEPWISE

SEED = """\
import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a*b + a
d.backward()
print(a.grad.item(), b.grad.item())
"""

NAMED = """\
import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
c = a * b
d = c + a
d.backward()
"""

MLP = """\
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 4)
y = torch.randn(16, 1)
for step in range(3):
    opt.zero_grad()
    loss = ((model(x) - y) * (model(x) - y)).mean()
    loss.backward()
    opt.step()
print(loss.item())
"""

SNIPPETS = {
    "seed": SEED,
    "named": NAMED,
    "mlp": MLP,
    "no_grad": """\
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    v = w * 2
    w -= 0.5 * v
print(w)
""",
    "retain_grad": """\
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x.exp()
h.retain_grad()
h.sum().backward()
print(h.grad, x.grad)
""",
    "grad_changes": """\
import torch
from torch import nn
w = torch.tensor([1.0, 2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
opt.zero_grad()
(w * 3).sum().backward()
opt.zero_grad(set_to_none=False)
w.grad = w.grad
g = torch.ones(2)
w.grad = g
del w.grad
w.grad = None
model = nn.Linear(2, 1)
model(w).sum().backward()
model.zero_grad()
""",
    "inplace_and_views": """\
import torch
x = torch.zeros(2, 3)
x += 1
x[0, 1] = 5.0
row = x[1]
row.mul_(2)
x.t().sum()
d = x.detach()
w = torch.ones(3, requires_grad=True)
w.data -= 0.1
""",
    "dtypes_and_large": """\
import torch
big = torch.arange(1000.0)
ints = torch.arange(100)
mask = big > 500
odd = torch.tensor([float('nan'), float('inf'), -float('inf'), 0.1])
print(mask.sum().item(), ints.argmax())
""",
    "function_and_module": """\
import torch
from torch import nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, x):
        return F.relu(self.fc(x))

def square(t):
    return t * t

net = Net()
out = square(net(torch.ones(3, 2))).sum()
out.backward()
""",
    "autograd_grad_and_unbind": """\
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
p, q = (x * x).unbind()
(g,) = torch.autograd.grad(p + q, x, retain_graph=True)
print(g)
""",
    "runtime_error": """\
import torch
a = torch.ones(2, 3)
b = torch.ones(4, 5)
c = a @ b
""",
    "syntax_error": "x = (\n",
    "warning": """\
import torch
a = torch.tensor(1.0, requires_grad=True)
c = a * 2
print(c.grad)
""",
}


def check(trace: dict[str, Any]) -> dict[str, Any]:
    """The app's own validator and the schema on the whole trace, strict JSON, and no reference
    to anything not yet introduced."""
    validate.check(trace)
    VALIDATOR.validate(trace)
    json.dumps(trace, allow_nan=False)
    tensors, nodes, events = trace["tensors"], trace["nodes"], trace["events"]
    for i, event in enumerate(events):
        assert event["seq"] == i
    for record in [*tensors.values(), *nodes.values()]:
        assert record["created"] < len(events)

    def known(kind: str, ref: str | None, seq: int) -> None:
        if ref is not None:
            table = tensors if kind == "t" else nodes
            assert ref in table, ref
            assert table[ref]["created"] <= seq, (ref, seq)

    for record in tensors.values():
        known("n", record["grad_fn"], record["created"])
    for record in nodes.values():
        for ref in [*record["inputs"], *record["outputs"], record.get("variable")]:
            known("t", ref, record["created"])
        for ref in record["saved"]:
            if ref != "result":
                known("t", ref, record["created"])
        for ref, _ in record["next"]:
            known("n", ref, record["created"])
    for event in events:
        seq = event["seq"]
        for key in ("tensor", "grad_tensor"):
            known("t", event.get(key), seq)
        for key in ("inputs", "outputs", "roots"):
            for ref in event.get(key, ()):
                known("t", ref, seq)
        for ref in event.get("nodes", ()):
            known("n", ref, seq)
        known("n", event.get("node"), seq)
        for source in event.get("sources", ()):
            known("n", source["from"], seq)
    return trace


def run(code: str, **kwargs) -> dict[str, Any]:
    return check(trace_snippet(code, **kwargs))


def of_kind(trace: dict, kind: str) -> list[dict]:
    return [e for e in trace["events"] if e["kind"] == kind]


def label_of(trace: dict, tid: str) -> str:
    return trace["tensors"][tid]["label"]


def text_at(code: str, span: list[int]) -> str:
    line, col, end_line, end_col = span
    assert line == end_line
    return code.splitlines()[line - 1][col:end_col]


# ***** the format *****


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_traces_match_the_schema(name: str) -> None:
    trace = run(SNIPPETS[name])
    assert trace["version"] == 1
    assert trace["code"] == SNIPPETS[name]


@pytest.mark.parametrize(
    "break_it",
    [
        lambda t: t["events"][2].pop("span"),
        lambda t: t["events"][2].update(extra=1),
        lambda t: t["events"][2].update(kind="mystery"),
        lambda t: t["tensors"]["t1"].update(value="NaN"),
        lambda t: t["nodes"]["n2"].pop("variable"),
        lambda t: t["outcome"].update(status="error"),
        lambda t: t.update(version=2),
    ],
)
def test_schema_rejects_broken_traces(break_it) -> None:
    trace = run(SEED)
    break_it(trace)
    with pytest.raises(ValidationError):
        VALIDATOR.validate(trace)


def test_docs_worked_example_is_a_real_trace() -> None:
    text = (DOCS / "trace-format.md").read_text()
    example = text[text.index("## Worked example") :]
    code = re.search(r"```python\n(.*?)```", example, re.S).group(1)
    shown = json.loads(re.search(r"```json\n(.*?)```", example, re.S).group(1))
    assert code == SEED
    assert shown == run(code)


@pytest.mark.parametrize("golden", corpus.spread(GOLDEN, lambda g: g["slug"]))
def test_traced_snippets_still_behave_as_pytorch(golden: dict[str, Any]) -> None:
    """Tracing changes nothing: the output and error PyTorch 2.13 gave, in a valid trace."""
    trace = check(corpus.traced(golden["source"]))
    outcome = trace["outcome"]
    if golden.get("unsupported"):
        assert outcome["type"] == "UnsupportedByGradtrace"
        return
    assert_printed(trace["stdout"], golden)
    error = None if outcome["status"] == "ok" else [outcome["type"], outcome["message"]]
    assert error == golden["error"]
    if error is not None:
        assert trace["events"][-1]["kind"] == "error"


# ***** spans and labels *****


def test_one_line_gives_two_ops_with_their_own_spans() -> None:
    trace = run(SEED)
    ops = of_kind(trace, "op")
    assert [op["name"] for op in ops] == ["MulBackward0", "AddBackward0"]
    assert [op["span"] for op in ops] == [[4, 4, 4, 7], [4, 4, 4, 11]]
    assert [text_at(SEED, op["span"]) for op in ops] == ["a*b", "a*b + a"]


def test_tensors_are_labelled_with_variable_names() -> None:
    trace = run(NAMED)
    labels = [record["label"] for record in trace["tensors"].values()]
    assert labels[:4] == ["a", "b", "c", "d"]
    assert labels[4:] == ["a.grad", "b.grad"]


def test_unnamed_tensors_are_labelled_with_their_source_text() -> None:
    trace = run(SEED)
    (mul,) = [op for op in of_kind(trace, "op") if op["name"] == "MulBackward0"]
    assert label_of(trace, mul["outputs"][0]) == "a*b"


def test_module_parameters_and_grads_are_labelled_by_path() -> None:
    trace = run(MLP)
    labels = {record["label"] for record in trace["tensors"].values()}
    assert {"model[0].weight", "model[0].bias", "model[2].weight", "model[2].bias"} <= labels
    assert {"model[0].weight.grad", "x", "y", "loss"} <= labels
    assert not any(label.startswith("self.") for label in labels)


def test_names_inside_snippet_functions_and_methods() -> None:
    trace = run(SNIPPETS["function_and_module"])
    labels = [record["label"] for record in trace["tensors"].values()]
    assert labels[:2] == ["net.fc.weight", "net.fc.bias"]
    assert "out" in labels
    (square,) = [op for op in of_kind(trace, "op") if op["name"] == "MulBackward0"]
    assert text_at(trace["code"], square["span"]) == "t * t"


def test_a_methods_self_does_not_name_parameters() -> None:
    code = """\
import torch
from torch import nn

class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return x * self.k

out = Scale()(torch.ones(1))
"""
    labels = [record["label"] for record in run(code)["tensors"].values()]
    assert labels == ["torch.ones(1)", "nn.Parameter(torch.ones(1))", "x", "out"]


def test_columns_count_characters_not_bytes() -> None:
    code = "import torch\nπ = torch.tensor(2.0); r = π * 3\n"
    trace = run(code)
    (op,) = of_kind(trace, "op")
    assert text_at(code, op["span"]) == "π * 3"
    assert label_of(trace, op["outputs"][0]) == "r"


# ***** module calls *****

NET = """\
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 3)
        self.fc2 = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

net = Net()
x = torch.ones(4, 2)
loss = nn.MSELoss()(net(x), torch.zeros(4, 1))
"""


def calls_of(trace: dict) -> list[tuple]:
    return [(c["module"], c["name"], c["type"], c["parent"]) for c in trace["modules"]]


def module_of(trace: dict, event: dict) -> tuple | None:
    """The name and type of the call an event happened in, None outside any call."""
    if "module" not in event:
        return None
    call = trace["modules"][event["module"]]
    return call["name"], call["type"]


def test_module_calls_are_listed_with_their_names_types_and_parents() -> None:
    trace = run(MLP)
    first_pass = calls_of(trace)[:4]
    assert first_pass == [
        ("m1", "model", "Sequential", None),
        ("m2", "model[0]", "Linear", 0),
        ("m3", "model[1]", "ReLU", 0),
        ("m4", "model[2]", "Linear", 0),
    ]


def test_a_users_module_is_named_by_attribute_and_an_anonymous_one_is_null() -> None:
    trace = run(NET)
    assert calls_of(trace) == [
        ("m1", "net", "Net", None),
        ("m2", "net.fc1", "Linear", 0),
        ("m3", "net.fc2", "Linear", 0),
        ("m4", None, "MSELoss", None),
    ]


def test_an_event_carries_the_innermost_call_and_one_outside_none() -> None:
    trace = run(NET)
    where = [
        (e["kind"], e.get("name") or e.get("op"), module_of(trace, e)) for e in trace["events"]
    ]
    assert where == [
        ("tensor", "parameter", None),  # built, not called: outside any call
        ("tensor", "parameter", None),
        ("tensor", "parameter", None),
        ("tensor", "parameter", None),
        ("tensor", "ones", None),
        ("op", "TBackward0", ("net.fc1", "Linear")),
        ("op", "AddmmBackward0", ("net.fc1", "Linear")),
        ("op", "ReluBackward0", ("net", "Net")),  # torch.relu in Net.forward itself
        ("op", "TBackward0", ("net.fc2", "Linear")),
        ("op", "AddmmBackward0", ("net.fc2", "Linear")),
        ("tensor", "zeros", None),
        ("op", "MseLossBackward0", (None, "MSELoss")),
    ]


def test_only_tensor_op_and_inplace_events_carry_a_module() -> None:
    trace = run(MLP)
    kinds = {e["kind"] for e in trace["events"] if "module" in e}
    assert kinds == {"op"}
    assert {e["kind"] for e in trace["events"]} - {"tensor", "op", "inplace"}  # others exist
    trace = run(
        "import torch\nfrom torch import nn\nclass Grow(nn.Module):\n"
        "    def forward(self, x):\n        x.add_(1)\n        return torch.zeros(1)\n"
        "Grow()(torch.ones(1))\n"
    )
    assert [(e["kind"], e.get("module")) for e in trace["events"]] == [
        ("tensor", None),
        ("inplace", 0),
        ("tensor", 0),
    ]


def test_a_call_that_records_nothing_is_not_listed() -> None:
    code = (
        "import torch\nfrom torch import nn\nx = torch.ones(2)\ny = nn.Identity()(x)\n"
        "model = nn.Sequential(nn.Identity(), nn.ReLU())\nz = model(x)\n"
    )
    trace = run(code)
    assert calls_of(trace) == [("m1", "model", "Sequential", None), ("m2", "model[1]", "ReLU", 0)]


def test_every_pass_of_a_training_loop_is_a_call_of_the_same_module() -> None:
    trace = run(MLP)  # model(x) twice a step, three steps
    outermost = [c for c in trace["modules"] if c["parent"] is None]
    assert [c["module"] for c in outermost] == ["m1"] * 6
    layers = [c["module"] for c in trace["modules"] if c["name"] == "model[0]"]
    assert layers == ["m2"] * 6
    assert len(trace["modules"]) == 6 * 4


def test_a_module_named_after_its_call_is_named_in_that_call() -> None:
    code = """\
import torch
from torch import nn

class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.width = self.fc(torch.zeros(1, 2)).shape[1]  # called before any name reaches it

probe = Probe()
"""
    trace = run(code)
    assert calls_of(trace) == [("m1", "probe.fc", "Linear", None)]


def test_an_exception_in_forward_leaves_no_call_open() -> None:
    code = """\
import torch
from torch import nn

class Boom(nn.Module):
    def forward(self, x):
        y = x * 2
        raise ValueError("boom")

x = torch.ones(2)
try:
    Boom()(x)
except ValueError:
    pass
z = x + 1
"""
    trace = run(code)
    assert trace["outcome"] == {"status": "ok"}
    assert [(e["kind"], e.get("module")) for e in trace["events"]] == [
        ("tensor", None),
        ("op", 0),
        ("op", None),
    ]
    assert calls_of(trace) == [("m1", None, "Boom", None)]


def test_calls_nested_deeper_than_the_limit_are_not_listed() -> None:
    code = """\
import torch
from torch import nn

class Chain(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.child = Chain(depth - 1) if depth else None

    def forward(self, x):
        x = x + 1
        return self.child(x) if self.child is not None else x

chain = Chain(99)
out = chain(torch.zeros(1))
"""
    trace = run(code)
    assert trace["outcome"] == {"status": "ok"} and out_value(trace) == 100.0
    calls = trace["modules"]
    assert len(calls) == MODULE_DEPTH_LIMIT
    assert [c["parent"] for c in calls] == [None, *range(MODULE_DEPTH_LIMIT - 1)]
    assert calls[2]["name"] == "chain.child.child"
    adds = [e["module"] for e in of_kind(trace, "op")]
    assert len(adds) == 100
    assert adds == [*range(MODULE_DEPTH_LIMIT), *[MODULE_DEPTH_LIMIT - 1] * 84]


def out_value(trace: dict) -> float:
    (out,) = [t for t in trace["tensors"].values() if t["label"] == "out"]
    return out["value"][0]


# ***** graph and backward *****


def test_node_records() -> None:
    trace = run("import torch\na = torch.tensor(3.0, requires_grad=True)\nb = a * 2\n")
    mul, accumulate = trace["nodes"]["n1"], trace["nodes"]["n2"]
    assert mul["name"] == "MulBackward0"
    assert mul["inputs"] == ["t1", None]
    assert mul["outputs"] == ["t2"]
    assert mul["next"] == [["n2", 0], [None, 0]]
    assert mul["saved"] == [None]  # the derivative for a is the number 2
    assert mul["formula"] == engine.functions.MulBackward0.formula
    assert accumulate["name"] == "AccumulateGrad"
    assert accumulate["variable"] == "t1"
    assert trace["tensors"]["t2"]["grad_fn"] == "n1"


def test_node_backward_carries_gradients_in_and_out() -> None:
    trace = run(SEED)
    add, mul = of_kind(trace, "node_backward")
    assert trace["nodes"][add["node"]]["name"] == "AddBackward0"
    assert add["grad_outputs"] == [1.0]
    assert add["grad_inputs"] == [1.0, 1.0]
    assert add["sources"] == [{"from": None, "grad": 1.0}]
    assert mul["grad_outputs"] == [1.0]
    assert mul["grad_inputs"] == [4.0, 3.0]  # 1·b to a, 1·a to b
    assert mul["sources"] == [{"from": add["node"], "grad": 1.0}]


def test_accumulate_adds_the_two_paths_into_a() -> None:
    trace = run(SEED)
    for_a, for_b = of_kind(trace, "accumulate")
    assert label_of(trace, for_a["tensor"]) == "a"
    names = [trace["nodes"][s["from"]]["name"] for s in for_a["sources"]]
    assert names == ["AddBackward0", "MulBackward0"]
    assert [s["grad"] for s in for_a["sources"]] == [1.0, 4.0]
    assert for_a["contribution"] == for_a["grad"] == 5.0
    assert label_of(trace, for_a["grad_tensor"]) == "a.grad"
    assert for_a["node"] == "n2"
    assert label_of(trace, for_b["tensor"]) == "b"
    assert for_b["contribution"] == for_b["grad"] == 3.0


def test_accumulate_reports_the_running_total() -> None:
    code = SEED.replace("d.backward()", "d.backward(retain_graph=True)\nd.backward()")
    trace = run(code)
    first, _, second, _ = of_kind(trace, "accumulate")
    assert (first["contribution"], first["grad"]) == (5.0, 5.0)
    assert (second["contribution"], second["grad"]) == (5.0, 10.0)
    assert second["grad_tensor"] == first["grad_tensor"]  # added into the same .grad


def test_graph_is_freed_after_backward() -> None:
    trace = run(SEED)
    kinds = [e["kind"] for e in trace["events"]]
    assert kinds.index("free") > max(i for i, k in enumerate(kinds) if k == "accumulate")
    assert kinds.index("backward_end") == kinds.index("free") + 1
    (free,) = of_kind(trace, "free")
    assert [trace["nodes"][n]["name"] for n in free["nodes"]] == ["MulBackward0"]


def test_retain_graph_frees_nothing() -> None:
    trace = run(SEED.replace("d.backward()", "d.backward(retain_graph=True)"))
    assert of_kind(trace, "free") == []
    assert of_kind(trace, "backward_end")[0]["retain_graph"] is True


def test_second_backward_is_an_error_event_with_pytorch_message() -> None:
    code = NAMED + "d.backward()\n"
    trace = run(code)
    error = trace["events"][-1]
    assert error["kind"] == "error"
    assert error["type"] == "RuntimeError"
    assert error["message"].startswith("Trying to backward through the graph a second time")
    assert error["span"] == [7, 0, 7, 12]
    assert trace["outcome"] == {
        "status": "error",
        "type": "RuntimeError",
        "message": error["message"],
        "span": [7, 0, 7, 12],
    }
    assert len(of_kind(trace, "backward_begin")) == 2
    assert len(of_kind(trace, "backward_end")) == 1


def test_retain_grad_is_requested_then_captured() -> None:
    trace = run(SNIPPETS["retain_grad"])
    asked, captured = of_kind(trace, "retain_grad")
    assert label_of(trace, asked["tensor"]) == "h"
    assert asked["captured"] is False
    assert captured["captured"] is True and captured["tensor"] == asked["tensor"]
    assert captured["grad"] == [1.0, 1.0, 1.0]
    assert label_of(trace, captured["grad_tensor"]) == "h.grad"


def test_every_change_of_grad_is_a_grad_set_or_an_inplace_zeroing() -> None:
    code = SNIPPETS["grad_changes"]
    trace = run(code)
    changes = [e for e in trace["events"] if e["kind"] in ("grad_set", "inplace")]
    said = [
        (text_at(code, e["span"]), e["kind"], label_of(trace, e["tensor"]), e.get("grad"))
        for e in changes
    ]
    # zero_grad() with nothing in .grad, and `w.grad = w.grad`, change nothing: no event
    assert said == [
        ("opt.zero_grad(set_to_none=False)", "inplace", "w.grad", None),
        ("w.grad", "grad_set", "w", [1.0, 1.0]),  # w.grad = g
        ("w.grad", "grad_set", "w", None),  # del w.grad
        ("model.zero_grad()", "grad_set", "model.weight", None),
        ("model.zero_grad()", "grad_set", "model.bias", None),
    ]
    zeroing = changes[0]
    assert (zeroing["name"], zeroing["node"], zeroing["version"], zeroing["value"]) == (
        "zero_grad",
        None,
        1,
        [0.0, 0.0],
    )
    accumulate = next(e for e in of_kind(trace, "accumulate") if e["tensor"] == "t1")
    assert zeroing["tensor"] == accumulate["grad_tensor"]  # the same .grad tensor, zeroed
    assigned = changes[1]
    (made,) = [e for e in of_kind(trace, "tensor") if e["op"] == "ones"]
    assert assigned["grad_tensor"] == made["tensor"]  # g itself, not a copy
    assert all(e["grad_tensor"] is None for e in changes[2:])


def test_del_grad_leaves_none_as_in_pytorch() -> None:
    trace = run("import torch\nx = torch.ones(2, requires_grad=True)\nx.sum().backward()\n"
                "del x.grad\nprint(x.grad)\n")  # fmt: skip
    assert trace["outcome"] == {"status": "ok"} and trace["stdout"] == "None\n"
    (event,) = of_kind(trace, "grad_set")
    assert event["grad_tensor"] is None and event["grad"] is None


def test_no_grad_records_grad_mode_events_and_no_nodes() -> None:
    code = """\
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    v = w * 2
"""
    trace = run(code)
    assert [e["enabled"] for e in of_kind(trace, "grad_mode")] == [False, True]
    assert trace["nodes"] == {}
    (op,) = of_kind(trace, "op")
    assert op["node"] is None and op["name"] == "MulBackward0"
    assert trace["tensors"][op["outputs"][0]]["requires_grad"] is False


def test_inplace_changes_carry_version_and_new_value() -> None:
    trace = run("import torch\nx = torch.zeros(2)\nx += 1\nx[0] = 5.0\n")
    add, assign = of_kind(trace, "inplace")
    assert (add["name"], add["version"], add["value"], add["node"]) == (
        "AddBackward0",
        1,
        [1.0, 1.0],
        None,
    )
    assert (assign["name"], assign["version"], assign["value"]) == ("setitem", 2, [5.0, 1.0])
    assert add["tensor"] == assign["tensor"] == "t1"
    assert trace["tensors"]["t1"]["value"] == [0.0, 0.0]  # as created


def test_loop_builds_a_fresh_graph_each_iteration() -> None:
    code = """\
import torch
w = torch.tensor(2.0, requires_grad=True)
for i in range(3):
    loss = w * i
    loss.backward()
"""
    trace = run(code)
    muls = [op["node"] for op in of_kind(trace, "op")]
    assert len(set(muls)) == 3
    assert [f["nodes"] for f in of_kind(trace, "free")] == [[n] for n in muls]
    accumulates = of_kind(trace, "accumulate")
    assert {a["node"] for a in accumulates} == {"n2"}  # w's AccumulateGrad is reused
    assert [a["grad"] for a in accumulates] == [0.0, 1.0, 3.0]
    assert [label_of(trace, op["outputs"][0]) for op in of_kind(trace, "op")] == ["loss"] * 3


def test_a_tight_loop_names_every_iteration() -> None:
    code = "import torch\ny = torch.ones(1)\nfor i in range(3):\n    y = y * 2\n"
    trace = run(code)
    assert [record["label"] for record in trace["tensors"].values()] == ["y"] * 4


# ***** prints, errors, limits *****


def test_print_events_and_stdout() -> None:
    code = "print('a', 1, sep='-', end='!')\nprint()\nfor i in range(2):\n    print(i)\n"
    trace = run(code)
    prints = of_kind(trace, "print")
    assert [p["text"] for p in prints] == ["a-1!", "\n", "0\n", "1\n"]
    assert trace["stdout"] == "a-1!\n0\n1\n"
    assert prints[0]["span"] == [1, 0, 1, 31]
    assert prints[3]["span"] == [4, 4, 4, 12]


def test_printed_addresses_are_stable() -> None:
    code = NAMED + "print(c.grad_fn, d.grad_fn, c.grad_fn)\n"
    text = run(code)["stdout"]
    first, second, again = re.findall(r"object at (0x[0-9a-f]+)>", text)
    assert (first, second, again) == ("0x7f0000001000", "0x7f0000001040", "0x7f0000001000")


def test_warnings_go_to_stderr() -> None:
    trace = run(SNIPPETS["warning"])
    assert trace["stderr"].startswith("<snippet>:4: UserWarning: The .grad attribute of a Tensor")
    assert trace["stderr"].endswith("print(c.grad)\n")
    assert trace["stdout"] == "None\n"


def test_stderr_writes_are_kept_without_events() -> None:
    trace = run("import sys\nprint('oops', file=sys.stderr)\nprint('fine', file=sys.stdout)\n")
    assert trace["stderr"] == "oops\n"
    assert [e["text"] for e in of_kind(trace, "print")] == ["fine\n"]


def test_error_inside_the_engine_points_at_the_snippet_line() -> None:
    trace = run(SNIPPETS["runtime_error"])
    assert trace["outcome"]["type"] == "RuntimeError"
    assert trace["outcome"]["message"].startswith("mat1 and mat2 shapes cannot be multiplied")
    assert text_at(trace["code"], trace["outcome"]["span"]) == "a @ b"


def test_syntax_error() -> None:
    trace = run(SNIPPETS["syntax_error"])
    assert trace["events"] == [
        {
            "seq": 0,
            "kind": "error",
            "type": "SyntaxError",
            "message": "'(' was never closed",
            "span": [1, 4, 1, 5],
        }
    ]
    assert trace["outcome"]["status"] == "error"


def _untraced_output(code: str) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        run_snippet(code)
    return printed.getvalue()


def test_past_the_cap_recording_stops_and_the_program_runs_to_its_end() -> None:
    full = run(MLP)
    cut = run(MLP, max_events=50)
    line = full["events"][50]["span"][0]  # the first event past the cap came from there
    assert not full["limits"]["truncated"] and full["limits"]["stopped_line"] is None
    assert cut["limits"] == {"truncated": True, "max_events": 50, "stopped_line": line}
    assert cut["events"] == full["events"][:50]
    assert cut["modules"] == full["modules"][: len(cut["modules"])]  # no call of a later event
    assert max(e.get("module", -1) for e in cut["events"]) == len(cut["modules"]) - 1
    assert cut["outcome"] == {"status": "ok"}
    for tid, record in cut["tensors"].items():
        assert {**record, "label": None} == {**full["tensors"][tid], "label": None}
    # the final print came long after the cut, and is there, with the trained loss
    assert cut["stdout"] == full["stdout"] == _untraced_output(MLP) != ""


def test_a_long_loop_prints_all_it_would_untraced() -> None:
    code = (
        "import torch\nx = torch.ones(2)\ny = x\nfor i in range(30_000):\n"
        "    y = y * 1.0000001\n    if i % 5000 == 0:\n        print(i, y)\nprint(y.sum())\n"
    )
    trace = run(code)
    assert len(trace["events"]) == 20_000 and trace["limits"]["stopped_line"] == 5
    assert trace["stdout"] == _untraced_output(code)
    assert trace["stdout"].count("\n") == 7
    printed = [e["text"] for e in trace["events"] if e["kind"] == "print"]
    assert "".join(printed) == "".join(trace["stdout"].splitlines(True)[: len(printed)])


def test_catching_everything_does_not_hide_the_cap_from_the_trace() -> None:
    code = """\
import torch
made = 0
for i in range(100):
    try:
        torch.zeros(1)
        made += 1
    except BaseException:
        pass
print(made)
raise SystemExit(0)
"""
    trace = run(code, max_events=5)
    assert len(trace["events"]) == 5 and trace["limits"]["stopped_line"] == 5
    assert trace["stdout"] == "100\n" and trace["outcome"] == {"status": "ok"}


def test_an_error_after_recording_stopped_is_how_the_run_ended() -> None:
    trace = run("import torch\nfor i in range(9):\n    torch.ones(1)\n1 / 0\n", max_events=3)
    assert trace["outcome"]["status"] == "error"
    assert trace["outcome"]["type"] == "ZeroDivisionError"
    assert trace["outcome"]["span"][0] == 4
    assert trace["limits"] == {"truncated": True, "max_events": 3, "stopped_line": 3}
    assert len(trace["events"]) == 3


def test_an_error_whose_own_event_is_past_the_cap_leaves_the_trace_whole() -> None:
    trace = run("import torch\ntorch.ones(1)\n1 / 0\n", max_events=1)
    assert trace["outcome"]["status"] == "error"
    assert trace["outcome"]["type"] == "ZeroDivisionError"
    assert not trace["limits"]["truncated"] and len(trace["events"]) == 1


def test_a_backward_under_way_at_the_cap_finishes_unrecorded() -> None:
    # backward() holds the tracer while it runs: it must still record nothing past the cap
    code = MLP.replace("range(3)", "range(40)")
    full_events = len(run(MLP)["events"])
    for cap in range(full_events // 3, full_events // 3 + 12):
        trace = run(code, max_events=cap)
        assert len(trace["events"]) == cap and trace["stdout"] == _untraced_output(code)


def test_same_code_gives_the_same_bytes() -> None:
    code = MLP.replace("torch.manual_seed(0)\n", "") + "print(loss.grad_fn)\n"
    first = json.dumps(run(code), allow_nan=False)
    run(SNIPPETS["function_and_module"])  # disturb any global counters in between
    second = json.dumps(run(code), allow_nan=False)
    assert first == second


def test_same_code_gives_the_same_bytes_in_another_process() -> None:
    program = (
        "import json, sys\n"
        "from engine.tracer import trace_snippet\n"
        "sys.stdout.write(json.dumps(trace_snippet(sys.stdin.read()), allow_nan=False))\n"
    )
    code = MLP + "print(loss.grad_fn, {'a', 'b'} == {'b', 'a'})\n"
    root = Path(__file__).resolve().parents[2]
    outputs = {
        subprocess.run(
            [sys.executable, "-c", program],
            input=code,
            capture_output=True,
            text=True,
            cwd=root,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert outputs == {json.dumps(run(code), allow_nan=False)}


# ***** running snippets *****


def test_torch_imports_resolve_to_the_engine() -> None:
    code = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import nn as nn2, optim
from torch.autograd import grad
print(torch.__name__, nn.__name__, F.__name__, nn2 is nn, optim.__name__, grad.__module__)
"""
    trace = run(code)
    assert trace["stdout"] == (
        "torch torch.nn torch.nn.functional True torch.optim torch.autograd\n"
    )


def test_missing_torch_module_says_so() -> None:
    trace = run("import torch.fft\n")
    assert trace["outcome"]["type"] == "UnsupportedByGradtrace"
    assert trace["outcome"]["message"].startswith("torch.fft is not supported by gradtrace's")
    assert run("import torch.float32\n")["outcome"]["type"] == "ModuleNotFoundError"


def test_other_imports_go_to_the_given_importer() -> None:
    def refuse(name, *args):
        raise ImportError(f"import of {name} is not allowed here")

    trace = run("import math\n", importer=refuse)
    assert trace["outcome"]["message"] == "import of math is not allowed here"
    assert run("import math\nprint(math.pi)\n")["stdout"] == "3.141592653589793\n"


def test_tracing_and_grad_mode_are_restored() -> None:
    run("import torch\ntorch.set_grad_enabled(False)\nraise ValueError('x')\n")
    assert tracing.current is None
    assert engine.is_grad_enabled()


def test_exit_zero_is_a_normal_end() -> None:
    assert run("print(1)\nexit(0)\nprint(2)\n")["outcome"] == {"status": "ok"}
    assert run("exit(3)\n")["outcome"]["type"] == "SystemExit"


# ***** random numbers drawn before any seed *****
# PyTorch seeds its default generator differently on each run; the engine starts it from 0, so
# the trace says when a snippet's numbers depend on that.


@pytest.mark.parametrize(
    "code",
    [
        "x = torch.randn(2)",
        "layer = torch.nn.Linear(2, 3)",  # its initial weights are drawn
        "x = torch.rand(2)",
        "x = torch.randint(0, 5, (3,))",
        "x = torch.randperm(4)",
        "x = torch.zeros(3).normal_()",
        "x = torch.nn.functional.dropout(torch.ones(4), 0.5)",
        "x = torch.randn(2, generator=torch.default_generator)",
        "torch.cuda.manual_seed_all(0)\nx = torch.randn(2)",  # no seed for the CPU's generator
        "x = torch.randn(2)\ntorch.manual_seed(0)\ny = torch.randn(2)",  # seeded too late
        "torch.manual_seed(0)\ntorch.seed()\nx = torch.randn(2)",  # torch.seed() unseeds
        "torch.manual_seed(0)\nx = torch.randn(1)\ntorch.seed()\ny = torch.randn(1)",
    ],
)
def test_a_draw_from_the_unseeded_default_generator_is_flagged(code) -> None:
    assert run(f"import torch\n{code}\n")["unseeded_random"] is True


@pytest.mark.parametrize(
    "code",
    [
        "x = torch.ones(2) * 3",  # no draw at all
        "torch.manual_seed(0)\nx = torch.randn(2)",
        "torch.random.manual_seed(1)\nlayer = torch.nn.Linear(2, 3)",
        "torch.default_generator.manual_seed(2)\nx = torch.rand(2)",
        "g = torch.Generator().manual_seed(1)\nx = torch.randn(2, generator=g)",
        "x = torch.randn(2, generator=torch.Generator())",  # PyTorch's fixed default seed
        "x = torch.randn(0)",  # nothing drawn
        "x = (",  # a syntax error: nothing ran
    ],
)
def test_no_draw_or_only_seeded_draws_is_not_flagged(code) -> None:
    assert run(f"import torch\n{code}\n")["unseeded_random"] is False


def test_each_run_starts_unflagged_and_unseeded() -> None:
    assert run("import torch\nx = torch.randn(2)\n")["unseeded_random"] is True
    assert run("import torch\n")["unseeded_random"] is False
    assert run("import torch\ntorch.manual_seed(0)\n")["unseeded_random"] is False
    assert run("import torch\nx = torch.rand(1)\n")["unseeded_random"] is True  # seed gone


# ***** values *****


@pytest.mark.parametrize(
    ("array", "expected"),
    [
        (np.float32(0.1), 0.1),
        (
            np.array([1 / 3, 2e-20, 3.4028235e38, -0.0], np.float32),
            [0.33333334, 2e-20, 3.4028235e38, -0.0],
        ),
        (np.array([np.nan, np.inf, -np.inf], np.float32), ["nan", "inf", "-inf"]),
        (np.array([0.1, np.nan]), [0.1, "nan"]),
        (np.array([[1, 2], [3, 4]]), [[1, 2], [3, 4]]),
        (np.array([True, False]), [True, False]),
        (np.zeros((2, 0), np.float32), [[], []]),
    ],
)
def test_values_are_written_whole_when_small(array, expected) -> None:
    assert encode(np.asarray(array)) == expected


def test_traced_values_are_strict_json() -> None:
    trace = run(SNIPPETS["dtypes_and_large"])
    values = {record["label"]: record["value"] for record in trace["tensors"].values()}
    assert values["odd"] == ["nan", "inf", "-inf", 0.1]
    assert values["big"] == {
        "shape": [1000],
        "min": 0.0,
        "max": 999.0,
        "mean": 499.5,
        "first": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
    }
    assert values["ints"]["max"] == 99 and values["mask"]["first"] == [False] * 6


def test_large_values_are_summarised() -> None:
    array = np.arange(100, dtype=np.float32).reshape(10, 10) / 10
    assert encode(array) == {
        "shape": [10, 10],
        "min": 0.0,
        "max": 9.9,
        "mean": 4.95,
        "first": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5],
    }


def test_shortest_float32_agrees_with_numpy() -> None:
    rng = np.random.default_rng(0)
    values = np.concatenate(
        [
            rng.standard_normal(20_000).astype(np.float32),
            (rng.standard_normal(2_000) * 1e-30).astype(np.float32),
            np.array([0.1, 1e22, 1e23, 16777217, 2**-149, 3.4028235e38, 0.0], np.float32),
        ]
    )
    expected = [float(str(v)) for v in values]
    assert shortest_float32(values).tolist() == expected


# ***** memory shared between tensors *****


def test_an_in_place_change_lists_the_tensors_sharing_the_memory() -> None:
    code = (
        "import torch\nx = torch.zeros(2, 2, requires_grad=True)\nd = x.detach()\n"
        "r = x.data\nv = d[0]\nc = d.clone()\nv.add_(1)\n"
    )
    trace = run(code)
    (change,) = of_kind(trace, "inplace")
    by_label = {label_of(trace, a["tensor"]): a for a in change["aliases"]}
    assert sorted(by_label) == ["d", "r", "x"]  # not the clone, not v itself
    assert by_label["x"]["value"] == [[1.0, 1.0], [0.0, 0.0]]
    # detach() and a view share x's version counter; .data has a counter of its own
    assert by_label["x"]["version"] == by_label["d"]["version"] == 1
    assert by_label["r"]["version"] == 0


def test_an_alias_that_was_collected_is_not_listed() -> None:
    code = "import torch\nx = torch.zeros(3)\nx.view(3, 1)\nx.add_(1)\n"
    trace = run(code)
    (change,) = of_kind(trace, "inplace")
    assert "aliases" not in change  # the view died with its statement


def test_an_in_place_change_without_aliases_has_no_alias_list() -> None:
    trace = run("import torch\nx = torch.zeros(3)\ny = x + 1\ny.add_(1)\n")
    (change,) = of_kind(trace, "inplace")
    assert "aliases" not in change


def test_the_alias_list_is_bounded() -> None:
    code = "import torch\nx = torch.zeros(40)\nvs = [x[i] for i in range(40)]\nx.add_(1)\n"
    (change,) = of_kind(run(code), "inplace")
    assert len(change["aliases"]) == 16


def test_assigning_data_is_recorded_without_a_version_bump() -> None:
    code = (
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "w.data = torch.tensor([5.0, 6.0])\nw.data -= 1\nprint(w._version)\n"
    )
    trace = run(code)
    (assigned,) = of_kind(trace, "data_set")
    assert assigned["tensor"] == "t1" and assigned["value"] == [5.0, 6.0]
    assert text_at(code, assigned["span"]).startswith("w.data")
    assert trace["tensors"][assigned["source"]]["value"] == [5.0, 6.0]
    # `w.data -= 1` stores the same memory back: an in-place change of the copy, seen on w
    (change,) = of_kind(trace, "inplace")
    assert change["aliases"] == [{"tensor": "t1", "value": [4.0, 5.0], "version": 0}]
    assert len(of_kind(trace, "data_set")) == 1 and trace["stdout"] == "0\n"


def test_a_write_through_numpy_is_an_event_at_the_next_engine_call() -> None:
    code = (
        "import torch\nx = torch.zeros(3)\ny = x.view(3, 1)\na = x.numpy()\na[0] = 7.0\n"
        "a[1] = 8.0\nprint(x)\n"
    )
    trace = run(code)
    kinds = [e["kind"] for e in trace["events"]]
    assert kinds == ["tensor", "op", "write", "print"]
    write = trace["events"][2]
    assert write["tensor"] == "t1" and write["value"] == [7.0, 8.0, 0.0]
    assert write["aliases"] == [{"tensor": "t2", "value": [[7.0], [8.0], [0.0]], "version": 0}]
    assert write["span"] == trace["events"][3]["span"]  # noticed at the print


def test_a_write_after_the_last_engine_call_is_noticed_at_the_end() -> None:
    trace = run("import torch\nx = torch.zeros(2)\na = x.numpy()\na[1] = 3.0\n")
    write = trace["events"][-1]
    assert write["kind"] == "write" and write["value"] == [0.0, 3.0] and write["span"] is None


def test_an_engine_change_of_exposed_memory_is_no_write() -> None:
    code = (
        "import torch\nx = torch.zeros(2)\na = x.numpy()\nx.add_(1)\n"
        "x.data = torch.ones(2)\nprint(a)\n"
    )
    trace = run(code)
    assert of_kind(trace, "write") == []


@pytest.mark.parametrize(
    "optimizer",
    [
        "torch.optim.SGD([w], lr=0.1)",
        "torch.optim.SGD([w], lr=0.1, momentum=0.9)",
        "torch.optim.Adam([w], lr=0.1)",
        "torch.optim.RMSprop([w], lr=0.1)",
        "torch.optim.Adagrad([w], lr=0.1)",
    ],
)
def test_an_optimizer_step_says_it_read_the_grad(optimizer: str) -> None:
    """optimizer.step() makes each parameter's new values from its .grad: the event names it,
    so the picture draws w.grad flowing into the step that uses it."""
    code = (
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        f"opt = {optimizer}\n(w * w).sum().backward()\nopt.step()\n"
    )
    trace = trace_snippet(code)
    (step,) = [e for e in trace["events"] if e.get("name") == "optimizer.step"]
    (grad,) = {e["grad_tensor"] for e in trace["events"] if e["kind"] == "accumulate"}
    assert step["inputs"] == [step["tensor"], grad]


def test_adamw_decay_alone_reads_no_grad() -> None:
    code = (
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "opt = torch.optim.AdamW([w], lr=0.1, weight_decay=0.5)\n"
        "(w * w).sum().backward()\nopt.step()\n"
    )
    decay, update = [e for e in trace_snippet(code)["events"] if e.get("name") == "optimizer.step"]
    assert decay["inputs"] == [decay["tensor"]]
    assert len(update["inputs"]) == 2
