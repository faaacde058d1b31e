"""Quiz me on every playground example (the seed articles' snippets among them): each generated
question agrees with the fact it was made from, can be asked of its trace, and is graded right
when given its own answer and wrong when given another."""

from __future__ import annotations

import pytest

from app.examples import EXAMPLES
from app.lessons import forms, quiz
from app.lessons.facts import TraceFacts
from app.lessons.grading import Answers, grade
from app.lessons.model import ChoiceQuestion, NodeQuestion, NumericQuestion, OrderQuestion
from engine.tracer import trace_snippet


@pytest.fixture(scope="module", params=EXAMPLES, ids=lambda e: e.slug)
def example(request):
    trace = trace_snippet(request.param.code)
    return trace, quiz.context(trace)


def right_form(asked: forms.Asked) -> dict[str, list[str]]:
    question = asked.question
    if isinstance(question, ChoiceQuestion):
        return {"choice": [str(i) for i, c in enumerate(question.choices) if c.correct]}
    if isinstance(question, NumericQuestion):
        return {"value": [repr(question.answer)]}
    if isinstance(question, NodeQuestion):
        return {"node": sorted(asked.picks.right)}
    assert isinstance(question, OrderQuestion)
    position = {item: rank for rank, item in enumerate(question.answer, 1)}
    return {f"rank-{value}": [str(position[text])] for value, text in asked.options}


def wrong_form(asked: forms.Asked) -> dict[str, list[str]] | None:
    question = asked.question
    if isinstance(question, ChoiceQuestion):
        wrong = [str(i) for i, c in enumerate(question.choices) if not c.correct]
        return {"choice": wrong[:1]} if wrong else None
    if isinstance(question, NumericQuestion):
        return {"value": [repr(question.answer + 1)]}
    if isinstance(question, NodeQuestion):
        others = sorted(set(asked.picks.names) - asked.picks.right)
        return {"node": others[:1]} if others else None
    # the order as the form lists it, never the answer (see grading.shuffled)
    return {f"rank-{value}": [str(rank)] for rank, (value, _) in enumerate(asked.options, 1)}


def test_every_generated_question_agrees_with_its_trace(example):
    trace, context = example
    facts = TraceFacts(trace)
    for question in [quiz.QUESTION.validate_python(q) for q in context["questions"]]:
        assert question.fact, f"{question.id} says nothing the trace could prove"
        assert quiz.disagreement(question, facts) is None, question.id


def test_every_generated_question_grades_its_own_answer_right_and_another_wrong(example):
    _, context = example
    for asked in forms.ask(context):
        assert asked.unavailable is None, asked.question.id
        assert grade(asked.question, Answers(right_form(asked)), asked.picks).correct
        wrong = wrong_form(asked)
        if wrong is not None:
            assert not grade(asked.question, Answers(wrong), asked.picks).correct


def test_a_run_with_a_backward_gets_questions_of_several_kinds():
    trace = trace_snippet(EXAMPLES[0].code)  # two paths into a: d = a*b + a
    kinds = {asked.kind for asked in forms.ask(quiz.context(trace))}
    assert {"choice", "numeric", "predict", "order"} <= kinds


@pytest.mark.parametrize(
    "reply",
    [
        {},
        {"questions": None, "picks": None},
        {"questions": [{"type": "essay"}, 3, "x"], "picks": []},
        {"questions": [{"type": "node", "id": "n", "prompt": "p", "answer": ["a"]}], "picks": {}},
        {
            "questions": [{"type": "node", "id": "n", "prompt": "p", "answer": ["a"]}],
            "picks": {"n": {"names": ["not", "a", "mapping"], "right": "n1"}},
        },
    ],
)
def test_a_render_workers_quiz_reply_is_checked_not_trusted(reply):
    asked = forms.ask(reply)  # never raises
    assert all(a.question.type == "node" for a in asked)
    assert all(a.unavailable and a.picks is None for a in asked)


def test_a_good_reply_survives_the_check():
    trace = trace_snippet(EXAMPLES[0].code)
    context = quiz.context(trace)
    assert [a.question.id for a in forms.ask(context)] == [q["id"] for q in context["questions"]]
