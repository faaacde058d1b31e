"""What a lesson is: its front matter as a validated model, and the questions it asks.

A lesson is one Markdown file in `lessons/` (app/lessons/source.py reads it). Its front matter
is YAML, checked by these pydantic models; `lesson_schema()` publishes them as a JSON Schema
(docs/lesson.schema.json, kept equal by a test). Steps are numbered from 1, as a learner sees
them in the player and in `#step=N` links.

Five kinds of question, told apart by `type`:

- `choice`: one right answer (or several, with `multiple: true`), feedback per choice;
- `numeric`: a number within `tolerance`;
- `node`: click the node in the graph (or pick it from a list): one node, or several with
  `multiple: true`;
- `order`: put items in order (the backward visits, say);
- any of them with `checkpoint: N` is a "predict the next step" check: playback pauses before
  step N, hides what step N would show, and plays it once the learner has committed.

A question may name a `fact` of the trace (app/lessons/facts.py): `gradtrace lessons check`
then proves the author's answer against the run itself.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

Slug = Annotated[str, Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=60)]
Step = Annotated[int, Field(ge=1, description="a step, numbered from 1 as the player shows it")]
Text = Annotated[str, Field(min_length=1, max_length=2000)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Question(_Strict):
    id: Slug = Field(description="unique in its lesson; what progress and grading refer to")
    prompt: Text = Field(description="plain text; `code` in backticks is shown as code")
    hint: Text | None = Field(None, description="shown after a wrong answer")
    explain: Text | None = Field(None, description="shown with the answer")
    step: Step | None = Field(None, description="the step that explains the answer (replayed)")
    checkpoint: Step | None = Field(
        None, description="predict the next step: playback pauses before this step until answered"
    )
    fact: str | None = Field(
        None, description="what the answer is of, in the trace (app/lessons/facts.py)"
    )


class Choice(_Strict):
    text: Text
    correct: bool = False
    feedback: Text | None = Field(None, description="why this choice is right, or what it mistakes")


class ChoiceQuestion(_Question):
    type: Literal["choice"]
    choices: list[Choice] = Field(min_length=2, max_length=12)
    multiple: bool = False

    @model_validator(mode="after")
    def _has_an_answer(self) -> ChoiceQuestion:
        right = sum(choice.correct for choice in self.choices)
        if right == 0:
            raise ValueError("no choice is marked `correct: true`")
        if right > 1 and not self.multiple:
            raise ValueError(f"{right} choices are correct: add `multiple: true`, or mark one")
        return self


class NumericQuestion(_Question):
    type: Literal["numeric"]
    answer: float
    tolerance: float = Field(1e-6, ge=0, description="|given − answer| ≤ tolerance is right")


class NodeQuestion(_Question):
    type: Literal["node"]
    view: Literal["tensors", "autograd"] = "autograd"
    answer: list[str] = Field(
        min_length=1,
        description="the nodes: a tensor's name (tensors view), a grad_fn's name, "
        "AccumulateGrad(a) for a leaf's, or an element id (n5)",
    )
    multiple: bool = False

    @model_validator(mode="after")
    def _one_unless_multiple(self) -> NodeQuestion:
        if len(self.answer) > 1 and not self.multiple:
            raise ValueError("several nodes answer it: add `multiple: true`")
        return self


class OrderQuestion(_Question):
    type: Literal["order"]
    answer: list[Text] = Field(min_length=2, max_length=12, description="the items, in order")

    @model_validator(mode="after")
    def _distinct(self) -> OrderQuestion:
        if len(set(self.answer)) != len(self.answer):
            raise ValueError("an item appears twice: the order would be ambiguous")
        return self


QUESTION_CLASSES = (ChoiceQuestion, NumericQuestion, NodeQuestion, OrderQuestion)
# each class's `type`: what a question's front matter says it is, and pydantic's tag for it
QUESTION_TYPES = tuple(get_args(c.model_fields["type"].annotation)[0] for c in QUESTION_CLASSES)
Question = Annotated[Union[QUESTION_CLASSES], Field(discriminator="type")]  # noqa: UP007


class Override(_Strict):
    """New words for one step, found by its number or by the code it runs."""

    step: Step | None = None
    span: str | None = Field(
        None, min_length=1, description="the source text of a step's span (its first step)"
    )
    text: Text

    @model_validator(mode="after")
    def _one_key(self) -> Override:
        if (self.step is None) == (self.span is None):
            raise ValueError("give either `step` or `span`")
        return self


class Lesson(_Strict):
    title: Annotated[str, Field(min_length=1, max_length=120)]
    summary: Annotated[str, Field(min_length=1, max_length=400)]
    order: int = Field(ge=0, description="lessons are listed by it")
    snippet: Annotated[str, Field(min_length=1, max_length=20_000)]
    ends_with: Literal["ok", "error"] = Field(
        "ok", description="how the run should end: `error` for a lesson about an error it raises"
    )
    narration: list[Override] = []
    questions: list[Question] = []

    @model_validator(mode="after")
    def _unique_ids(self) -> Lesson:
        seen: set[str] = set()
        for question in self.questions:
            if question.id in seen:
                raise ValueError(f"two questions have the id {question.id!r}")
            seen.add(question.id)
        return self


def lesson_schema() -> dict:
    """The front matter's JSON Schema, as published in docs/lesson.schema.json."""
    schema = Lesson.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gradtrace lesson front matter",
        **schema,
    }
