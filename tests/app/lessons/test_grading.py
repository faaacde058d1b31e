"""Grading a quick check: a form's fields in, feedback out, for every question type."""

from __future__ import annotations

import io
import itertools

import pytest
from starlette.datastructures import UploadFile

from app.lessons.grading import MAX_FIELD, Answers, BadAnswer, NodePicks, grade, shuffled
from app.lessons.model import (
    Choice,
    ChoiceQuestion,
    NodeQuestion,
    NumericQuestion,
    OrderQuestion,
)

SINGLE = ChoiceQuestion(
    type="choice",
    id="single",
    prompt="Is `d` a leaf?",
    hint="Look for a grad_fn.",
    explain="d was made by an op.",
    step=4,
    choices=[
        Choice(text="Yes", feedback="It has a grad_fn, so no."),
        Choice(text="No", correct=True, feedback="Right: AddBackward0 made it."),
        Choice(text="Only after backward()"),
    ],
)

MULTIPLE = ChoiceQuestion(
    type="choice",
    id="multiple",
    prompt="Which are leaves?",
    multiple=True,
    hint="No op made them.",
    choices=[
        Choice(text="`a`", correct=True),
        Choice(text="`b`", correct=True),
        Choice(text="`d`", feedback="d has a grad_fn."),
    ],
)

NUMERIC = NumericQuestion(
    type="numeric",
    id="grad-a",
    prompt="What is `a.grad`?",
    answer=-2.5,
    tolerance=0.01,
    hint="Two paths.",
    explain="Sum both.",
    step=8,
)

NODE = NodeQuestion(
    type="node", id="node", prompt="Which runs next?", answer=["MulBackward0"], hint="Mul."
)
NODE_PICKS = NodePicks(
    {"n1": "MulBackward0", "n2": "AccumulateGrad(a)", "n4": "AddBackward0"}, frozenset({"n1"})
)

NODES = NodeQuestion(
    type="node",
    id="nodes",
    prompt="Which accumulate?",
    answer=["AccumulateGrad(a)", "AccumulateGrad(b)"],
    multiple=True,
)
NODES_PICKS = NodePicks(
    {"n1": "MulBackward0", "n2": "AccumulateGrad(a)", "n3": "AccumulateGrad(b)"},
    frozenset({"n2", "n3"}),
)

ORDER = OrderQuestion(
    type="order",
    id="order",
    prompt="Order them.",
    answer=["AddBackward0", "MulBackward0", "AccumulateGrad(a)", "AccumulateGrad(b)"],
    hint="Root first.",
)


def form(**fields) -> Answers:
    """A form; a list value is a field sent several times (a checkbox group)."""
    return Answers(
        {k.replace("_", "-"): v if isinstance(v, list) else [v] for k, v in fields.items()}
    )


def ranks_for(question: OrderQuestion, order: list[str]) -> dict[str, str]:
    """The form fields that put the shuffled items into `order`."""
    listed = shuffled(question)
    return {f"rank-{k}": str(order.index(item) + 1) for k, item in enumerate(listed)}


def bad(question, answers: Answers, picks=None) -> str:
    with pytest.raises(BadAnswer) as raised:
        grade(question, answers, picks)
    message = str(raised.value)
    assert message and len(message) < 200
    return message


# ***** choice *****


def test_a_single_choice_right_is_correct_with_its_feedback_and_the_answer():
    feedback = grade(SINGLE, form(choice="1"))
    assert feedback.correct
    assert tuple(feedback.notes) == ("Right: AddBackward0 made it.",)
    assert feedback.answer == "No"
    assert feedback.explain == "d was made by an op."


def test_a_single_choice_wrong_gets_that_choices_feedback_and_the_hint_not_the_answer():
    feedback = grade(SINGLE, form(choice="0"))
    assert not feedback.correct
    assert tuple(feedback.notes) == ("It has a grad_fn, so no.",)
    assert feedback.hint == "Look for a grad_fn."
    assert feedback.answer is None and feedback.explain is None


def test_a_wrong_choice_without_feedback_gets_no_note():
    feedback = grade(SINGLE, form(choice="2"))
    assert not feedback.correct and tuple(feedback.notes) == ()


def test_feedback_notes_are_a_tuple_as_declared():
    assert isinstance(grade(SINGLE, form(choice="0")).notes, tuple)


def test_multiple_choice_needs_exactly_the_correct_set():
    assert grade(MULTIPLE, form(choice=["0", "1"])).correct
    assert grade(MULTIPLE, form(choice=["1", "0"])).correct  # the order of boxes does not count
    partial = grade(MULTIPLE, form(choice="0"))
    assert not partial.correct
    assert tuple(partial.notes) == ("Right so far, but 1 more belong.",)
    over = grade(MULTIPLE, form(choice=["0", "1", "2"]))
    assert not over.correct
    assert tuple(over.notes) == ("d has a grad_fn.",)
    wrong = grade(MULTIPLE, form(choice="2"))
    assert not wrong.correct and tuple(wrong.notes) == ("d has a grad_fn.",)


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({}, "pick an answer"),
        ({"choice": "3"}, "no choice 3"),
        ({"choice": "-1"}, "no choice -1"),
        ({"choice": "one"}, "not a number"),
        ({"choice": ""}, "not a number"),
        ({"choice": ["0", "1"]}, "one answer"),
    ],
)
def test_a_malformed_single_choice_is_a_bad_answer(fields, says):
    assert says in bad(SINGLE, form(**fields))


def test_a_malformed_multiple_choice_is_a_bad_answer():
    assert "no choice 7" in bad(MULTIPLE, form(choice=["0", "7"]))
    assert "pick an answer" in bad(MULTIPLE, form())


# ***** numeric *****


@pytest.mark.parametrize("value", ["-2.5", "−2.5", " -2.5 ", "-2.505", "-2.495", "-25e-1", "−2.50"])
def test_a_number_within_tolerance_is_right(value):
    feedback = grade(NUMERIC, form(value=value))
    assert feedback.correct
    assert feedback.answer == "-2.5" and feedback.explain == "Sum both."


@pytest.mark.parametrize("value", ["2.5", "-2.52", "-2.48", "0", "−3"])
def test_a_number_outside_tolerance_is_wrong_and_says_what_was_given(value):
    feedback = grade(NUMERIC, form(value=value))
    assert not feedback.correct
    given = float(value.replace("−", "-"))
    assert tuple(feedback.notes) == (f"{int(given) if given.is_integer() else given} is not it.",)
    assert feedback.hint == "Two paths." and feedback.answer is None


def test_tolerance_zero_takes_the_exact_number_only():
    exact = NumericQuestion(type="numeric", id="paths", prompt="How many?", answer=2, tolerance=0)
    assert grade(exact, form(value="2")).correct
    assert grade(exact, form(value="2.0")).correct
    assert not grade(exact, form(value="2.0000001")).correct


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "NaN", "Infinity", "1e400", "−inf"])
def test_infinite_and_nan_numbers_are_refused(value):
    assert "finite" in bad(NUMERIC, form(value=value))


@pytest.mark.parametrize("value", ["five", "1,5", "2.5.1", "0x10", "1/2", "--2"])
def test_what_is_not_a_number_is_refused_saying_so(value):
    message = bad(NUMERIC, form(value=value))
    assert repr(value) in message and "not a number" in message


@pytest.mark.parametrize("fields", [{}, {"value": ""}, {"value": "   "}, {"value": ["1", "2"]}])
def test_a_missing_or_repeated_number_is_refused(fields):
    assert "write a number" in bad(NUMERIC, form(**fields))


# ***** node *****


def test_the_right_node_is_correct():
    feedback = grade(NODE, form(node="n1"), NODE_PICKS)
    assert feedback.correct and feedback.answer == "`MulBackward0`"


def test_a_wrong_node_is_named_in_the_note():
    feedback = grade(NODE, form(node="n4"), NODE_PICKS)
    assert not feedback.correct
    assert tuple(feedback.notes) == ("`AddBackward0` is not one of them.",)
    assert feedback.hint == "Mul." and feedback.answer is None


def test_several_nodes_are_graded_as_a_set():
    assert grade(NODES, form(node=["n3", "n2"]), NODES_PICKS).correct
    partial = grade(NODES, form(node="n2"), NODES_PICKS)
    assert not partial.correct and tuple(partial.notes) == ("Right so far, but 1 more belong.",)
    over = grade(NODES, form(node=["n1", "n2", "n3"]), NODES_PICKS)
    assert not over.correct and tuple(over.notes) == ("`MulBackward0` is not one of them.",)


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({}, "pick a node"),
        ({"node": "n9"}, "'n9' is not a node of this graph"),
        ({"node": "MulBackward0"}, "is not a node of this graph"),  # a name, not an element id
        ({"node": ""}, "is not a node of this graph"),
        ({"node": ["n1", "n2"]}, "one node"),
    ],
)
def test_a_malformed_node_answer_is_refused(fields, says):
    assert says in bad(NODE, form(**fields), NODE_PICKS)


def test_an_unknown_node_among_several_is_refused():
    assert "'n7'" in bad(NODES, form(node=["n2", "n7"]), NODES_PICKS)


# ***** order *****


@pytest.mark.parametrize("length", range(2, 8))
def test_shuffled_is_a_fixed_permutation_that_is_never_the_answer(length):
    for ident in ("order", "o", "backward-order", "q1", "q2", "again", "x" * 40):
        items = [f"item{k}" for k in range(length)]
        question = OrderQuestion(type="order", id=ident, prompt="Order.", answer=items)
        listed = shuffled(question)
        assert listed != items
        assert sorted(listed) == sorted(items)
        assert shuffled(question) == listed  # the form and the grader see the same shuffle


def test_the_right_order_is_correct():
    feedback = grade(ORDER, form(**ranks_for(ORDER, ORDER.answer)))
    assert feedback.correct
    assert feedback.answer == " → ".join(f"`{item}`" for item in ORDER.answer)


def test_the_order_as_listed_is_wrong_and_names_the_first_wrong_position():
    listed = shuffled(ORDER)
    feedback = grade(ORDER, form(**ranks_for(ORDER, listed)))
    assert not feedback.correct
    first = next(k for k, (a, b) in enumerate(zip(listed, ORDER.answer, strict=True)) if a != b)
    assert tuple(feedback.notes) == (f"Position {first + 1} is not `{listed[first]}`.",)
    assert feedback.hint == "Root first."


def test_every_order_but_the_answer_is_wrong():
    for order in itertools.permutations(ORDER.answer):
        feedback = grade(ORDER, form(**ranks_for(ORDER, list(order))))
        assert feedback.correct is (list(order) == ORDER.answer)


@pytest.mark.parametrize(
    "ranks",
    [["1", "1", "2", "3"], ["1", "2", "3", "5"], ["0", "1", "2", "3"], ["4", "3", "2", "2"]],
)
def test_ranks_that_are_not_a_permutation_are_refused(ranks):
    fields = {f"rank-{k}": rank for k, rank in enumerate(ranks)}
    assert "from 1 to 4" in bad(ORDER, form(**fields))


def test_a_missing_or_non_integer_rank_is_refused():
    assert "every item" in bad(ORDER, form(**{"rank-0": "1", "rank-1": "2", "rank-2": "3"}))
    fields = {"rank-0": "1", "rank-1": "2", "rank-2": "3", "rank-3": "four"}
    assert "'four' is not a whole number" in bad(ORDER, form(**fields))
    fields["rank-3"] = ["4", "4"]
    assert "every item" in bad(ORDER, form(**fields))


# ***** attempts and revealing *****


@pytest.mark.parametrize(
    ("question", "wrong", "picks"),
    [
        (SINGLE, {"choice": "0"}, None),
        (NUMERIC, {"value": "1"}, None),
        (NODE, {"node": "n4"}, NODE_PICKS),
        (ORDER, ranks_for(ORDER, shuffled(ORDER)), None),
    ],
)
def test_the_first_wrong_answer_hints_the_second_shows_the_answer(question, wrong, picks):
    first = grade(question, form(**wrong), picks)
    assert not first.correct and first.hint == question.hint and first.answer is None
    second = grade(question, form(**wrong, attempt="1"), picks)
    assert not second.correct and second.answer is not None
    assert second.explain == question.explain and second.step == question.step
    later = grade(question, form(**wrong, attempt="5"), picks)
    assert later.answer == second.answer


@pytest.mark.parametrize("question", [SINGLE, MULTIPLE, NUMERIC, ORDER])
def test_reveal_shows_the_answer_without_grading(question):
    feedback = grade(question, form(reveal="1"))
    assert not feedback.correct and feedback.answer is not None
    assert feedback.step == question.step and feedback.explain == question.explain


def test_reveal_of_a_node_question_needs_no_pick():
    assert grade(NODE, form(reveal="1"), NODE_PICKS).answer == "`MulBackward0`"


def test_the_answer_texts_are_the_questions_answers():
    assert grade(SINGLE, form(reveal="1")).answer == "No"
    assert grade(MULTIPLE, form(reveal="1")).answer == "`a`; `b`"
    assert grade(NUMERIC, form(reveal="1")).answer == "-2.5"
    assert (
        grade(NODES, form(reveal="1"), NODES_PICKS).answer
        == "`AccumulateGrad(a)`, `AccumulateGrad(b)`"
    )


@pytest.mark.parametrize("attempt", ["x", "1.5", "one"])
def test_an_attempt_that_is_not_a_whole_number_is_refused(attempt):
    assert "attempt" in bad(NUMERIC, form(value="1", attempt=attempt))


def test_a_negative_or_huge_attempt_is_clamped_not_refused():
    assert grade(NUMERIC, form(value="1", attempt="-4")).answer is None  # as a first try
    assert grade(NUMERIC, form(value="1", attempt="9" * 50)).answer == "-2.5"


# ***** over-long fields *****


@pytest.mark.parametrize(
    ("question", "fields", "picks"),
    [
        (NUMERIC, {"value": "1" * (MAX_FIELD + 1)}, None),
        (NUMERIC, {"value": "1", "attempt": "0" * (MAX_FIELD + 1)}, None),
        (SINGLE, {"choice": "0" * (MAX_FIELD + 1)}, None),
        (MULTIPLE, {"choice": ["0", "1" * (MAX_FIELD + 1)]}, None),
        (NODE, {"node": "n" * (MAX_FIELD + 1)}, NODE_PICKS),
        (ORDER, {"rank-0": "1" * (MAX_FIELD + 1)}, None),
        (SINGLE, {"choice": "1", "reveal": "x" * (MAX_FIELD + 1)}, None),
    ],
)
def test_an_over_long_field_is_refused(question, fields, picks):
    assert f"longer than {MAX_FIELD}" in bad(question, form(**fields), picks)


@pytest.mark.parametrize(
    ("question", "name", "picks"),
    [
        (NUMERIC, "value", None),
        (NUMERIC, "attempt", None),
        (SINGLE, "choice", None),
        (NODE, "node", NODE_PICKS),
        (ORDER, "rank-0", None),
        (SINGLE, "reveal", None),
    ],
)
def test_a_file_sent_for_a_field_is_refused_as_not_text(question, name, picks):
    """A multipart form may send a file part under any name: Starlette hands it over as an
    UploadFile, which has no length to check and no text to grade."""
    fields = {"value": ["1"], "choice": ["0"], "node": ["n1"], name: [UploadFile(io.BytesIO(b"5"))]}
    assert f"the field {name!r} was sent as a file" in bad(question, Answers(fields), picks)


def test_a_field_at_the_limit_is_graded():
    value = " " * (MAX_FIELD - 4) + "-2.5"
    assert len(value) == MAX_FIELD
    assert grade(NUMERIC, form(value=value)).correct
