"""Quick checks for any trace ("Quiz me"): a few questions whose answers the run itself proves.

Each question is built from a fact of the trace (app/lessons/facts.py) and carries it, so the
same `quiz.disagreement` that checks a lesson's answers can check these (the tests do). Nothing
is asked that the trace cannot answer: a run that stopped early gets no questions about what it
never did, a .grad that is not one number is asked of its first entry, and so on.
"""

from __future__ import annotations

from app.lessons.facts import FactError, TraceFacts, is_name
from app.lessons.model import (
    Choice,
    ChoiceQuestion,
    NodeQuestion,
    NumericQuestion,
    OrderQuestion,
)

MAX_GRAD_QUESTIONS = 2
MAX_LEAF_CHOICES = 6
MAX_ORDER = 6
MAX_NODES = 40  # a node question lists every node drawn so far: past this, it is not asked


def questions(trace: dict, facts: TraceFacts | None = None) -> list:
    """The generated questions for `trace`, in the order a learner meets their answers."""
    facts = facts or TraceFacts(trace)
    out: list = []
    out += _leaves(facts)
    # a run stopped early (or failing) may have left a backward() half done: ask nothing of it
    whole = trace["outcome"]["status"] == "ok" and not trace["limits"]["truncated"]
    if whole and _backward_ran(trace):
        out += _next_node(facts)
        out += _grads(facts)
        out += _paths(facts)
        out += _order(facts)
        out += _second_backward(facts)
    return out


def _backward_ran(trace: dict) -> bool:
    return any(event["kind"] == "backward_end" for event in trace["events"])


def _leaves(facts: TraceFacts) -> list:
    named: dict[str, dict] = {}  # the first tensor under each name the snippet gave
    for tid, record in facts.trace["tensors"].items():
        label = facts.labels[tid]
        if is_name(label) and not label.endswith(".grad") and label not in named:
            named[label] = record
            if len(named) == MAX_LEAF_CHOICES:
                break
    if len(named) < 2:
        return []
    leaves = facts.leaves().value
    if not leaves & named.keys():
        return []
    choices = [
        Choice(
            text=f"`{label}`", correct=label in leaves, feedback=_leaf_note(facts, label, record)
        )
        for label, record in named.items()
    ]
    if all(choice.correct for choice in choices):
        return []
    return [
        ChoiceQuestion(
            type="choice",
            id="leaves",
            prompt="Which of these tensors are leaves (`is_leaf` is True)?",
            choices=choices,
            multiple=True,
            fact="leaves",
            hint="A leaf is a tensor no recorded operation made: it has no grad_fn.",
            explain="Leaves are where backward() stops. Only leaves that require grad get a .grad.",
        )
    ]


def _leaf_note(facts: TraceFacts, label: str, record: dict) -> str:
    if not record["is_leaf"]:
        name = facts.trace["nodes"][record["grad_fn"]]["name"] if record["grad_fn"] else "an op"
        return f"`{label}` was made by an operation autograd recorded ({name}): not a leaf."
    if record["requires_grad"]:
        return f"`{label}` is a leaf that requires grad: backward() fills its .grad."
    return (
        f"`{label}` is a leaf too (`{label}.is_leaf` is True): no recorded operation made it. It "
        "needs no grad, so backward() never reaches it."
    )


def _grads(facts: TraceFacts) -> list:
    out = []
    for tid in facts.gets_grad().elements["tensors"]:
        label = facts.labels[tid]
        if not is_name(label):
            continue
        try:
            fact = facts.grad(label)
        except FactError:
            continue
        # a vector's (or a matrix's) .grad is asked of its first entry: one number to type
        index = ""
        value = fact.value
        while isinstance(value, list) and value:
            index += "[0]"
            value = value[0]
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        if index and f"{label}{index}" in facts.labels.values():
            continue  # `weights[0]` names a tensor of its own here, not an entry of the .grad
        out.append(
            NumericQuestion(
                type="numeric",
                id=f"grad-{len(out) + 1}",
                prompt=f"What is `{label}.grad{index}` when the run ends?",
                answer=float(value),
                tolerance=max(abs(float(value)) * 1e-4, 1e-6),
                fact=f"grad {label}{index}",
                hint=f"Add up what reaches `{label}` along every path, then any earlier .grad.",
                step=fact.step,
            )
        )
        if len(out) == MAX_GRAD_QUESTIONS:
            break
    return out


def _next_node(facts: TraceFacts) -> list:
    """Predict the next step: the second node backward runs (the first is the root's)."""
    order = facts.backward_order()
    nodes = order.elements["autograd"]
    if len(nodes) < 2:
        return []
    begin = next(e for e in facts.trace["events"] if e["kind"] == "backward_begin")
    visits = [
        e
        for e in facts.trace["events"][begin["seq"] :]
        if e["kind"] in ("node_backward", "accumulate")
    ]
    step = facts.step_of(visits[1]["seq"])
    if step < 2 or facts.step_of(visits[0]["seq"]) == step:
        return []
    drawn = [n for n in facts.trace["nodes"].values() if n["created"] <= visits[0]["seq"]]
    if len(drawn) > MAX_NODES:
        return []
    fact = facts.next_backward(step - 1)
    return [
        NodeQuestion(
            type="node",
            id="next-node",
            prompt="Which node does backward() run next?",  # the form says "Predict step N"
            view="autograd",
            answer=[fact.value],
            checkpoint=step,
            fact=f"next-backward after {step - 1}",
            hint="A node runs once every gradient bound for it has arrived.",
            step=step,
        )
    ]


def _paths(facts: TraceFacts) -> list:
    best = None
    for tid in facts.gets_grad().elements["tensors"]:
        label = facts.labels[tid]
        if not is_name(label) or not facts.trace["tensors"][tid]["is_leaf"]:
            continue
        try:
            count = facts.paths(label).value
        except FactError:
            continue
        if best is None or count > best[1]:
            best = (label, count)
    if best is None or best[1] < 2:
        return []
    label, count = best
    return [
        NumericQuestion(
            type="numeric",
            id="paths",
            prompt=f"Along how many paths does the gradient reach `{label}`?",
            answer=count,
            tolerance=0,
            fact=f"paths {label}",
            hint=f"Follow every chain of grad_fn nodes from the root down to `{label}`.",
            explain=f"Each path brings its own part, and `{label}.grad` is their sum.",
        )
    ]


def _order(facts: TraceFacts) -> list:
    order = facts.backward_order().value
    if not 2 < len(order) <= MAX_ORDER or len(set(order)) != len(order):
        return []
    return [
        OrderQuestion(
            type="order",
            id="order",
            prompt="Put the nodes in the order the first backward() runs them.",
            answer=list(order),
            fact="backward-order",
            hint="Backward starts at the root's grad_fn; a node runs once all its inputs arrived.",
        )
    ]


def _second_backward(facts: TraceFacts) -> list:
    fails = facts.second_backward_fails()
    freed = "The first backward() freed the saved tensors its nodes need: a second raises."
    kept = "Nothing it needs was freed: retain_graph=True kept it, or no node saved anything."
    return [
        ChoiceQuestion(
            type="choice",
            id="again",
            prompt="Would calling backward() again through the same graph raise an error?",
            choices=[
                Choice(text="Yes", correct=fails.value, feedback=None if fails.value else kept),
                Choice(text="No", correct=not fails.value, feedback=freed if fails.value else None),
            ],
            fact="second-backward-fails",
            step=fails.step,
            explain=freed if fails.value else kept,
        )
    ]
