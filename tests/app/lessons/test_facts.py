"""The facts a trace proves (app/lessons/facts.py), held to the trace's own events and to
arithmetic worked out by hand for each snippet."""

from __future__ import annotations

import math

import pytest

from app.lessons.facts import FactError, TraceFacts
from engine.tracer import trace_snippet
from tests.app.lessons.snippets import (
    RETAIN,
    SNIPPETS,
    TWO_STEPS,
)


@pytest.fixture(scope="module")
def traces():
    return {name: trace_snippet(code) for name, code in SNIPPETS.items()}


def facts_of(traces, name: str) -> TraceFacts:
    trace = traces[name]
    assert trace["outcome"]["status"] == "ok", trace["outcome"]
    return TraceFacts(trace)


# ***** reading the trace directly, to compare with *****


def leaf_ids(trace: dict, label: str) -> list[str]:
    return [
        tid
        for tid, record in trace["tensors"].items()
        if record["label"] == label and record["is_leaf"]
    ]


def accumulates(trace: dict, label: str) -> list[dict]:
    tids = set(leaf_ids(trace, label))
    return [e for e in trace["events"] if e["kind"] == "accumulate" and e["tensor"] in tids]


def first_backward(trace: dict) -> list[dict]:
    events = trace["events"]
    begin = next(i for i, e in enumerate(events) if e["kind"] == "backward_begin")
    end = next(i for i, e in enumerate(events) if i > begin and e["kind"] == "backward_end")
    return events[begin : end + 1]


def visits(trace: dict) -> list[dict]:
    return [e for e in first_backward(trace) if e["kind"] in ("node_backward", "accumulate")]


def step_holding(facts: TraceFacts, seq: int) -> int:
    return next(i + 1 for i, s in enumerate(facts.steps) if s["seq"][0] <= seq <= s["seq"][1])


def all_paths(trace: dict, leaf: str) -> list[list[str]]:
    """Every path from the first backward()'s roots to leaf's AccumulateGrad, enumerated one by
    one (no memo, no counting shortcut) over trace["nodes"]."""
    nodes = trace["nodes"]
    target = next(
        nid
        for nid, node in nodes.items()
        if node["name"] == "AccumulateGrad" and node.get("variable") == leaf
    )
    roots = first_backward(trace)[0]["roots"]
    found: list[list[str]] = []

    def walk(nid: str, path: list[str]) -> None:
        path = [*path, nid]
        if nid == target:
            found.append(path)
        for child, _ in nodes[nid]["next"]:
            if child is not None:
                walk(child, path)

    for root in roots:
        walk(trace["tensors"][root]["grad_fn"], [])
    return found


# ***** grad *****


def test_the_seeds_grads_are_its_accumulate_events_and_the_chain_rule(traces):
    facts = facts_of(traces, "seed")
    a, b = facts.read("grad a"), facts.read("grad b")
    # d = a*b + a: ∂d/∂a = b + 1 = 5, ∂d/∂b = a = 3
    assert (a.value, b.value) == (5.0, 3.0)
    assert a.value == accumulates(traces["seed"], "a")[-1]["grad"]
    assert b.value == accumulates(traces["seed"], "b")[-1]["grad"]
    assert a.subject == "a.grad"
    # the fact's step is the step that shows a's accumulate event
    assert a.step == step_holding(facts, accumulates(traces["seed"], "a")[-1]["seq"])


def test_grad_at_a_step_is_none_before_backward_fills_it(traces):
    facts = facts_of(traces, "seed")
    filled = facts.read("grad a").step
    with pytest.raises(FactError, match="None"):
        facts.read(f"grad a at {filled - 1}")
    for step in range(filled, len(facts.steps) + 1):
        assert facts.read(f"grad a at {step}").value == 5.0


def test_the_loops_grad_is_three_x_squared(traces):
    facts = facts_of(traces, "loop")
    # y = 1·x·x·x = x³, so ∂y/∂x = 3x² = 12 at x = 2
    assert facts.read("grad x").value == pytest.approx(3 * 2.0**2)
    assert facts.read("grad x").value == accumulates(traces["loop"], "x")[-1]["grad"]


def test_the_linear_layers_grads_are_the_mse_gradient(traces):
    trace = traces["linear"]
    facts = facts_of(traces, "linear")
    weight = trace["tensors"][leaf_ids(trace, "model.weight")[0]]["value"][0]
    bias = trace["tensors"][leaf_ids(trace, "model.bias")[0]]["value"][0]
    xs, ts = [[1.0, 2.0], [3.0, -1.0]], [1.0, 0.0]
    # loss = mean_i (w·x_i + b − t_i)²: ∂/∂w = (2/n) Σ r_i x_i, ∂/∂b = (2/n) Σ r_i
    residuals = [
        sum(w * v for w, v in zip(weight, x, strict=True)) + bias - t
        for x, t in zip(xs, ts, strict=True)
    ]
    want_w = [2 / 2 * sum(r * x[j] for r, x in zip(residuals, xs, strict=True)) for j in range(2)]
    want_b = 2 / 2 * sum(residuals)
    got_w = facts.read("grad model.weight").value
    got_b = facts.read("grad model.bias").value
    assert got_w[0] == pytest.approx(want_w, rel=1e-5)
    assert got_b == pytest.approx([want_b], rel=1e-5)
    assert got_w == accumulates(trace, "model.weight")[-1]["grad"]


def test_zero_grad_between_two_backward_calls(traces):
    facts = facts_of(traces, "two-steps")
    trace = traces["two-steps"]
    first, second = accumulates(trace, "w")
    # loss = (3w)², ∂loss/∂w = 18w: 36 at w = 2; then SGD makes w = 2 − 0.1·36 = −1.6, and
    # zero_grad() drops the 36, so the second backward leaves 18·(−1.6) = −28.8 alone
    assert first["grad"] == pytest.approx(36.0)
    assert facts.read("grad w").value == pytest.approx(18 * (2 - 0.1 * 36), rel=1e-6)
    assert facts.read("grad w").value == second["grad"]
    between = step_holding(facts, first["seq"])
    assert facts.read(f"grad w at {between}").value == pytest.approx(36.0)


def test_grad_after_zero_grad_sets_it_to_none_is_a_fact_error(traces):
    facts = facts_of(traces, "two-steps")
    trace = traces["two-steps"]
    reset = next(e for e in trace["events"] if e["kind"] == "grad_set" and e["grad"] is None)
    with pytest.raises(FactError, match="None"):
        facts.read(f"grad w at {step_holding(facts, reset['seq'])}")


def test_without_zero_grad_the_second_backward_adds_to_the_first():
    code = TWO_STEPS.replace("    opt.zero_grad()\n", "")
    facts = TraceFacts(trace_snippet(code))
    # 36 at w = 2, then w = −1.6 gives −28.8 more: the .grad holds their sum, 7.2
    assert facts.read("grad w").value == pytest.approx(36 + 18 * (2 - 0.1 * 36), rel=1e-5)


def test_retain_grad_fills_a_non_leafs_grad(traces):
    facts = facts_of(traces, "retained-non-leaf")
    # d = c·a with c = a·b: ∂d/∂c = a = 3, ∂d/∂a = c + a·b = 2ab = 24, ∂d/∂b = a² = 9
    assert facts.read("grad c").value == 3.0
    assert facts.read("grad a").value == 24.0
    assert facts.read("grad b").value == 9.0


# ***** leaves and gets-grad *****

EXPECTED_LEAVES = {
    "seed": {"a", "b"},
    "loop": {"x", "y₁"},  # y starts as a tensor no op made; its rebindings are products
    "linear": {"model.weight", "model.bias", "x", "t"},
    "retain": {"a"},
    "two-steps": {"w"},
    "no-grad": {"a", "b", "c"},  # c was made under no_grad: nothing recorded it
    "add-only": {"a", "b"},
    "retained-non-leaf": {"a", "b"},
}

EXPECTED_GETS_GRAD = {
    "seed": {"a", "b"},
    "loop": {"x"},
    "linear": {"model.weight", "model.bias"},
    "retain": {"a"},
    "two-steps": {"w"},
    "no-grad": {"a", "b"},
    "add-only": {"a", "b"},
    "retained-non-leaf": {"a", "b", "c"},
}


@pytest.mark.parametrize("name", SNIPPETS)
def test_leaves_are_the_named_tensors_no_recorded_op_made(traces, name):
    facts = facts_of(traces, name)
    leaves = facts.read("leaves").value
    assert leaves == EXPECTED_LEAVES[name]
    for tid, record in traces[name]["tensors"].items():
        if facts.labels[tid] in leaves:
            assert record["is_leaf"] and record["grad_fn"] is None


@pytest.mark.parametrize("name", SNIPPETS)
def test_gets_grad_is_what_the_first_backward_accumulates(traces, name):
    facts = facts_of(traces, name)
    fact = facts.read("gets-grad")
    assert fact.value == EXPECTED_GETS_GRAD[name]
    accumulated = [e for e in first_backward(traces[name]) if e["kind"] == "accumulate"]
    assert set(fact.elements["autograd"]) == {e["node"] for e in accumulated}
    for tid in fact.elements["tensors"]:
        assert traces[name]["tensors"][tid]["requires_grad"]


# ***** the order backward runs nodes in *****


@pytest.mark.parametrize("name", SNIPPETS)
def test_backward_order_is_the_first_backwards_visits(traces, name):
    trace = traces[name]
    facts = facts_of(traces, name)
    fact = facts.read("backward-order")
    assert fact.elements["autograd"] == tuple(e["node"] for e in visits(trace))
    order = fact.elements["autograd"]
    # first principles: it starts at the root's grad_fn, and no node runs before a node that
    # sends it a gradient (a topological order of the graph)
    root = first_backward(trace)[0]["roots"][0]
    assert order[0] == trace["tensors"][root]["grad_fn"]
    for position, nid in enumerate(order):
        for child, _ in trace["nodes"][nid]["next"]:
            if child is not None and child in order:
                assert order.index(child) > position, (nid, child)
    assert len(fact.value) == len(order)


def test_the_seeds_backward_order_names_its_nodes(traces):
    fact = facts_of(traces, "seed").read("backward-order")
    # d = (a*b) + a: Add first (d's grad_fn), Mul next; a's accumulator waits for both
    assert fact.value == ("AddBackward0", "MulBackward0", "AccumulateGrad(a)", "AccumulateGrad(b)")


def test_repeated_node_names_are_told_apart_by_what_they_made(traces):
    fact = facts_of(traces, "loop").read("backward-order")
    assert fact.value == (
        "MulBackward0(y₄)",
        "MulBackward0(y₃)",
        "MulBackward0(y₂)",
        "AccumulateGrad(x)",
    )


@pytest.mark.parametrize("name", SNIPPETS)
def test_next_backward_after_each_step_is_the_next_visit(traces, name):
    trace = traces[name]
    facts = facts_of(traces, name)
    for event in visits(trace):
        step = step_holding(facts, event["seq"])
        if step_holding(facts, event["seq"] - 1) != step:  # the step starts with this visit
            fact = facts.read(f"next-backward after {step - 1}")
            assert fact.elements == {"autograd": (event["node"],)}
            assert fact.value == facts.node_name(event["node"])
            assert fact.step == step


def test_next_backward_after_the_backward_call_is_the_roots_grad_fn(traces):
    facts = facts_of(traces, "seed")
    begin = first_backward(traces["seed"])[0]
    fact = facts.read(f"next-backward after {step_holding(facts, begin['seq'])}")
    assert fact.value == "AddBackward0"  # d's grad_fn: d = (a*b) + a


def test_next_backward_after_the_last_visit_is_a_fact_error(traces):
    facts = facts_of(traces, "seed")
    last = visits(traces["seed"])[-1]
    with pytest.raises(FactError, match="no node"):
        facts.read(f"next-backward after {step_holding(facts, last['seq'])}")
    # from the forward pass on, the next node to run backward is the root's grad_fn
    assert facts.read("next-backward after 1").value == "AddBackward0"


# ***** paths *****


@pytest.mark.parametrize("name", SNIPPETS)
def test_paths_counts_every_path_to_the_leaf(traces, name):
    trace = traces[name]
    facts = facts_of(traces, name)
    for tid in facts.read("gets-grad").elements["tensors"]:
        record = trace["tensors"][tid]
        if not record["is_leaf"]:
            continue
        label = facts.labels[tid]
        want = len(all_paths(trace, tid))
        assert facts.read(f"paths {label}").value == want, label


def test_path_counts_worked_out_by_hand(traces):
    assert facts_of(traces, "seed").read("paths a").value == 2  # via Add, and via Add → Mul
    assert facts_of(traces, "seed").read("paths b").value == 1
    assert facts_of(traces, "loop").read("paths x").value == 3  # one per multiplication
    assert facts_of(traces, "retain").read("paths a").value == 2  # a * a: both inputs
    # d = c·a, c = a·b: d → a directly, and d → c → a
    assert facts_of(traces, "retained-non-leaf").read("paths a").value == 2


def test_paths_to_a_tensor_off_the_graph_is_a_fact_error(traces):
    facts = facts_of(traces, "no-grad")
    with pytest.raises(FactError):
        facts.read("paths c")  # made under no_grad: no AccumulateGrad, no path


# ***** a second backward() *****

# each snippet with the root it calls backward() on, to call it again
SECOND_BACKWARD = {
    "seed": "d",
    "loop": "y",
    "linear": "loss",
    "retain": "d",
    "no-grad": "d",
    "add-only": "d",
    "retained-non-leaf": "d",
}

EXPECTED_FAILS = {
    "seed": True,  # MulBackward0 saved a and b
    "loop": True,
    "linear": True,
    "retain": False,  # retain_graph=True keeps the saved tensors
    "no-grad": True,
    "add-only": False,  # AddBackward0 saves nothing: nothing was freed
    "retained-non-leaf": True,
}


@pytest.mark.parametrize("name", SECOND_BACKWARD)
def test_second_backward_fails_iff_calling_it_again_raises(traces, name):
    fact = facts_of(traces, name).read("second-backward-fails")
    assert fact.value is EXPECTED_FAILS[name]
    again = trace_snippet(SNIPPETS[name] + f"{SECOND_BACKWARD[name]}.backward()\n")
    outcome = again["outcome"]
    raised = outcome["status"] == "error"
    assert raised is fact.value, outcome
    if raised:
        assert outcome["type"] == "RuntimeError"
        assert "backward through the graph a second time" in outcome["message"]


def test_second_backward_fails_reads_the_last_backward_call():
    code = RETAIN + "e = a * a\ne.backward()\n"
    fact = TraceFacts(trace_snippet(code)).read("second-backward-fails")
    assert fact.value is True  # the second graph was not retained


# ***** what is not a fact *****


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("grad z", "no tensor is named 'z'"),
        ("paths z", "no tensor is named 'z'"),
        ("grad a at 999", "there is no step 999"),
        ("next-backward after 999", "there is no step 999"),
        ("velocity a", "not a fact"),
        ("grad", "not a fact"),
        ("grad a at two", "not a fact"),
        ("next-backward", "not a fact"),
        ("grads a", "not a fact"),
    ],
)
def test_unknown_names_steps_and_facts_are_fact_errors(traces, text, says):
    facts = facts_of(traces, "seed")
    with pytest.raises(FactError) as raised:
        facts.read(text)
    assert says in str(raised.value)


def test_an_unknown_name_lists_the_names_the_run_has(traces):
    with pytest.raises(FactError) as raised:
        facts_of(traces, "seed").read("grad z")
    assert str(raised.value).endswith("the run names a, a.grad, b, b.grad, d")


def test_a_run_without_backward_answers_no_backward_facts():
    facts = TraceFacts(
        trace_snippet("import torch\na = torch.tensor(1.0, requires_grad=True)\nb = a * 2\n")
    )
    assert facts.read("leaves").value == {"a"}
    for text in ("backward-order", "gets-grad", "paths a", "second-backward-fails", "grad a"):
        with pytest.raises(FactError):
            facts.read(text)


def test_grad_values_are_finite_numbers(traces):
    for name in ("seed", "loop", "retain", "two-steps", "no-grad", "add-only"):
        facts = facts_of(traces, name)
        for label in facts.read("gets-grad").value:
            value = facts.read(f"grad {label}").value
            assert isinstance(value, float) and math.isfinite(value), (name, label)


# ***** versions, the failing node, and one entry of a .grad *****

IN_PLACE = """\
import torch
a = torch.tensor(2.0, requires_grad=True)
b = a * 3
c = b * b
b.add_(1)
b.mul_(2)
c.backward()
"""


def test_version_counts_the_in_place_changes_up_to_a_step():
    trace = trace_snippet(IN_PLACE)
    facts = TraceFacts(trace)
    changes = [e for e in trace["events"] if e["kind"] == "inplace"]
    assert [e["version"] for e in changes] == [1, 2]  # add_, then mul_
    before = facts.step_of(changes[0]["seq"]) - 1
    assert facts.read(f"version b at {before}").value == 0
    for change in changes:
        step = facts.step_of(change["seq"])
        fact = facts.read(f"version b at {step}")
        assert (fact.value, fact.step) == (change["version"], step)
    assert facts.read(f"version b at {len(facts.steps)}").subject == "b._version"


def test_version_follows_a_view_that_shares_the_counter():
    facts = TraceFacts(trace_snippet("import torch\nx = torch.zeros(2)\nv = x[0:1]\nv.add_(1)\n"))
    assert facts.read(f"version x at {len(facts.steps)}").value == 1  # x[0:1] shares x's


def test_the_failing_node_is_the_one_that_saved_the_changed_tensor():
    trace = trace_snippet(IN_PLACE)
    assert trace["outcome"]["status"] == "error"
    facts = TraceFacts(trace)
    fact = facts.read("failing-node")
    (node,) = fact.elements["autograd"]
    # c = b * b saved b, and b changed after it was recorded
    assert trace["nodes"][node]["name"] == "MulBackward0"
    assert trace["tensors"][trace["nodes"][node]["outputs"][0]]["label"] == "c"
    assert fact.value == "MulBackward0(c)" and fact.step == len(facts.steps)


def test_a_run_whose_backward_succeeds_has_no_failing_node(traces):
    with pytest.raises(FactError, match="no backward"):
        facts_of(traces, "seed").read("failing-node")


def test_one_entry_of_a_vector_grad():
    code = "import torch\nw = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
    facts = TraceFacts(trace_snippet(code + "(w * w).sum().backward()\n"))
    whole = facts.read("grad w").value
    assert whole == [2.0, 4.0, 6.0]  # d/dw Σ w² = 2w
    for i, expected in enumerate(whole):
        fact = facts.read(f"grad w[{i}]")
        assert fact.value == expected and fact.subject == f"w.grad[{i}]"
    with pytest.raises(FactError, match="not an entry"):
        facts.read("grad w[3]")


def test_a_tensor_named_like_an_entry_is_read_whole():
    code = "import torch\nxs = [torch.tensor(2.0, requires_grad=True)]\n(xs[0] * 3).backward()\n"
    facts = TraceFacts(trace_snippet(code))
    assert facts.read("grad xs[0]").value == 3.0  # the tensor labelled xs[0], not an entry
