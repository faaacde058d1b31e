"""A question against its trace: the nodes a learner may pick, and whether its answer is true.

Both lessons and generated checks ask their questions of one trace; this is where the two
meet it. `picks` lists a node question's graph (the nodes drawn by the step it is asked at) and
resolves its answer to element ids; `disagreement` holds an answer to the question's `fact`.
"""

from __future__ import annotations

import math

from pydantic import TypeAdapter

from app.lessons import generated
from app.lessons.facts import Fact, FactError, TraceFacts
from app.lessons.grading import NodePicks, answer_text
from app.lessons.model import (
    ChoiceQuestion,
    NodeQuestion,
    NumericQuestion,
    OrderQuestion,
    Question,
)

QUESTION = TypeAdapter(Question)


def asked_at(question, facts: TraceFacts) -> int:
    """The step a question is asked at: before its checkpoint, else when the run has ended."""
    last = len(facts.steps)
    if question.checkpoint is not None:  # one past the end is `lessons check`'s to report
        return min(max(question.checkpoint - 1, 1), last)
    return last


def picks(question: NodeQuestion, facts: TraceFacts) -> NodePicks:
    """The nodes of the question's view shown at the step it is asked at (a training loop's
    earlier passes are hidden by then), and its answer's. Raises FactError when an answer names
    no node, or several, or one not shown yet."""
    step = asked_at(question, facts)
    shown = facts.shown(question.view, step)
    names: dict[str, str] = {}
    if question.view == "autograd":
        for nid in facts.trace["nodes"]:
            if nid in shown:
                names[nid] = facts.node_name(nid)
    else:
        for tid in facts.trace["tensors"]:
            if tid in shown:
                names[tid] = facts.labels[tid]
    within = facts.pass_at(step)
    right = frozenset(facts.resolve_node(a, question.view, within) for a in question.answer)
    missing = right - names.keys()
    if missing:
        raise FactError(f"{', '.join(sorted(missing))} is not drawn at step {step}")
    return NodePicks(names, right)


def disagreement(question, facts: TraceFacts) -> str | None:
    """Why the question's answer is not what its fact says, or None when they agree.
    Raises FactError when the fact cannot be read from this trace."""
    if question.fact is None:
        return None
    fact = facts.read(question.fact)
    says = _says(fact)
    if isinstance(question, NumericQuestion):
        if not isinstance(fact.value, int | float) or isinstance(fact.value, bool):
            return f"`{question.fact}` is {says}, not one number: ask it as another type"
        if abs(fact.value - question.answer) > max(question.tolerance, 1e-9):
            return _says_not(fact, answer_text(question), says)
        return None
    if isinstance(question, ChoiceQuestion):
        return _choice_disagreement(question, fact, says)
    if isinstance(question, NodeQuestion):
        within = facts.pass_at(asked_at(question, facts))
        given = {facts.resolve_node(a, question.view, within) for a in question.answer}
        wanted = set((fact.elements or {}).get(question.view, ()))
        if not wanted:
            return f"`{question.fact}` is not about the {question.view} view's nodes"
        if given != wanted:
            return _says_not(fact, answer_text(question), says)
        return None
    if isinstance(question, OrderQuestion):
        if not isinstance(fact.value, tuple):
            return f"`{question.fact}` is not an order"
        nodes = (fact.elements or {}).get("autograd")
        if nodes:  # any name of each node will do: `MulBackward0` or `MulBackward0(c)`
            within = facts.pass_of(nodes[0])
            given = tuple(facts.resolve_node(item, "autograd", within) for item in question.answer)
            agree = given == tuple(nodes)
        else:
            agree = tuple(question.answer) == fact.value
        return None if agree else _says_not(fact, answer_text(question), says)
    return None


def _choice_disagreement(question: ChoiceQuestion, fact: Fact, says: str) -> str | None:
    right = [_plain(c.text) for c in question.choices if c.correct]
    value = fact.value
    if isinstance(value, bool):
        yes = [text.split()[0].lower().strip(",.:") in ("yes", "true") for text in right]
        if len(yes) != 1 or yes[0] != value:
            return _says_not(fact, ", ".join(right), says)
        return None
    if isinstance(value, frozenset):
        offered = {_plain(c.text) for c in question.choices}
        if set(right) != value & offered or not value & offered:
            return _says_not(fact, ", ".join(right), says)
        return None
    if isinstance(value, int | float):
        try:
            numbers = [float(text) for text in right]
        except ValueError:
            return f"`{question.fact}` is a number; the correct choice should be one"
        if len(numbers) != 1 or not math.isclose(numbers[0], value, rel_tol=1e-6, abs_tol=1e-9):
            return _says_not(fact, ", ".join(right), says)
        return None
    return f"`{question.fact}` is {says}: ask it as another type"


def _plain(text: str) -> str:
    return text.strip().strip("`").strip()


def _says(fact: Fact) -> str:
    value = fact.value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, frozenset):
        return ", ".join(sorted(value)) or "none"
    if isinstance(value, tuple):
        return " → ".join(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _says_not(fact: Fact, answer: str, says: str) -> str:
    at = f" at step {fact.step}" if fact.step else ""
    return f"says {fact.subject} is {answer}; the trace says {says}{at}"


def problems(questions: list, facts: TraceFacts) -> list[tuple[int, str | None, str]]:
    """Where a lesson's questions do not hold against the run, as `gradtrace lessons check`
    reports it: (index of the question, the key at fault or None, what is wrong)."""
    found = []
    last = f"the run has {len(facts.steps)} steps"
    for index, question in enumerate(questions):
        number = index + 1
        for key in ("step", "checkpoint"):
            value = getattr(question, key)
            if value is not None and not facts.has_step(value):
                found.append((index, key, f"question {number}'s {key} is step {value}; {last}"))
        try:
            if isinstance(question, NodeQuestion):
                picks(question, facts)
            why = disagreement(question, facts)
        except FactError as error:
            found.append((index, None, f"question {number}: {error}"))
            continue
        if why is not None:
            found.append((index, "answer", f"question {number} {why}"))
    return found


def context(trace: dict, questions: list[dict] | None = None) -> dict:
    """A quiz for `trace`, as JSON-able data: `questions` (a lesson's, as its front matter
    gives them) or, when None, the generated ones; and each node question's picks, or the
    reason it cannot be asked of this trace. What a render worker hands the server.

    A lesson's questions are asked only if every one holds against the run (`problems`):
    else none is, and `refused` says why, so that a lesson never grades a wrong answer right."""
    facts = TraceFacts(trace)
    if questions is None:
        asked = generated.questions(trace, facts)
    else:
        asked = [QUESTION.validate_python(question) for question in questions]
        refused = [message for _, _, message in problems(asked, facts)]
        if refused:
            return {"questions": [], "picks": {}, "steps": len(facts.steps), "refused": refused}
    picked: dict[str, dict] = {}
    for question in asked:
        if isinstance(question, NodeQuestion):
            try:
                found = picks(question, facts)
            except FactError as error:
                picked[question.id] = {"error": str(error)}
                continue
            picked[question.id] = {"names": dict(found.names), "right": sorted(found.right)}
    return {
        "questions": [question.model_dump(mode="json") for question in asked],
        "picks": picked,
        "steps": len(facts.steps),
    }
