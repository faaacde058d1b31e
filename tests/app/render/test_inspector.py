"""The inspector's facts (contract C1), as PyTorch prints them; checked against the goldens
recorded with real PyTorch where they print the same thing."""

from __future__ import annotations

import ast
import re

import pytest

from app.examples import BY_SLUG, EXAMPLES
from app.render import graph, steps
from app.render.inspector import facts
from engine.tracer import trace_snippet
from tests.engine.goldens import BY_SLUG as GOLDENS


def inspected(code: str) -> tuple[dict, dict, list[dict]]:
    trace = trace_snippet(code)
    scene = graph.build(trace)
    final = steps.finish(steps.build(scene), {})
    ids = [*scene.tensors.elements, *scene.autograd.elements]
    return trace, facts(trace, ids, final), final


def row(rows: list, term: str):
    (detail,) = [d for t, d in rows if t == term]
    return detail


def at_end(detail):
    return detail if isinstance(detail, str) else detail[-1][1]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.slug)
def test_every_tensor_node_saved_box_and_op_has_facts_in_the_c1_shape(example):
    trace = trace_snippet(example.code)
    scene = graph.build(trace)
    final = steps.finish(steps.build(scene), {})
    ids = [*scene.tensors.elements, *scene.autograd.elements]
    out = facts(trace, ids, final)
    for element in ids:
        if re.match(r"^(t\d+(-v\d+|-root)?|n\d+(-s\d+)?|o\d+)$", element):
            assert out.get(element), f"{element} has no facts"
    for rows in out.values():
        for term, detail in rows:
            assert isinstance(term, str)
            if isinstance(detail, list):  # time-varying: [step, text] from step 0, sorted
                assert detail[0][0] == 0
                assert [s for s, _ in detail] == sorted({s for s, _ in detail})
                assert all(0 <= s < len(final) and isinstance(t, str) for s, t in detail)
            else:
                assert isinstance(detail, str)


def test_grad_rows_follow_the_run_as_print_shows_them():
    trace, out, final = inspected(BY_SLUG["retain-grad"].code)
    captured = next(
        i for i, s in enumerate(final) if s["kind"] == "retain_grad" and s["phase"] == "backward"
    )
    assert row(out["t3"], ".grad") == [[0, "None"], [captured, "tensor(1.)"]]  # c
    assert row(out["t4"], ".grad") == "None"  # d: print(d.grad) → None
    assert at_end(row(out["t1"], ".grad")) == "tensor(5.)"  # a
    assert trace["stdout"].splitlines() == ["tensor(5.) tensor(3.)", "tensor(1.)", "None"]
    assert row(out["t3"], "grad_fn") == "<MulBackward0 object at 0x…>"
    assert row(out["t3"], "is_leaf") == "False" and row(out["t1"], "grad_fn") == "None"
    assert row(out["t1"], "value") == "tensor(3., requires_grad=True)"


def test_a_node_shows_next_functions_and_saved_tensors_as_pytorch_names_them():
    _, out, final = inspected(BY_SLUG["retain-grad"].code)
    mul = out["n1"]  # c = a * b
    assert row(mul, "next_functions") == (
        "((<AccumulateGrad object at 0x…>, 0), (<AccumulateGrad object at 0x…>, 0))"
    )
    freed = next(i for i, s in enumerate(final) if s["kind"] == "free")
    assert row(mul, "saved tensors") == [
        [0, "_saved_self = a; _saved_other = b"],
        [freed, "freed by backward() (was _saved_self = a; _saved_other = b)"],
    ]
    assert row(out["n1-s1"], "as") == "grad_fn._saved_self"  # saved[1] is a
    assert at_end(row(out["n1-s1"], "state")) == "freed by backward()"
    assert row(out["o2"], "records") == "<MulBackward0 object at 0x…>"
    assert row(out["o2"], "operation") == "×: multiplies a and b"


def _printed_pairs(line: str) -> list[tuple[str | None, int]]:
    return [(None if n is None else n.split("::")[-1], i) for n, i in ast.literal_eval(line)]


def test_next_functions_match_real_pytorch():
    golden = GOLDENS["next-functions"]  # prints d's and c's next_functions by name
    trace, out, _ = inspected(golden["source"])
    by_output = {r["outputs"][0]: nid for nid, r in trace["nodes"].items() if r["outputs"]}
    labels = {r["label"]: tid for tid, r in trace["tensors"].items()}
    for line, name in zip(golden["stdout"].splitlines(), ["d", "c"], strict=True):
        text = row(out[by_output[labels[name]]], "next_functions")
        ours = [
            (None if m.group(1) is None else m.group(1), int(m.group(2)))
            for m in re.finditer(r"\((?:<(\w+) object at 0x…>|None), (\d+)\)", text)
        ]
        assert ours == _printed_pairs(line)


@pytest.mark.parametrize(
    "slug, line, word",  # where the golden's stdout prints x._version
    [("inplace-version-counter", 1, 0), ("setitem-plain", 0, -1), ("view-version-shared", 0, 0)],
)
def test_version_counter_matches_real_pytorch(slug, line, word):
    golden = GOLDENS[slug]
    trace, out, _ = inspected(golden["source"])
    tid = next(t for t, r in trace["tensors"].items() if r["label"] == "x")
    expected = golden["stdout"].splitlines()[line].split()[word]
    assert at_end(row(out[tid], "_version")) == expected


def test_a_change_through_shared_memory_shows_in_the_inspector():
    code = "import torch\nx = torch.zeros(2)\nr = x.data\nd = x.detach()\nd.add_(1)\nprint(x)\n"
    trace, rows, final = inspected(code)
    changed = next(k for k, s in enumerate(final) if s["kind"] == "inplace")
    # x (a detach() shares its counter) and r (.data: a counter of its own) hold the new values
    assert row(rows["t1"], "value") == [[0, "tensor([0., 0.])"], [changed, "tensor([1., 1.])"]]
    assert row(rows["t1"], "_version") == [[0, "0"], [changed, "1"]]
    assert row(rows["t2"], "value") == [[0, "tensor([0., 0.])"], [changed, "tensor([1., 1.])"]]
    assert row(rows["t2"], "_version") == "0"
