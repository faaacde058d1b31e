"""Names that mean something: each rebinding of a name is its own label, used everywhere."""

from __future__ import annotations

from app.examples import BY_SLUG
from app.render import graph, narrate
from engine.tracer import trace_snippet


def test_a_name_rebound_in_a_loop_gets_subscripts_in_creation_order():
    trace = trace_snippet(BY_SLUG["variable-loop"].code)
    labels = graph.display_labels(trace)
    ys = [labels[t] for t, r in trace["tensors"].items() if r["label"] == "y"]
    assert ys == ["y₁", "y₂", "y₃", "y₄", "y₅"]
    assert labels["t1"] == "x"  # bound once: plain
    texts = narrate(trace)
    assert "MulBackward0 receives ∂y₅/∂y₄ = 1.5 and sends 1.5·x = 2.25 to y₃" in " ".join(texts)
    assert not any("∂y/∂y" in text for text in texts)


def test_the_root_is_named_by_what_backward_was_called_on():
    trace = trace_snippet(BY_SLUG["control-flow"].code)
    texts = narrate(trace)
    start = next(t for t in texts if "starts the backward pass" in t)
    assert "at loss, with ∂loss/∂loss = 1" in start
    assert not any("∂result/" in t for t in texts)
    scene = graph.build(trace)
    (root,) = [e for e in scene.autograd.elements.values() if e.kind == "root"]
    assert root.lines == ("loss",)


def test_each_pass_of_a_training_loop_has_its_own_loss():
    trace = trace_snippet(BY_SLUG["mlp-training"].code)
    labels = graph.display_labels(trace)
    losses = [labels[t] for t, r in trace["tensors"].items() if r["label"] == "loss"]
    assert losses[0] == "loss₁" and losses[-1] == "loss₂₀" and len(losses) == 20
    assert "model[0].weight.grad" in labels.values()  # parameters are bound once


def test_in_place_versions_are_one_tensor_and_grads_follow_their_owner():
    code = (
        "import torch\n"
        "x = torch.tensor(2.0, requires_grad=True)\n"
        "for _ in range(2):\n"
        "    y = x * 3\n"
        "    y.retain_grad()\n"
        "    y.backward()\n"
        "z = x * 1\n"
        "z += 1\n"
    )
    trace = trace_snippet(code)
    labels = graph.display_labels(trace)
    assert sorted(v for v in labels.values() if v.startswith("y")) == [
        "y₁",
        "y₁.grad",
        "y₂",
        "y₂.grad",
    ]
    assert [v for v in labels.values() if v.startswith("z")] == ["z"]
