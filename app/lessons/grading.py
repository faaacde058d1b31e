"""Grading a quick check on the server: a form's fields in, feedback out.

Attempts are unlimited. A wrong answer gets what its choice mistakes (when the author said),
the hint, and the step that explains it to replay; from the second wrong answer on (or on
asking) the answer is shown with its explanation. The form says how many
attempts came before (`attempt`): there are no accounts, so the browser keeps count.

Fields, per question type: `choice` (indexes, from 0), `value` (a number), `node` (element
ids of the graph), `rank-K` (the position, from 1, given to item K as the form listed them).
Anything else is a `BadAnswer`: the route answers 422 with its message.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.lessons.model import ChoiceQuestion, NodeQuestion, NumericQuestion, OrderQuestion

MAX_FIELD = 200  # characters of one submitted value


class BadAnswer(ValueError):
    """The form cannot be graded: a missing field, not a number, a choice that does not exist."""


@dataclass(frozen=True)
class Feedback:
    correct: bool
    notes: tuple[str, ...]  # inline Markdown: what the chosen answers mistake, or confirm
    hint: str | None = None
    answer: str | None = None  # inline Markdown, once it is shown
    explain: str | None = None
    step: int | None = None  # the step to replay
    problem: str | None = None  # why the form could not be graded (a 422)


@dataclass(frozen=True)
class Answers:
    """A submitted form: each field's values, in order (a checkbox group sends several). Every
    field is text: a file part (a multipart form may send one under any name) is a BadAnswer."""

    fields: Mapping[str, Sequence[str]]

    def all(self, name: str) -> list[str]:
        values = list(self.fields.get(name, ()))
        if any(not isinstance(value, str) for value in values):
            raise BadAnswer(f"the field {name!r} was sent as a file: an answer is text")
        if any(len(value) > MAX_FIELD for value in values):
            raise BadAnswer(f"the field {name!r} is longer than {MAX_FIELD} characters")
        return values

    def one(self, name: str, missing: str) -> str:
        values = self.all(name)
        if len(values) != 1 or not values[0].strip():
            raise BadAnswer(missing)
        return values[0].strip()

    def attempt(self) -> int:
        values = self.all("attempt")
        try:
            return max(0, min(int(values[0]), 1000)) if values else 0
        except ValueError:
            raise BadAnswer("`attempt` is not a whole number") from None

    def revealing(self) -> bool:
        return bool(self.all("reveal"))


@dataclass(frozen=True)
class NodePicks:
    """A node question's graph: the element ids a learner may pick, with the names the list
    shows, and the ones that answer it (app/lessons/quiz.py resolves them from the trace)."""

    names: Mapping[str, str]  # element id → its name
    right: frozenset[str]


def grade(question, answers: Answers, picks: NodePicks | None = None) -> Feedback:
    """Feedback on `answers` to `question`; a node question needs its `picks`."""
    if answers.revealing():
        return _reveal(question, correct=False, notes=())
    if isinstance(question, ChoiceQuestion):
        correct, notes = _grade_choice(question, answers)
    elif isinstance(question, NumericQuestion):
        correct, notes = _grade_numeric(question, answers)
    elif isinstance(question, NodeQuestion):
        correct, notes = _grade_node(question, answers, picks)
    elif isinstance(question, OrderQuestion):
        correct, notes = _grade_order(question, answers)
    else:
        raise TypeError(f"no grading for {type(question).__name__}")
    if correct:
        return _reveal(question, correct=True, notes=notes)
    if answers.attempt() >= 1:  # the second wrong answer: the answer, with why
        return _reveal(question, correct=False, notes=notes)
    return Feedback(False, tuple(notes), hint=question.hint, step=question.step)


def answer_text(question) -> str:
    """The right answer, as the answer key and the feedback write it."""
    if isinstance(question, ChoiceQuestion):
        return "; ".join(c.text for c in question.choices if c.correct)
    if isinstance(question, NumericQuestion):
        return _number(question.answer)
    if isinstance(question, NodeQuestion):
        return ", ".join(f"`{name}`" for name in question.answer)
    return " → ".join(f"`{item}`" for item in question.answer)


def shuffled(question: OrderQuestion) -> list[str]:
    """An order question's items as the form lists them: a fixed shuffle, never the answer."""
    items = list(question.answer)
    rng = random.Random(question.id)
    while items == list(question.answer):
        rng.shuffle(items)
    return items


def _reveal(question, *, correct: bool, notes) -> Feedback:
    return Feedback(
        correct,
        tuple(notes),
        answer=answer_text(question),
        explain=question.explain,
        step=question.step,
    )


def _grade_choice(question: ChoiceQuestion, answers: Answers) -> tuple[bool, list[str]]:
    picked = []
    for value in answers.all("choice"):
        try:
            index = int(value)
        except ValueError:
            raise BadAnswer(f"the choice {value!r} is not a number") from None
        if not 0 <= index < len(question.choices):
            raise BadAnswer(f"there is no choice {index}")
        picked.append(index)
    if not picked:
        raise BadAnswer("pick an answer first")
    if len(picked) > 1 and not question.multiple:
        raise BadAnswer("this question takes one answer")
    chosen = set(picked)
    right = {i for i, choice in enumerate(question.choices) if choice.correct}
    notes = [question.choices[i].feedback for i in sorted(chosen) if question.choices[i].feedback]
    if question.multiple and chosen != right and chosen < right:
        notes.append(f"Right so far, but {len(right - chosen)} more belong.")
    return chosen == right, [note for note in notes if note]


def _grade_numeric(question: NumericQuestion, answers: Answers) -> tuple[bool, list[str]]:
    text = answers.one("value", "write a number first")
    try:
        given = float(text.replace("−", "-"))
    except ValueError:
        raise BadAnswer(f"{text!r} is not a number: write one like 5, -0.25 or 1e-3") from None
    if not math.isfinite(given):
        raise BadAnswer("write a finite number")
    if abs(given - question.answer) <= question.tolerance:
        return True, []
    return False, [f"{_number(given)} is not it."]


def _grade_node(
    question: NodeQuestion, answers: Answers, picks: NodePicks | None
) -> tuple[bool, list[str]]:
    if picks is None:
        raise TypeError("a node question is graded against its graph's picks")
    picked = answers.all("node")
    if not picked:
        raise BadAnswer("pick a node first: click it in the graph, or choose it from the list")
    if len(picked) > 1 and not question.multiple:
        raise BadAnswer("this question takes one node")
    unknown = [value for value in picked if value not in picks.names]
    if unknown:
        raise BadAnswer(f"{unknown[0]!r} is not a node of this graph")
    right, chosen = picks.right, set(picked)
    notes = [f"`{picks.names[e]}` is not one of them." for e in sorted(chosen - right)]
    if chosen < right:
        notes.append(f"Right so far, but {len(right - chosen)} more belong.")
    return chosen == right, notes


def _grade_order(question: OrderQuestion, answers: Answers) -> tuple[bool, list[str]]:
    items = shuffled(question)
    ranks = []
    for k in range(len(items)):
        text = answers.one(f"rank-{k}", "give every item a position")
        try:
            ranks.append(int(text))
        except ValueError:
            raise BadAnswer(f"the position {text!r} is not a whole number") from None
    if sorted(ranks) != list(range(1, len(items) + 1)):
        raise BadAnswer(f"give each position from 1 to {len(items)} to exactly one item")
    given = [item for _, item in sorted(zip(ranks, items, strict=True))]
    first_wrong = next(
        (i for i, (a, b) in enumerate(zip(given, question.answer, strict=True)) if a != b), None
    )
    if first_wrong is None:
        return True, []
    return False, [f"Position {first_wrong + 1} is not `{given[first_wrong]}`."]


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(float(x))
