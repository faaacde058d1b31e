"""The oracle: no drawn label states a `.grad` the snippet would not print at that step.

Every golden snippet (tests/engine/goldens.py) and every example is run with the real
engine under a Tracer that, right after each event is recorded, notes every traced tensor's
actual `.grad` (the engine's own objects, not the trace). Then the steps are folded with
`playback.state_at`, and at every step every text that states a `.grad` is checked against what
the program held at that step's last event:

- a tensor's `grad` slot in the tensors view, `grad 4` / `grad None` (contract C2);
- an AccumulateGrad's value line in the autograd view, `a.grad = 4` / `a.grad = None`;
- the inspector's `.grad` row, as `print(t.grad)` shows it.

And no slot may stay silent: once the program has first given a tensor a `.grad` (backward or
an assignment), the slot of that tensor's current box states it (`grad …` or `grad None`) at
every step it is drawn, except for the one step a gradient passing through is shown there
instead (a `∂d/∂c = 1` badge).

Texts are read back into numbers here, independently of how the renderer writes them.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from app.examples import EXAMPLES
from app.render import graph, playback, steps
from app.render.inspector import facts
from engine import printing
from tests import corpus
from tests.app.render.observed import (
    MISSING,
    agrees,
    ended_states,
    ended_steps,
    observed_run,
    timeline,
    versions,
)
from tests.corpus import STEPWISE_SOURCES as SNIPPETS

EXAMPLES_BY_SLUG = {e.slug: e.code for e in EXAMPLES}

_ELEMENT = re.compile(r"^(t\d+)(?:-v\d+)?$")


def claim(text: str) -> str | None:
    """The value part of a text that states a .grad, or None if it states nothing."""
    if text.startswith("grad "):
        return text[len("grad ") :]
    return None


def drawn_steps(trace: dict) -> tuple[graph.Scene, list[dict]]:
    scene = graph.build(trace)
    return scene, steps.finish(steps.build(scene), {})


def falsehoods(code: str) -> list[str]:
    """Every drawn .grad statement that disagrees with the program, as readable lines."""
    trace, after = observed_run(code)
    scene, final = drawn_steps(trace)
    return disagreements(trace, after, scene, final)


def disagreements(trace: dict, after: list, scene: graph.Scene, final: list[dict]) -> list[str]:
    return drawn_disagreements(trace, after, scene, final) + inspector_disagreements(
        trace, after, scene, final
    )


def inspector_disagreements(trace, after, scene, final) -> list[str]:
    """The inspector's `.grad` row, as print(t.grad) would show it at each step."""
    ids = [*scene.tensors.elements, *scene.autograd.elements]
    rows = {}  # element → (its tensor id, what its .grad row says at step k)
    for element, facts_of in facts(trace, ids, final).items():
        match = _ELEMENT.match(element)
        grad = [d for term, d in facts_of if term == ".grad"]
        if match and grad:
            rows[element] = (match.group(1), timeline(grad[0]))
    printed = Printed()
    bad = []
    for k, last_seq in ended_steps(final):
        for element, (tid, said) in rows.items():
            text = said(k)
            actual = after[last_seq].get(tid, MISSING)
            if actual is MISSING or text.startswith("a "):
                continue
            want = printed(tid, actual)
            if text != want:
                bad.append(f"step {k + 1}: inspector says {element}.grad is {text!r}, not {want!r}")
    return bad


class Printed:
    """print(t.grad)'s text for a tensor's grad after an event; the last one is kept for each
    tensor, since a grad is the same over most events and printing it is the costly part."""

    def __init__(self) -> None:
        self.last: dict[str, tuple[np.ndarray, str]] = {}

    def __call__(self, tid: str, grad: np.ndarray | None) -> str:
        if grad is None:
            return "None"
        before = self.last.get(tid)
        if before is not None and _same(before[0], grad):
            return before[1]
        text = printing.tensor_repr(grad, grad.dtype.name)
        self.last[tid] = (grad, text)
        return text


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def first_grads(after: list[dict[str, object]]) -> dict[str, int]:
    """tensor id → the first event after which the program held a .grad for it."""
    first: dict[str, int] = {}
    for seq, seen in enumerate(after):
        for tid, grad in seen.items():
            if grad is not None and grad is not MISSING:
                first.setdefault(tid, seq)
    return first


def drawn_disagreements(trace, after, scene, final) -> list[str]:
    accumulators = {
        nid: record["variable"]
        for nid, record in trace["nodes"].items()
        if record["name"] == "AccumulateGrad"
    }
    bad = []
    first = first_grads(after)
    version_at = versions(trace)
    for k, last_seq, (tensors, autograd) in ended_states(final, "tensors", "autograd"):
        truth = after[last_seq]
        for tid, since in first.items():
            element = scene.version.get((tid, version_at[last_seq].get(tid, 0)), tid)
            if since > last_seq or element not in tensors.visible:
                continue
            if truth.get(tid, MISSING) is MISSING:
                continue  # garbage collected: the program cannot print it any more
            text = tensors.grads.get(element, "")
            if not text.startswith(("grad ", "∂")):
                bad.append(f"step {k + 1}: {element} states no .grad ({text!r})")
        for element, text in tensors.grads.items():
            said = claim(text)
            match = _ELEMENT.match(element)
            if said is None or not match or element not in tensors.visible:
                continue
            actual = truth.get(match.group(1), MISSING)
            if actual is not MISSING and not agrees(said, actual):
                bad.append(f"step {k + 1}: {element} shows {text!r}, .grad is {actual!r}")
        for element, text in autograd.values.items():
            leaf = accumulators.get(element)
            prefix = f"{scene.labels.get(leaf, '')}.grad = "
            if leaf is None or not text.startswith(prefix) or element not in autograd.visible:
                continue
            actual = truth.get(leaf, MISSING)
            if actual is not MISSING and not agrees(text[len(prefix) :], actual):
                bad.append(f"step {k + 1}: {element} shows {text!r}, .grad is {actual!r}")
    return bad


# Snippets where the oracle reads a value before the trace is told of it: `w.data = t` swaps
# the memory, then tells the tracer, and the oracle reads at the start of that event. The page
# is right (the old dtype until the data_set step); the oracle is one event early.
READ_BEFORE_TOLD = {
    "mod-to-double-cpu": "Module.double() converts each .grad by `.data =`, dtype and all",
}


@pytest.mark.parametrize("slug", corpus.spread(sorted(SNIPPETS)))
def test_no_label_states_a_grad_the_program_does_not_hold(slug):
    found = falsehoods(SNIPPETS[slug])
    if slug in READ_BEFORE_TOLD:
        assert found, f"{slug} no longer trips the oracle: take it off READ_BEFORE_TOLD"
        assert all("dtype=" in line for line in found), found  # only the dtype, never values
    else:
        assert found == []


def test_the_oracle_catches_a_false_label():
    """The check itself can fail: the label today's renderer gave d (a non-leaf) is caught."""
    trace, after = observed_run(EXAMPLES_BY_SLUG["retain-grad"])
    scene, final = drawn_steps(trace)
    assert disagreements(trace, after, scene, final) == []
    final[-1]["tensors"].setdefault("grads", {})["t4"] = "grad 1"
    assert disagreements(trace, after, scene, final) == [
        "step 15: t4 shows 'grad 1', .grad is None"
    ]
    final[-1]["tensors"]["grads"]["t4"] = "grad None"
    final[-1]["autograd"].setdefault("values", {})["n2"] = "a.grad = 4"
    assert len(disagreements(trace, after, scene, final)) == 1


def test_box_texts_are_read_back_as_numbers():
    assert agrees("None", None) and not agrees("None", np.array(0.0))
    assert agrees("5", np.array(5.0)) and not agrees("5", np.array(4.0))
    assert agrees("[1, -2.5]", np.array([1.0, -2.5])) and not agrees("[1, 2]", np.array([1.0]))
    assert agrees("2×3", np.zeros((2, 3))) and not agrees("3×2", np.zeros((2, 3)))
    assert agrees("8 values", np.zeros(8)) and not agrees("8 values", np.zeros(7))


def final_grads(code: str) -> dict[str, str]:
    _, final = drawn_steps(observed_run(code)[0])
    state = playback.state_at(final, "tensors", len(final) - 1)
    return {k: v for k, v in state.grads.items() if _ELEMENT.match(k) and v}


def test_retain_grad_shows_grad_only_where_python_has_one():
    code = EXAMPLES_BY_SLUG["retain-grad"]
    assert final_grads(code) == {
        "t1": "grad 5",  # a
        "t2": "grad 3",  # b
        "t3": "grad 1",  # c, after c.retain_grad()
        "t4": "grad None",  # d: print(d.grad) says None
    }


def test_a_gradient_passing_through_is_a_badge_for_one_step():
    _, final = drawn_steps(observed_run(EXAMPLES_BY_SLUG["retain-grad"])[0])
    texts = [s["tensors"].get("grads", {}).get("t3") for s in final]
    k = texts.index("∂d/∂c = 1")
    assert final[k]["kind"] == "node_backward"
    assert texts[k + 1] == "grad 1"  # back to what c.grad holds (retain_grad)
    root = [s["tensors"].get("grads", {}).get("t4") for s in final]
    assert root[final.index(next(s for s in final if s["kind"] == "backward_begin"))] == (
        "∂d/∂d = 1"
    )
    assert "" in root  # the badge is cleared before d's .grad is stated as None


def test_accumulation_zeroing_and_reset_follow_the_program():
    accumulate = SNIPPETS["grads-accumulate"]  # 3 backwards add up; x.grad = None; again
    trace, _ = observed_run(accumulate)
    _, final = drawn_steps(trace)
    said = [s["tensors"]["grads"]["t1"] for s in final if "t1" in s["tensors"].get("grads", {})]
    assert said == ["grad 6", "grad 12", "grad 18", "grad None", "grad 2"]
    assert final_grads(SNIPPETS["grad-zero-inplace"])["t1"] == "grad [2, 2]"
    _, final = drawn_steps(observed_run(SNIPPETS["grad-zero-inplace"])[0])
    said = [s["tensors"]["grads"]["t1"] for s in final if "t1" in s["tensors"].get("grads", {})]
    assert said == ["grad [5, 5]", "grad [0, 0]", "grad [2, 2]"]


def slot_over_run(code: str, tid: str) -> list[tuple[str, str]]:
    """(step kind, what tensor `tid`'s current box says) at every step, as the player folds
    them, from its first statement on."""
    trace, _ = observed_run(code)
    scene, final = drawn_steps(trace)
    version_at = versions(trace)
    out, last_seq = [], 0
    for k, step in enumerate(final):
        last_seq = step["seq"][1] if step["seq"] else last_seq
        element = scene.version.get((tid, version_at[last_seq].get(tid, 0)), tid)
        text = playback.state_at(final, "tensors", k).grads.get(element, "")
        if text or out:
            out.append((step["kind"], text))
    return out


def test_zero_grad_states_none():
    """opt.zero_grad() is recorded: past it w says `grad None`, as print(w.grad) does."""
    said = slot_over_run(SNIPPETS["optim-zero-grad-none"], "t1")
    assert said == [
        ("accumulate", "grad [3]"),
        ("free", "grad [3]"),
        ("print", "grad [3]"),
        ("inplace", "grad [3]"),  # opt.step() used it
        ("grad_set", "grad None"),
        ("print", "grad None"),
        ("print", "grad None"),
    ]


def test_mlp_training_parameters_say_grad_none_during_the_next_forward():
    trace, after = observed_run(EXAMPLES_BY_SLUG["mlp-training"])
    scene, final = drawn_steps(trace)
    first = next(t for t, r in trace["tensors"].items() if r["label"] == "model[0].weight")
    version_at = versions(trace)
    pass_two = [k for k, s in enumerate(final) if s["generation"] == 2 and s["phase"] == "forward"]
    assert len(pass_two) > 3
    for k in pass_two:
        last_seq = final[k]["seq"][1]
        element = scene.version[(first, version_at[last_seq].get(first, 0))]
        state = playback.state_at(final, "tensors", k)
        assert element in state.visible
        assert state.grads[element] == "grad None", k
        assert after[last_seq][first] is None
    reset = next(s for s in final if s["kind"] == "grad_set" and s["generation"] == 2)
    assert reset["text"] == (
        "Line 11: `optimizer.zero_grad()` sets .grad of 4 parameters to None, so the next "
        "backward() starts from fresh gradients instead of adding to the old ones."
    )


def test_assigning_none_states_none():
    code = """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
(x * 2).sum().backward()
x.grad = None
print(x.grad)
"""
    assert falsehoods(code) == []
    assert slot_over_run(code, "t1")[-2:] == [("grad_set", "grad None"), ("print", "grad None")]


def test_assigning_a_tensor_states_its_values():
    code = """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
x.grad = torch.zeros(2)
print(x.grad)
(x * 3).sum().backward()
print(x.grad)
"""
    assert falsehoods(code) == []
    said = slot_over_run(code, "t1")
    assert said[:2] == [("grad_set", "grad [0, 0]"), ("print", "grad [0, 0]")]
    assert said[-1] == ("print", "grad [3, 3]")  # backward added into the assigned tensor
    trace, _ = observed_run(code)
    (event,) = [e for e in trace["events"] if e["kind"] == "grad_set"]
    accumulate = next(e for e in trace["events"] if e["kind"] == "accumulate")
    assert accumulate["grad_tensor"] == event["grad_tensor"]
    # x's AccumulateGrad appears with the op that first uses x, saying the assigned .grad
    _, final = drawn_steps(trace)
    node = accumulate["node"]
    (shown,) = [s for s in final if node in s["autograd"].get("reveal", ())]
    assert shown["kind"] == "op" and shown["autograd"]["values"][node] == "x.grad = [0, 0]"


def test_each_accumulate_grad_of_a_leaf_states_its_grad():
    # the first graph is freed before w is used again, so w gets a second AccumulateGrad (a
    # leaf holds its node weakly); the first must still state w.grad in its own pass
    code = """import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
(w * 3).sum().backward()
z = torch.zeros(1)
(w * 2).sum().backward()
"""
    assert falsehoods(code) == []
    trace, _ = observed_run(code)
    first, second = [e["node"] for e in trace["events"] if e["kind"] == "accumulate"]
    assert first != second
    _, final = drawn_steps(trace)
    said = [s["autograd"].get("values", {}) for s in final]
    assert {"w.grad = [3, 3]"} <= {values.get(first) for values in said}
    assert {"w.grad = [3, 3]", "w.grad = [5, 5]"} <= {values.get(second) for values in said}


def test_zero_grad_keeping_the_tensors_states_zeros():
    code = """import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
(w * 3).sum().backward()
opt.zero_grad(set_to_none=False)
print(w.grad)
(w * 2).sum().backward()
print(w.grad)
"""
    assert falsehoods(code) == []
    said = slot_over_run(code, "t1")
    assert ("grad_set", "grad [0, 0]") in said
    assert said[-1] == ("print", "grad [2, 2]")
    _, final = drawn_steps(observed_run(code)[0])
    (step,) = [s for s in final if s["kind"] == "grad_set"]
    assert "fills w.grad with zeros in place" in step["text"]
    assert (
        "w.grad was already [0, 0]"
        in next(s for s in final[::-1] if s["kind"] == "accumulate")["text"]
    )


def test_deleting_grad_states_none():
    code = """import torch
x = torch.tensor(2.0, requires_grad=True)
(x * x).backward()
del x.grad
print(x.grad)
"""
    assert falsehoods(code) == []
    said = slot_over_run(code, "t1")
    assert said[-2:] == [("grad_set", "grad None"), ("print", "grad None")]
    _, final = drawn_steps(observed_run(code)[0])
    (step,) = [s for s in final if s["kind"] == "grad_set"]
    assert step["text"].startswith("Line 4: `del x.grad` deletes x.grad, which leaves it None")


def test_the_oracle_catches_a_silent_slot():
    """A slot left blank after the program gave the tensor a .grad is caught."""
    trace, after = observed_run(SNIPPETS["optim-zero-grad-none"])
    scene, final = drawn_steps(trace)
    assert disagreements(trace, after, scene, final) == []
    reset = next(s for s in final if s["kind"] == "grad_set")
    reset["tensors"]["grads"] = {k: "" for k in reset["tensors"]["grads"]}
    complaints = disagreements(trace, after, scene, final)
    assert complaints and all("states no .grad" in c for c in complaints)


def test_a_print_after_backward_keeps_the_phase():
    _, final = drawn_steps(observed_run(EXAMPLES_BY_SLUG["retain-grad"])[0])
    assert [s["phase"] for s in final if s["kind"] == "print"] == ["freed"] * 3
    _, final = drawn_steps(observed_run(EXAMPLES_BY_SLUG["mlp-training"])[0])
    after_first = [s for s in final if s["generation"] == 2]
    assert after_first[0]["phase"] == "forward"
    phases = [s["phase"] for s in final]
    assert "freed" in phases and phases.index("forward", phases.index("freed")) > 0


def test_the_oracle_catches_a_false_inspector_row():
    trace, after = observed_run(EXAMPLES_BY_SLUG["retain-grad"])
    scene, final = drawn_steps(trace)
    assert inspector_disagreements(trace, after, scene, final) == []
    accumulate = next(e for e in trace["events"] if e["kind"] == "accumulate")
    accumulate["grad"] = 4.0  # a's .grad is 5
    complaints = inspector_disagreements(trace, after, scene, final)
    assert complaints and all("tensor(4.)" in c for c in complaints)
