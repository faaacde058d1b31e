"""What a question's form shows, as plain data for templates/_question.html.

One `Asked` per question of a quiz (a lesson's, or a trace's generated ones): the question, its
options as the form lists them (choices; the nodes to pick, by name; the order items, shuffled)
and, after a submission, its feedback. Grading (app/lessons/grading.py) reads the same picks
and the same shuffle, so what is graded is what was shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, TypeAdapter, ValidationError

from app.lessons.grading import Feedback, NodePicks, shuffled
from app.lessons.model import ChoiceQuestion, NodeQuestion, OrderQuestion
from app.lessons.quiz import QUESTION


class _Picked(BaseModel):
    """A node question's picks, as app.lessons.quiz.context writes them."""

    names: dict[str, str]  # element id → the name the list shows
    right: list[str]


class _Unpicked(BaseModel):
    error: str  # why the question cannot be asked of this trace


_PICKS = TypeAdapter(_Picked | _Unpicked)


@dataclass(frozen=True)
class Asked:
    question: object
    options: tuple[tuple[str, str], ...]  # (value, text) as the form lists them
    picks: NodePicks | None = None
    unavailable: str | None = None  # why it cannot be asked of this trace
    feedback: Feedback | None = None
    attempt: int = 0  # wrong answers so far, as the form said

    @property
    def next_attempt(self) -> int:
        """The wrong answers before the next submission (a form that was not graded: none)."""
        f = self.feedback
        wrong = f is not None and not f.correct and f.problem is None
        return self.attempt + 1 if wrong else self.attempt

    @property
    def kind(self) -> str:
        return "predict" if self.question.checkpoint else self.question.type


def ask(quiz: dict) -> list[Asked]:
    """Every question of a quiz context (app.lessons.quiz.context), ready for its form. The
    context is a render worker's reply, so it is checked, not trusted: what does not read as a
    question is left out."""
    picks = quiz.get("picks")
    picks = picks if isinstance(picks, dict) else {}
    asked = []
    for item in quiz.get("questions") or ():
        try:
            question = QUESTION.validate_python(item)
        except ValidationError:
            continue
        asked.append(_asked(question, picks))
    return asked


def _asked(question, all_picks: dict) -> Asked:
    if isinstance(question, ChoiceQuestion):
        options = tuple((str(i), choice.text) for i, choice in enumerate(question.choices))
        return Asked(question, options)
    if isinstance(question, OrderQuestion):
        return Asked(question, tuple((str(i), item) for i, item in enumerate(shuffled(question))))
    if isinstance(question, NodeQuestion):
        try:  # what a render worker handed back is checked like any reply of it
            found = _PICKS.validate_python(all_picks.get(question.id))
        except ValidationError:
            found = _Unpicked(error="its graph was not worked out")
        if isinstance(found, _Unpicked):
            return Asked(question, (), unavailable=found.error)
        picks = NodePicks(found.names, frozenset(found.right))
        options = tuple(sorted(picks.names.items(), key=lambda item: item[1]))
        return Asked(question, options, picks)
    return Asked(question, ())
