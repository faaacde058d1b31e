"""Generated quick checks ("Quiz me"): every question agrees with its fact, and grading it with
its own answer says right, for the seed and for random small programs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.lessons import forms, generated, quiz
from app.lessons.facts import TraceFacts
from app.lessons.grading import Answers, grade, shuffled
from app.lessons.model import ChoiceQuestion, NodeQuestion, NumericQuestion, OrderQuestion
from engine.tracer import trace_snippet
from tests.app.lessons.seed import SEED_SNIPPET
from tests.app.lessons.snippets import SNIPPETS


def own_answer(question, picks) -> Answers:
    """The form a learner who knows the answer sends."""
    if isinstance(question, ChoiceQuestion):
        right = [str(i) for i, choice in enumerate(question.choices) if choice.correct]
        return Answers({"choice": right})
    if isinstance(question, NumericQuestion):
        return Answers({"value": [repr(question.answer)]})
    if isinstance(question, NodeQuestion):
        return Answers({"node": sorted(picks.right)})
    assert isinstance(question, OrderQuestion)
    listed = shuffled(question)
    return Answers(
        {f"rank-{k}": [str(question.answer.index(item) + 1)] for k, item in enumerate(listed)}
    )


def assert_every_question_holds(trace: dict) -> list:
    assert trace["outcome"]["status"] == "ok", trace["outcome"]
    facts = TraceFacts(trace)
    asked = generated.questions(trace, facts)
    ids = [q.id for q in asked]
    assert len(ids) == len(set(ids)), ids
    for question in asked:
        assert question.fact, f"{question.id} carries no fact to check it by"
        assert quiz.disagreement(question, facts) is None, question
        picks = None
        if isinstance(question, NodeQuestion):
            picks = quiz.picks(question, facts)
            assert picks.right and picks.right <= picks.names.keys()
        for key in ("step", "checkpoint"):
            value = getattr(question, key)
            assert value is None or facts.has_step(value), (question.id, key, value)
        feedback = grade(question, own_answer(question, picks), picks)
        assert feedback.correct, (question, feedback)
    # the same quiz as the web gets it (JSON from a render worker), graded the same way
    context = quiz.context(trace)
    assert [q["id"] for q in context["questions"]] == ids
    for item in forms.ask(context):
        assert item.unavailable is None, item
        assert grade(item.question, own_answer(item.question, item.picks), item.picks).correct
    return asked


def test_the_seeds_generated_questions_hold_and_cover_its_facts():
    asked = assert_every_question_holds(trace_snippet(SEED_SNIPPET))
    facts = {q.fact for q in asked}
    # the seed has two leaves with grads, two paths into a, four nodes and saved tensors:
    # every kind of generated question has something to ask
    assert {"leaves", "backward-order", "second-backward-fails", "paths a"} <= facts
    assert {"grad a", "grad b"} <= facts
    assert any(isinstance(q, NodeQuestion) for q in asked)


@pytest.mark.parametrize("name", SNIPPETS)
def test_generated_questions_hold_for_the_fact_snippets(name):
    # two-steps is a training loop: two passes build `w * 3`, two MulBackward0(w * 3) nodes
    assert_every_question_holds(trace_snippet(SNIPPETS[name]))


TWO_ALIKE = (
    "import torch\nx = torch.tensor(2.0, requires_grad=True)\n"
    "u = (x * x).sum()\nv = (x * x).sum()\nv.backward()\n"
)


def test_nodes_with_one_long_name_get_distinct_names_that_resolve_back():
    """Both MulBackward0 made a tensor labelled `x * x`: each still needs a name of its own."""
    facts = TraceFacts(trace_snippet(TWO_ALIKE))
    muls = [n for n, node in facts.trace["nodes"].items() if node["name"] == "MulBackward0"]
    assert len(muls) == 2
    names = {nid: facts.node_name(nid) for nid in facts.trace["nodes"]}
    assert len(set(names.values())) == len(names), names
    for nid, name in names.items():
        assert facts.resolve_node(name, "autograd") == nid
        assert facts.resolve_node(nid, "autograd") == nid  # the id always works
    assert_every_question_holds(trace_snippet(TWO_ALIKE))


def test_a_run_without_backward_gets_at_most_the_leaves_question():
    code = "import torch\na = torch.tensor(1.0, requires_grad=True)\nb = a * 2\n"
    asked = assert_every_question_holds(trace_snippet(code))
    assert [q.id for q in asked] == ["leaves"]


def test_a_run_that_fails_before_backward_asks_nothing_about_backward():
    code = (
        "import torch\na = torch.tensor(1.0, requires_grad=True)\nb = a * 2\n"
        "raise ValueError('x')\n"
    )
    trace = trace_snippet(code)
    assert trace["outcome"]["status"] == "error"
    asked = generated.questions(trace)
    assert all(q.fact == "leaves" for q in asked)


# ***** random small programs *****

OPS = ("+", "-", "*")


@st.composite
def programs(draw) -> str:
    """2-3 scalar leaves with small integer values, then 2-5 ops among + - * of names made
    earlier, then backward() on the last."""
    count = draw(st.integers(2, 3))
    names = [f"x{k}" for k in range(count)]
    lines = ["import torch"]
    for name in names:
        value = draw(st.integers(-3, 3))
        lines.append(f"{name} = torch.tensor({value}.0, requires_grad=True)")
    for k in range(draw(st.integers(2, 5))):
        left, right = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        result = f"v{k}"
        lines.append(f"{result} = {left} {draw(st.sampled_from(OPS))} {right}")
        names.append(result)
    lines.append(f"{names[-1]}.backward()")
    return "\n".join(lines) + "\n"


@settings(max_examples=30, deadline=None)
@given(programs())
def test_generated_questions_hold_for_small_programs(code):
    assert_every_question_holds(trace_snippet(code))


def test_a_run_cut_short_gets_no_questions_about_its_backward():
    loop = """\
import torch
w = torch.tensor(1.0, requires_grad=True)
for step in range(100):
    loss = (w * 3) ** 2
    loss.backward()
"""
    # recording stopped in the middle of the loop (the snippet ran on)
    trace = trace_snippet(loop, max_events=200)
    assert trace["limits"]["truncated"] and trace["outcome"]["status"] == "ok"
    asked = quiz.context(trace)["questions"]
    assert {q["fact"] for q in asked} <= {"leaves"}


def test_a_failing_backward_gets_no_questions_about_it():
    failing = SEED_SNIPPET + "d.backward()\n"  # the second backward: freed saved tensors
    trace = trace_snippet(failing)
    assert trace["outcome"]["status"] == "error"
    assert {q["fact"] for q in quiz.context(trace)["questions"]} <= {"leaves"}


def test_a_vector_leaf_is_asked_its_first_grad_entry_and_prompts_say_it_once():
    # x needs no grad: a leaf (x.is_leaf is True), which the question now asks about, not "a
    # leaf of the graph"; w's .grad is a vector, asked of its first entry
    code = (
        "import torch\nx = torch.tensor([1.0, 2.0])\n"
        "w = torch.tensor([3.0, 4.0], requires_grad=True)\n"
        "y = (w * x).sum()\nz = y * y\nz.backward()\n"
    )
    trace = trace_snippet(code)
    asked = {q.id: q for q in assert_every_question_holds(trace)}
    (grad,) = [q for q in asked.values() if q.fact and q.fact.startswith("grad w")]
    assert grad.prompt == "What is `w.grad[0]` when the run ends?"
    assert grad.answer == 2 * 11.0 * 1.0  # dz/dw = 2·y·x, y = 11
    assert "is_leaf" in asked["leaves"].prompt
    assert not asked["next-node"].prompt.startswith("Predict")
