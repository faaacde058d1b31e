"""`gradtrace lessons check`: a lesson is only as good as its agreement with its own run.

A lesson file is read (its front matter validated, app/lessons/source.py), its snippet is run
in the sandbox as the site would run it, and then everything it says about the run is held to
the trace: each narration override's step or span exists, each question's `step` and
`checkpoint` exist, each `#step=N` link in the prose points at a step, each node answer names
one node that is drawn when the question is asked, and each answer agrees with its `fact`. Each
problem comes with its line, and says what to write instead where it can.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.lessons import quiz
from app.lessons.facts import TraceFacts
from app.lessons.source import BadLesson, LessonFile, Problem, read


@dataclass
class Report:
    path: Path
    problems: list[Problem] = field(default_factory=list)
    steps: int = 0

    def lines(self) -> list[str]:
        return [f"{self.path}:{p.line}: {p.message}" for p in sorted(self.problems, key=_line)]


def check_file(path: Path, run: Callable[[str], dict]) -> Report:
    """Every problem of the lesson at `path`; `run(code)` gives a snippet's trace."""
    try:
        lesson = read(path)
    except BadLesson as bad:
        return Report(path, bad.problems)
    return check(lesson, run(lesson.lesson.snippet))


def check(lesson: LessonFile, trace: dict) -> Report:
    """Every problem of a lesson read, against the trace of its snippet."""
    report = Report(lesson.path)
    problem = report.problems.append
    outcome = trace["outcome"]
    snippet_line = lesson.lines.get(("snippet",), 1)
    expected = lesson.lesson.ends_with
    if outcome["status"] != expected:
        why = outcome.get("message") or outcome["status"]
        if expected == "ok":
            problem(Problem(snippet_line, f"the snippet does not run to its end: {why}"))
        else:
            message = f"the snippet should end with an error (`ends_with: error`); it ends {why}"
            problem(Problem(snippet_line, message))
    facts = TraceFacts(trace)
    report.steps = len(facts.steps)
    last = f"the run has {len(facts.steps)} steps"
    for index, override in enumerate(lesson.lesson.narration):
        where = lesson.lines.get(("narration", index), snippet_line)
        if override.step is not None and not facts.has_step(override.step):
            problem(Problem(where, f"narration {index + 1} is for step {override.step}; {last}"))
        if override.span is not None and facts.span_step(override.span) is None:
            problem(Problem(where, f"narration {index + 1}: no step runs `{override.span}`"))
    for line, step in lesson.step_links:
        if not facts.has_step(step):
            problem(Problem(line, f"the link to step {step} goes nowhere; {last}"))
    for index, key, message in quiz.problems(lesson.lesson.questions, facts):
        where = lesson.lines.get(("questions", index), snippet_line)
        at = lesson.lines.get(("questions", index, key), where) if key else where
        problem(Problem(at, message))
    return report


def _line(problem: Problem) -> int:
    return problem.line
