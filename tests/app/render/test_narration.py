"""Narration: golden text for representative snippets, and a sentence for every event kind and
every operation the engine has."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.examples import BY_SLUG
from app.lessons.facts import TraceFacts, is_name
from app.render import narrate, ops, render, values
from app.render.explain import STATUSES, explain_error, explain_status
from app.render.narration import article
from engine.tracer import trace_snippet
from tests import corpus
from tests.trace_schema import SCHEMA

HERE = Path(__file__).parent
GOLDEN = json.loads((HERE / "golden" / "narration.json").read_text())["snippets"]
EVENT_KINDS = {
    SCHEMA["$defs"][ref["$ref"].split("/")[-1]]["properties"]["kind"]["const"]
    for ref in SCHEMA["$defs"]["event"]["oneOf"]
}


@pytest.mark.parametrize("snippet", GOLDEN, ids=[s["slug"] for s in GOLDEN])
def test_narration_matches_the_golden_text(snippet):
    kwargs = {} if snippet["max_events"] is None else {"max_events": snippet["max_events"]}
    got = narrate(trace_snippet(snippet["source"], **kwargs))
    assert got == snippet["steps"], "re-record with tools/record_narration.py and review the diff"


def test_render_and_narrate_agree():
    trace = trace_snippet(GOLDEN[0]["source"])
    assert [s["text"] for s in render(trace)["steps"]] == narrate(trace)


def test_the_seed_walkthrough_is_told_with_its_numbers():
    text = "\n".join(GOLDEN[0]["steps"])
    assert "MulBackward0 receives ∂d/∂(a*b) = 1 and sends 1·b = 4 to a and 1·a = 3 to b." in text
    assert "a.grad = 1 (through AddBackward0) + 4 (through MulBackward0) = 5." in text
    assert (
        "backward() is done: the graph's saved tensors are freed (MulBackward0's a and b). "
        "Calling backward() through it again raises an error unless retain_graph=True."
    ) in text
    assert "Note that a now reaches the graph along two paths" in text


def test_a_new_accumulate_grad_for_a_leaf_is_told_as_new_not_first():
    code = (
        "import torch\n"
        "a = torch.tensor(2.0, requires_grad=True)\n"
        "b = torch.tensor(3.0, requires_grad=True)\n"
        "(a * b).backward()\n"
        "z = torch.zeros(1)\n"  # (the tracer holds the running call's frame until its next event)
        "(a * b).backward()\n"
    )
    first, *_, second = [s for s in narrate(trace_snippet(code)) if "`a * b` multiplies" in s]
    assert "Using a and b for the first time also creates their AccumulateGrad nodes" in first
    assert "for the first time" not in second
    assert "The AccumulateGrad nodes of a and b went away with the graph that held them" in second


# ***** every operation *****


def synthetic(name: str, inplace: bool = False) -> dict:
    """A small, valid trace in which op `name` runs on two leaves and is backpropagated."""
    entry = ops.OPS[name]
    slots = 1 if entry.number or len(entry.sends) == 1 else max(len(entry.sends), 2)
    leaves = [f"t{i}" for i in range(1, slots + 1)]
    out = leaves[0] if inplace else f"t{slots + 1}"
    accs = [f"n{i}" for i in range(2, slots + 2)]
    tensors = {
        tid: {
            "label": f"x{i}",
            "shape": [2],
            "dtype": "float32",
            "requires_grad": True,
            "is_leaf": True,
            "grad_fn": None,
            "value": [1.0, 2.0],
            "created": i,
        }
        for i, tid in enumerate(leaves)
    }
    op_seq = slots
    if not inplace:
        tensors[out] = {
            "label": "y",
            "shape": [2],
            "dtype": "float32",
            "requires_grad": True,
            "is_leaf": False,
            "grad_fn": "n1",
            "value": [3.0, 4.0],
            "created": op_seq,
        }
    nodes = {
        "n1": {
            "name": name,
            "inputs": leaves,
            "outputs": [out],
            "next": [[a, 0] for a in accs],
            "saved": [leaves[0], "result"],
            "formula": "grad_self = grad",
            "created": op_seq,
        },
    }
    for tid, acc in zip(leaves, accs, strict=True):
        nodes[acc] = {
            "name": "AccumulateGrad",
            "inputs": [],
            "outputs": [],
            "next": [],
            "saved": [],
            "formula": "leaf.grad += grad",
            "created": op_seq,
            "variable": tid,
        }
    span = [2, 0, 2, 9]
    events = [
        {"seq": i, "kind": "tensor", "tensor": tid, "op": "tensor", "inputs": [], "span": span}
        for i, tid in enumerate(leaves)
    ]
    if inplace:
        events.append(
            {
                "seq": op_seq,
                "kind": "inplace",
                "tensor": out,
                "name": name,
                "node": "n1",
                "inputs": leaves,
                "version": 1,
                "value": [3.0, 4.0],
                "span": span,
            }
        )
    else:
        events.append(
            {
                "seq": op_seq,
                "kind": "op",
                "name": name,
                "node": "n1",
                "inputs": leaves,
                "outputs": [out],
                "span": span,
            }
        )
    grads = [[1.0, 1.0] for _ in leaves]
    tail = [
        {"kind": "backward_begin", "roots": [out], "grads": [[1.0, 1.0]], "retain_graph": False},
        {
            "kind": "node_backward",
            "node": "n1",
            "grad_outputs": [[1.0, 1.0]],
            "grad_inputs": grads,
            "sources": [{"from": None, "grad": [1.0, 1.0]}],
        },
    ]
    for i, (tid, acc) in enumerate(zip(leaves, accs, strict=True)):
        grad_id = f"t{slots + 2 + i}"
        tensors[grad_id] = {
            "label": f"x{i}.grad",
            "shape": [2],
            "dtype": "float32",
            "requires_grad": False,
            "is_leaf": True,
            "grad_fn": None,
            "value": [1.0, 1.0],
            "created": op_seq + 3 + i,
        }
        tail.append(
            {
                "kind": "accumulate",
                "tensor": tid,
                "node": acc,
                "contribution": [1.0, 1.0],
                "grad": [1.0, 1.0],
                "grad_tensor": grad_id,
                "sources": [{"from": "n1", "grad": [1.0, 1.0]}],
            }
        )
    tail += [{"kind": "free", "nodes": ["n1"]}, {"kind": "backward_end", "retain_graph": False}]
    for n, event in enumerate(tail, start=op_seq + 1):
        events.append({"seq": n, **event, "span": [3, 0, 3, 12]})
    return {
        "version": 1,
        "code": "import torch\ny = op(x0, x1)\ny.backward()\n",
        "tensors": tensors,
        "nodes": nodes,
        "events": events,
        "stdout": "",
        "stderr": "",
        "outcome": {"status": "ok"},
        "limits": {"truncated": False, "max_events": 20000, "stopped_line": None},
    }


@pytest.mark.parametrize("name", sorted(set(ops.OPS) - {"AccumulateGrad"}))
def test_every_op_is_narrated_forwards_and_backwards(name):
    view = render(synthetic(name))
    by_kind = {s["kind"]: s["text"] for s in view["steps"]}
    assert ops.fill(ops.OPS[name].does, ["x0", "x1", "x2"]).split(" ")[0] in by_kind["op"]
    assert f"records {article(name)} node" in by_kind["op"]
    assert by_kind["node_backward"].startswith(f"{name} receives")
    assert " sends " in by_kind["node_backward"]
    for text in by_kind.values():
        assert text and "{" not in text and "}" not in text and "  " not in text


@pytest.mark.parametrize("name", sorted(n for n, op in ops.OPS.items() if op.inplace))
def test_in_place_ops_are_narrated(name):
    view = render(synthetic(name, inplace=True))
    text = next(s["text"] for s in view["steps"] if s["kind"] == "inplace")
    assert "in place" in text and f"records {name}" in text and "{" not in text


def test_unrecorded_in_place_changes_are_narrated():
    for name in ops.UNRECORDED_INPLACE:
        assert ops.symbol(name)


# ***** every event kind *****

KINDS = """\
import torch
a = torch.tensor(2.0, requires_grad=True)
b = a * 3
b.retain_grad()
with torch.no_grad():
    c = a * 2
b += 1
b.backward()
print(a.grad, b.grad)
e = torch.zeros(2)
e.data = torch.ones(2)
e.numpy()[0] = 5.0
print(e)
a.grad = None
b.backward()
"""


def test_every_event_kind_is_narrated():
    trace = trace_snippet(KINDS)
    kinds = {e["kind"] for e in trace["events"]}
    assert kinds == EVENT_KINDS, f"make KINDS cover {EVENT_KINDS - kinds}"
    steps = render(trace)["steps"]
    covered = set()
    for step in steps:
        assert step["text"].strip()
        first, last = step["seq"]
        covered.update(range(first, last + 1))
    assert covered == set(range(len(trace["events"])))


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("x = torch.ones(3, requires_grad=True)\n(x * 2).backward()\n", "(y.sum().backward())"),
        ("x = torch.ones(3)\n(x * 2).sum().backward()\n", "requires_grad=True"),
        ("x = torch.ones(3)\nprint(x.item())\n", ".item() turns a one-element tensor"),
        ("x = torch.ones(3)\ny = x + torch.ones(4)\n", "cannot be broadcast together"),
        ("x = torch.ones(3, 2)\ny = x @ x\n", "(2 ≠ 3 here)"),
        ("x = torch.ones(2, requires_grad=True)\nx += 1\n", "inside torch.no_grad()"),
        ("x = torch.fft.fft(torch.ones(3))\n", "The same code runs in real PyTorch."),
        ("x = (1,\n", "Python could not read the snippet"),
    ],
)
def test_common_errors_are_explained(code, says):
    view = render(trace_snippet("import torch\n" + code))
    error = view["steps"][-1]
    assert error["phase"] == "error" and error["span"] is not None
    assert error["error"]["message"] and says in error["error"]["explanation"]
    assert error["text"].startswith(f"Line {error['span'][0]}: The snippet stops with ")
    assert error["error"]["explanation"] in error["text"]


def test_backward_twice_is_explained_at_the_node_that_fails():
    view = render(trace_snippet(GOLDEN_BY_SLUG["backward-twice"]["source"]))
    error = view["steps"][-1]
    assert "retain_graph=True" in error["error"]["explanation"]
    assert "It happened at MulBackward0, whose saved tensors" in error["text"]
    assert error["autograd"]["focus"][0] == "n1"


GOLDEN_BY_SLUG = {s["slug"]: s for s in GOLDEN}


def test_a_truncated_trace_says_where_and_why_it_stopped():
    steps = render(trace_snippet(GOLDEN_BY_SLUG["truncated"]["source"], max_events=8))["steps"]
    last = steps[-1]
    assert last["kind"] == "limit" and last["error"]["type"] == "recording_stopped"
    assert last["span"] == [5, 0, 5, len("    y = y * 1.01")]
    assert last["text"].startswith("Line 5: Recording stops here, after 8 events")
    assert "after 8 events" in last["text"] and "ran on to its end" in last["text"]
    assert last["phase"] == "forward"  # not an error: the snippet finished


def test_an_error_after_recording_stopped_comes_after_the_stop():
    source = GOLDEN_BY_SLUG["truncated"]["source"] + "1 / 0\n"
    steps = render(trace_snippet(source, max_events=8))["steps"]
    assert [step["kind"] for step in steps[-2:]] == ["limit", "error"]
    assert "as the next step says" in steps[-2]["text"]
    assert steps[-1]["error"]["type"] == "ZeroDivisionError" and steps[-1]["span"][0] == 7


def test_a_trace_stored_before_recording_could_stop_still_says_where_it_stopped():
    trace = trace_snippet(GOLDEN_BY_SLUG["truncated"]["source"], max_events=8)
    del trace["limits"]["stopped_line"]
    last = render(trace)["steps"][-1]
    assert last["kind"] == "limit" and last["error"]["type"] == "truncated"
    assert last["span"][0] == 5 and "after 8 events" in last["text"]


@pytest.mark.parametrize("status", sorted(STATUSES))
def test_every_sandbox_limit_is_explained(status):
    trace = trace_snippet("import torch\nx = torch.ones(2)\n")
    trace["outcome"] = {"status": status, "message": "Stopped after 5 s of CPU time."}
    last = render(trace)["steps"][-1]
    assert last["kind"] == "limit" and last["phase"] == "error"
    assert explain_status(status) in last["text"] and "Stopped after 5 s" in last["text"]


def test_unknown_errors_still_get_a_line():
    assert explain_error("KeyError", "'x'").startswith("The snippet raised KeyError")


# ***** numbers as text *****


def test_values_read_well():
    assert values.say(4.0) == "4"
    assert values.say(0.29342890) == "0.2934"
    assert values.say(-0.0) == "0"
    assert values.say("nan") == "nan"
    assert values.say(True) == "True"
    assert values.say([[1.0, 2.0], [3.0, 4.0]]) == "[[1, 2], [3, 4]]"
    summary = {"shape": [32, 64], "min": -1, "max": 1, "mean": 0, "first": [0.1]}
    assert values.say(summary) == "a 32×64 tensor"
    assert values.say([0.0] * 10) == "a tensor of 10 values"
    assert values.box([0.0] * 10) == "10 values"
    assert values.box(summary) == "32×64"


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (
            "x = torch.zeros(2)\nd = x.detach()\nd.zero_()\nd.add_(2)\n",
            "And x, which shares its memory, now holds [2, 2] (also at version 2",
        ),
        (
            "w = torch.ones(2, requires_grad=True)\nw.data.mul_(3)\n",
            "And w, which shares its memory, now holds [3, 3] (its version counter is its own",
        ),
        ("w = torch.ones(2)\nw.data = torch.zeros(2)\n", "w now holds [0, 0]. Assigning .data"),
        ("x = torch.ones(2)\na = x.numpy()\na[1] = 4\nprint(x)\n", "x now holds [1, 4], though"),
    ],
)
def test_changes_through_shared_memory_are_told(code, says):
    steps = render(trace_snippet("import torch\n" + code))["steps"]
    assert any(says in step["text"] for step in steps)


CUSTOM_SQUARE = """\
import torch

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return 2 * x * grad_out

x = torch.tensor(3.0, requires_grad=True)
y = Square.apply(x)
y.backward()
"""


def test_ops_autograd_runs_with_grad_mode_off_are_not_said_to_lack_inputs_that_need_grad():
    # x requires grad, so "none of its inputs requires grad" would be false: autograd itself
    # turned grad mode off inside forward and backward (neither is an event of the trace)
    steps = narrate(trace_snippet(CUSTOM_SQUARE))
    inside = [text for text in steps if "Nothing is recorded" in text]
    assert len(inside) == 3, inside  # x * x in forward; 2 * x and 2 * x * grad_out in backward
    assert not any("none of its inputs requires grad" in text for text in inside)
    assert "x requires grad, but grad mode is off here" in inside[0]
    assert all("backward() runs this code with grad mode off" in text for text in inside[1:])


def test_a_gradient_handed_to_a_custom_backward_is_named_as_the_code_names_it():
    trace = trace_snippet(CUSTOM_SQUARE)
    handed = [e["tensor"] for e in trace["events"] if e["kind"] == "tensor" and e["op"] is None]
    assert [trace["tensors"][t]["label"] for t in handed] == ["grad_out"]
    steps = narrate(trace)
    assert (
        "Line 12: Autograd made grad_out = 1 while running backward() and handed it to this code."
        in steps
    )
    assert any("multiplies 2 * x and grad_out" in text for text in steps)


# ***** the counts the narration claims are the run's *****

_COUNTED = {  # what an accumulate step's words count, and what of its event that must equal
    re.compile(r"the sum of (\d+) gradients"): lambda gradients, nodes: gradients,
    re.compile(r"one through each of the (\d+) \S+ nodes"): lambda gradients, nodes: nodes,
    re.compile(r"\bthrough (\d+) \S+ nodes"): lambda gradients, nodes: nodes,
    re.compile(r"\ball (\d+) through"): lambda gradients, nodes: gradients,
}


def _said(pattern: str, text: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(pattern, text)]


def _other_counts(step: dict, events: list[dict], trace: dict) -> list[str]:
    """The counts any other step states, each against what its own events hold:
    - a node's backward: "the sum of N gradients" arriving (its event's sources);
    - an op: "giving N tensors" (its outputs);
    - a .grad change: ".grad of N parameters" (the tensors its events set or zero);
    - the end of a backward: "those of N nodes" freed (the nodes that had saved a tensor);
    - a condensed pass: "a fresh graph of N nodes" (the grad_fn nodes made in that pass)."""
    text, wrong = step["text"], []

    def check(pattern: str, truths: set[int]) -> None:
        wrong.extend(f"{n} in {text!r}, the run's {sorted(truths)}" for n in _said(pattern, text)
                     if n not in truths)  # fmt: skip

    nodes = trace["nodes"]
    if step["kind"] == "node_backward":
        check(r"the sum of (\d+) gradients", {len(e["sources"]) for e in events})
    check(r"giving ([\d,]+) tensors", {len(e["outputs"]) for e in events if e["kind"] == "op"})
    if step["kind"] == "grad_set":
        to_none = sum(e["kind"] == "grad_set" and not e["grad_tensor"] for e in events)
        zeroed = sum(e["kind"] == "inplace" for e in events)
        check(r"\.grad of ([\d,]+) (?:parameters|tensors)", {to_none, zeroed})
    for free in (e for e in events if e["kind"] == "free"):
        kept = sum(any(s is not None for s in nodes[n]["saved"]) for n in free["nodes"])
        check(r"those of ([\d,]+) nodes", {kept})
    if step["kind"] == "pass":
        first, last = step["seq"]
        made = sum(
            first <= node["created"] <= last and node["name"] != "AccumulateGrad"
            for node in nodes.values()
        )
        check(r"a fresh graph of ([\d,]+) node", {made})
    return wrong


def _count_claims(source: str) -> list[str]:
    """Each claim a step of `source` makes that the run does not bear out: the counts it
    states (against its events), and the .grad an accumulate or a condensed pass ends with
    (against the lessons' own fact, `grad NAME at STEP`)."""
    trace = corpus.traced(source)
    events = trace["events"]
    facts = TraceFacts(trace)
    wrong = []
    for number, step in enumerate(corpus.rendered(source)["steps"], 1):
        if not step["seq"]:
            continue
        first, last = step["seq"]
        own = events[first : last + 1]
        wrong += [f"step {number}: {claim}" for claim in _other_counts(step, own, trace)]
        if step["kind"] == "pass":
            for leaf in dict.fromkeys(e["tensor"] for e in own if e["kind"] == "accumulate"):
                name = facts.labels[leaf]
                if is_name(name):
                    said = f"{name}.grad = {values.say(facts.grad(name, at=number).value)}"
                    if said not in step["text"]:
                        wrong.append(f"step {number}: {step['text']!r} (the fact: {said})")
        if step["kind"] != "accumulate":
            continue
        ends = re.search(r"(\S+)\.grad = (?:[^=]*turn into )?([^=]+)\.$", step["text"])
        if ends and is_name(ends[1]) and ends[1] in facts.labels.values():
            fact = facts.grad(ends[1], at=number)
            said = re.sub(r" \(through [^)]*\)$", "", ends[2])  # one gradient, and its node
            if said != values.say(fact.value):
                wrong.append(f"step {number}: {step['text']!r} (the fact: {fact.value})")
        (event,) = [e for e in own if e["kind"] == "accumulate"]
        gradients = len(event["sources"])
        nodes = len({s["from"] for s in event["sources"]})
        for pattern, truth in _COUNTED.items():
            for said in pattern.findall(step["text"]):
                if int(said) != truth(gradients, nodes):
                    wrong.append(
                        f"step {number}: {step['text']!r} ({gradients} gradients, {nodes} nodes)"
                    )
        if "both through" in step["text"] and (gradients, nodes) != (2, 1):
            wrong.append(f"step {number}: {step['text']!r}")
    return wrong


@pytest.mark.parametrize("slug", corpus.spread(sorted(corpus.STEPWISE_SOURCES)))
def test_every_count_and_grad_a_step_states_is_the_runs(slug):
    """On every golden snippet and example, each count a step states (gradients, nodes,
    tensors, parameters) is its events', and the .grad an accumulate step or a condensed pass
    ends with is the lessons' fact."""
    assert _count_claims(corpus.STEPWISE_SOURCES[slug]) == []


# each sentence that states a count, made by a snippet of its own
COUNTING = {
    "the sum of 6 gradients": (
        "import torch\nx = torch.tensor(2.0, requires_grad=True)\n"
        "y = x * 1\nz = y + y + y + y + y + y\nz.backward()\n"
    ),
    "giving 3 tensors": (
        "import torch\nx = torch.ones(6, requires_grad=True)\n"
        "a, b, c = x.split(2)\n(a.sum() + b.sum() + c.sum()).backward()\n"
    ),
    ".grad of 5 parameters": (
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 1, bias=False))\n"
        "model(torch.ones(1, 2)).sum().backward()\nmodel.zero_grad()\n"
    ),
    "those of 5 nodes": (
        "import torch\nx = torch.tensor(2.0, requires_grad=True)\n"
        "y = x * x * x * x * x * x\ny.backward()\n"
    ),
    "a fresh graph of 2 nodes": (
        "import torch\nw = torch.tensor(1.0, requires_grad=True)\nfor i in range(700):\n"
        "    (w * 2 + 1).backward()\n"
    ),
}


@pytest.mark.parametrize("said", COUNTING)
def test_each_counting_sentence_is_checked_against_its_run(said):
    """The claims check above is not vacuous: every kind of count it reads is said by some run,
    passes there, and would be caught if it were one more."""
    source = COUNTING[said]
    steps = corpus.rendered(source)["steps"]
    assert any(said in step["text"] for step in steps), said
    assert _count_claims(source) == []
    trace = corpus.traced(source)
    n = int(re.search(r"\d+", said)[0])
    (step,) = [step for step in steps if said in step["text"]][:1]
    first, last = step["seq"]
    lie = {**step, "text": step["text"].replace(said, said.replace(str(n), str(n + 1)))}
    assert _other_counts(lie, trace["events"][first : last + 1], trace)


def test_a_node_that_sends_two_gradients_is_counted_once():
    # the variable loop's x.grad once said "6 gradients, one through each of the 6
    # MulBackward0 nodes": the first, x * x, sends two
    loop = corpus.rendered(BY_SLUG["variable-loop"].code)["steps"]
    (grad,) = [step["text"] for step in loop if step["kind"] == "accumulate"]
    assert "the sum of 6 gradients" in grad and "through 5 MulBackward0 nodes" in grad


@pytest.mark.parametrize(
    ("a", "b", "fix"),
    [
        ((2, 3), (4, 5), "No transpose makes these fit"),  # ".T is the usual fix" was wrong here
        ((2, 3), (2, 3), "A @ B.T"),
        ((3, 2), (3, 4), "A.T @ B"),
    ],
)
def test_a_shape_mismatch_hint_says_a_transpose_only_where_one_fits(a, b, fix):
    code = f"import torch\nA = torch.ones{a}\nB = torch.ones{b}\nC = A @ B\n"
    outcome = trace_snippet(code)["outcome"]
    hint = explain_error(outcome["type"], outcome["message"])
    assert fix in hint and f"({a[1]} ≠ {b[0]} here)" in hint


def test_error_hints_fit_the_snippet_and_add_to_the_message():
    inplace = trace_snippet(
        "import torch\na = torch.tensor(2.0, requires_grad=True)\nb = a * 3\nc = b * b\n"
        "b.add_(1)\nc.backward()\n"
    )["outcome"]
    assert "y.add(1) for y.add_(1)" in explain_error(inplace["type"], inplace["message"])
    twice = trace_snippet(
        "import torch\na = torch.tensor(2.0, requires_grad=True)\nb = a * a\nb.backward()\n"
        "b.backward()\n"
    )
    (said,) = [step["text"] for step in render(twice)["steps"] if step["kind"] == "error"]
    assert said.count("freed") == 1, said  # the step says which node's tensors were freed, once
