"""`gradtrace lessons check`: what a lesson says is held to the trace of its own snippet."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import execution
from app.cli import main
from app.lessons.check import check, check_file
from app.lessons.facts import TraceFacts
from engine.tracer import trace_snippet
from tests.app.lessons.seed import SEED, line_of, parsed, replaced

ROOT = Path(__file__).resolve().parents[3]
BUILT_IN = sorted((ROOT / "lessons").glob("*.md"))


def problems(text: str) -> list[tuple[int, str]]:
    lesson = parsed(text)
    report = check(lesson, trace_snippet(lesson.lesson.snippet))
    return [(p.line, p.message) for p in report.problems]


@pytest.fixture(scope="module")
def seed_facts() -> TraceFacts:
    return TraceFacts(trace_snippet(parsed().lesson.snippet))


def test_the_seed_lesson_has_no_problems(seed_facts):
    lesson = parsed()
    report = check(lesson, trace_snippet(lesson.lesson.snippet))
    assert report.problems == []
    assert report.steps == len(seed_facts.steps)


def test_a_wrong_numeric_answer_is_reported_with_the_traces_number_and_step(seed_facts):
    text = replaced("answer: 5", "answer: 4")
    trace = seed_facts.trace
    a = next(tid for tid, t in trace["tensors"].items() if t["label"] == "a")
    accumulate = [e for e in trace["events"] if e["kind"] == "accumulate" and e["tensor"] == a]
    value = accumulate[-1]["grad"]
    step = seed_facts.step_of(accumulate[-1]["seq"])
    assert value == 5.0  # ∂(a·b + a)/∂a = b + 1 at b = 4
    shown = int(value) if float(value).is_integer() else value
    message = f"question 1 says a.grad is 4; the trace says {shown} at step {step}"
    assert problems(text) == [(line_of(text, "answer: 4"), message)]


def test_a_numeric_answer_within_its_tolerance_agrees():
    text = replaced("answer: 5", "answer: 5.01\n    tolerance: 0.02")
    assert problems(text) == []
    text = replaced("answer: 5", "answer: 5.01\n    tolerance: 0.001")
    assert [line for line, _ in problems(text)] == [line_of(text, "answer: 5.01")]


def test_a_wrong_order_is_reported(seed_facts):
    text = replaced(
        "answer: [AddBackward0, MulBackward0, AccumulateGrad(a), AccumulateGrad(b)]",
        "answer: [AddBackward0, MulBackward0, AccumulateGrad(b), AccumulateGrad(a)]",
    )
    [(line, message)] = problems(text)
    assert line == line_of(text, "answer: [AddBackward0")
    assert message.startswith("question 4 says the backward order is")
    assert " → ".join(seed_facts.backward_order().value) in message


def test_a_wrong_choice_is_reported():
    text = replaced('{text: "`b`", correct: true}', '{text: "`b`"}')
    [(line, message)] = problems(text)
    assert line == line_of(text, "id: leaves")
    assert message.startswith("question 3 ")
    assert "the trace says a, b" in message  # the trace's leaves, against the author's `a`


def test_an_unknown_fact_is_reported_at_its_question():
    text = replaced("fact: leaves", "fact: velocity")
    [(line, message)] = problems(text)
    assert line == line_of(text, "id: leaves")
    assert "'velocity' is not a fact" in message


# ***** steps that do not exist *****


def test_a_narration_for_a_step_that_does_not_exist(seed_facts):
    last = len(seed_facts.steps)
    text = replaced(
        '  - span: "a*b + a"\n', f'  - step: {last + 1}\n    text: Late.\n  - span: "a*b + a"\n'
    )
    assert problems(text) == [
        (
            line_of(text, f"step: {last + 1}"),
            f"narration 1 is for step {last + 1}; the run has {last} steps",
        )
    ]
    assert (
        problems(
            replaced(
                '  - span: "a*b + a"\n', f'  - step: {last}\n    text: Last.\n  - span: "a*b + a"\n'
            )
        )
        == []
    )


def test_a_question_step_that_does_not_exist(seed_facts):
    last = len(seed_facts.steps)
    text = replaced("    step: 8\n", f"    step: {last + 1}\n")
    assert problems(text) == [
        (
            line_of(text, f"step: {last + 1}"),
            f"question 1's step is step {last + 1}; the run has {last} steps",
        )
    ]


def test_a_checkpoint_that_does_not_exist_on_a_numeric_question(seed_facts):
    last = len(seed_facts.steps)
    text = replaced("    step: 8\n", f"    step: 8\n    checkpoint: {last + 5}\n")
    assert problems(text) == [
        (
            line_of(text, f"checkpoint: {last + 5}"),
            f"question 1's checkpoint is step {last + 5}; the run has {last} steps",
        )
    ]


def test_a_checkpoint_that_does_not_exist_on_a_node_question(seed_facts):
    last = len(seed_facts.steps)
    text = replaced("checkpoint: 7", f"checkpoint: {last + 5}")
    found = problems(text)
    message = f"question 2's checkpoint is step {last + 5}; the run has {last} steps"
    assert (line_of(text, f"checkpoint: {last + 5}"), message) in found


def test_a_link_to_a_step_that_does_not_exist(seed_facts):
    last = len(seed_facts.steps)
    text = replaced("(#step=8)", f"(#step={last + 1})")
    assert problems(text) == [
        (
            line_of(text, "See [step"),
            f"the link to step {last + 1} goes nowhere; the run has {last} steps",
        )
    ]


def test_a_span_no_step_runs():
    text = replaced('span: "a*b + a"', 'span: "a*c"')
    assert problems(text) == [(line_of(text, 'span: "a*c"'), "narration 1: no step runs `a*c`")]


def test_a_span_some_step_runs_is_fine():
    assert problems(replaced('span: "a*b + a"', 'span: "a*b"')) == []


# ***** node answers *****


def test_a_node_answer_naming_no_node():
    text = replaced("answer: [MulBackward0]", "answer: [DivBackward0]")
    [(line, message)] = problems(text)
    assert line == line_of(text, "id: next")
    assert message.startswith("question 2: no node is named 'DivBackward0'")


TWO_MULS = """\
---
title: Two products
summary: Two MulBackward0 nodes.
order: 2
snippet: |
  import torch
  a = torch.tensor(3.0, requires_grad=True)
  b = torch.tensor(4.0, requires_grad=True)
  c = a * b
  d = c * a
  d.backward()
questions:
  - id: first
    type: node
    prompt: Which node runs first?
    answer: [MulBackward0]
    fact: next-backward after 5
---
Two products.
"""


def test_a_node_answer_naming_several_nodes():
    [(line, message)] = problems(TWO_MULS)
    assert line == line_of(TWO_MULS, "id: first")
    assert message.startswith("question 1: 'MulBackward0' names 2 nodes: write one of")


def test_a_node_answer_that_names_one_of_several_by_its_output_agrees():
    # d = c * a is the root: backward starts at the MulBackward0 that made d
    text = replaced("answer: [MulBackward0]", "answer: [MulBackward0(d)]", TWO_MULS)
    assert problems(text) == []


def test_a_node_answer_not_drawn_yet_when_asked():
    # asked before step 2 (at step 1), when only `a` exists: b's accumulator is not drawn
    text = replaced("checkpoint: 7", "checkpoint: 2")
    text = replaced("answer: [MulBackward0]", "answer: [AccumulateGrad(b)]", text)
    found = problems(text)
    assert any(
        line == line_of(text, "id: next") and "not drawn" in message for line, message in found
    ), found


# ***** how the snippet ends *****

FAILING = replaced(
    "  print(a.grad.item(), b.grad.item())\n",
    "  print(a.grad.item(), b.grad.item())\n  raise ValueError('boom')\n",
)


def test_a_snippet_that_fails_is_reported_at_the_snippet():
    found = problems(FAILING)
    assert found == [(line_of(FAILING, "snippet: |"), "the snippet does not run to its end: boom")]


def test_ends_with_error_accepts_a_snippet_that_fails():
    assert problems(replaced("order: 1\n", "order: 1\nends_with: error\n", FAILING)) == []


def test_ends_with_error_refuses_a_snippet_that_runs_to_its_end():
    text = replaced("order: 1\n", "order: 1\nends_with: error\n")
    [(line, message)] = problems(text)
    assert line == line_of(text, "snippet: |")
    assert "should end with an error" in message and "ends ok" in message


def test_check_file_reports_a_broken_file_without_running_it(tmp_path):
    path = tmp_path / "broken.md"
    path.write_text(replaced("type: order", "type: essay"), encoding="utf-8")

    def run(code: str) -> dict:
        raise AssertionError("a lesson that does not read is not run")

    report = check_file(path, run)
    assert [p.line for p in report.problems] == [line_of(path.read_text(), "id: order")]
    assert report.lines()[0].startswith(f"{path}:{report.problems[0].line}: ")
    assert "essay" in report.lines()[0]


# ***** the command *****


def test_the_cli_exits_0_for_a_clean_lesson(tmp_path, capsys):
    path = tmp_path / "two-paths.md"
    path.write_text(SEED, encoding="utf-8")
    assert main(["lessons", "check", str(path)]) == 0
    out = capsys.readouterr().out
    steps = len(TraceFacts(trace_snippet(parsed().lesson.snippet)).steps)
    assert f"{path}: ok ({steps} steps)" in out


def test_the_cli_exits_1_and_prints_file_line_message_for_problems(tmp_path, capsys):
    (tmp_path / "a-good.md").write_text(SEED, encoding="utf-8")
    bad = tmp_path / "b-bad.md"
    text = replaced("answer: 5", "answer: 4")
    bad.write_text(text, encoding="utf-8")
    assert main(["lessons", "check", str(tmp_path)]) == 1  # a folder: every *.md in it
    captured = capsys.readouterr()
    assert f"{bad}:{line_of(text, 'answer: 4')}: question 1 says a.grad is 4;" in captured.out
    assert f"{tmp_path / 'a-good.md'}: ok" in captured.out
    assert "1 of 2 lessons have problems" in captured.out + captured.err


def test_the_cli_exits_2_when_there_are_no_lesson_files(tmp_path, capsys):
    assert main(["lessons", "check", str(tmp_path)]) == 2
    assert "no lesson files" in capsys.readouterr().err


# ***** the built-in lessons *****


@pytest.mark.parametrize("path", BUILT_IN, ids=[p.name for p in BUILT_IN])
def test_every_built_in_lesson_checks_clean(path):
    report = check_file(path, execution.run_snippet)
    assert report.lines() == []
    assert report.steps > 0


def test_there_are_built_in_lessons():
    assert BUILT_IN, "lessons/ has no *.md"
