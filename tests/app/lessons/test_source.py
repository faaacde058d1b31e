"""Reading a lesson file: a good one parses; a broken one is reported at the line to fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.lessons.model import ChoiceQuestion, NodeQuestion, NumericQuestion, lesson_schema
from app.lessons.source import BadLesson, read
from tests.app.lessons.seed import SEED, line_of, parsed, replaced

ROOT = Path(__file__).resolve().parents[3]


def problems_of(text: str, name: str = "seed-lesson.md") -> list:
    with pytest.raises(BadLesson) as raised:
        parsed(text, name)
    assert raised.value.problems, "BadLesson without a problem"
    return raised.value.problems


def only_problem(text: str):
    problems = problems_of(text)
    assert len(problems) == 1, problems
    return problems[0]


# ***** a good lesson *****


def test_the_seed_lesson_parses_into_its_model_and_its_prose():
    found = parsed()
    lesson = found.lesson
    assert found.slug == "seed-lesson"
    assert lesson.title == "Two paths into a"
    assert lesson.order == 1
    assert lesson.snippet.startswith("import torch\na = torch.tensor(3.0")
    assert [q.id for q in lesson.questions] == ["grad-a", "next", "leaves", "order"]
    assert [q.type for q in lesson.questions] == ["numeric", "node", "choice", "order"]
    numeric, node, choice, _ = lesson.questions
    assert isinstance(numeric, NumericQuestion) and numeric.answer == 5 and numeric.step == 8
    assert isinstance(node, NodeQuestion) and node.view == "autograd" and node.checkpoint == 7
    assert isinstance(choice, ChoiceQuestion) and choice.multiple
    assert [c.correct for c in choice.choices] == [True, True, False]
    assert lesson.narration[0].span == "a*b + a"
    assert "<strong>graph</strong>" in found.html
    assert "<code>d = a*b + a</code>" in found.html
    # the `#step=8` link is found on the prose's line of the file
    assert found.step_links == ((line_of(SEED, "See [step 8]"), 8),)


def test_lines_point_at_the_front_matters_keys():
    found = parsed()
    assert found.lines[("snippet",)] == line_of(SEED, "snippet: |")
    assert found.lines[("questions", 0)] == line_of(SEED, "id: grad-a")
    assert found.lines[("questions", 0, "answer")] == line_of(SEED, "answer: 5")
    assert found.lines[("questions", 3, "answer")] == line_of(SEED, "answer: [AddBackward0")


def test_raw_html_in_the_prose_is_escaped_not_passed_through():
    text = replaced(
        "See [step 8](#step=8).",
        'See [step 8](#step=8). <script>alert(1)</script> <b onclick="x">bold</b>\n\n'
        '<div onmouseover="steal()">block</div>\n\n<img src=x onerror=alert(2)>',
    )
    html = parsed(text).html
    assert "<script" not in html and "<b " not in html and "<div" not in html
    assert "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;div onmouseover=" in html


@pytest.mark.parametrize(
    "link",
    [
        "[click](javascript:alert(1))",
        "[click](JavaScript:alert(1))",
        "[click](vbscript:msgbox(1))",
        "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "<javascript:alert(1)>",
    ],
)
def test_a_script_link_is_not_rendered_as_a_link(link):
    html = parsed(replaced("See [step 8](#step=8).", f"See [step 8](#step=8). {link}")).html
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs == ["#step=8"], html


def test_read_reads_a_file_and_reports_an_unreadable_one(tmp_path):
    good = tmp_path / "two-paths.md"
    good.write_text(SEED, encoding="utf-8")
    assert read(good).slug == "two-paths"
    bad = tmp_path / "latin.md"
    bad.write_bytes(SEED.encode("utf-8") + b"caf\xe9\n")
    with pytest.raises(BadLesson) as raised:
        read(bad)
    assert raised.value.problems[0].line == 0
    assert "cannot read" in raised.value.problems[0].message
    with pytest.raises(BadLesson):
        read(tmp_path / "missing.md")


# ***** broken lessons, each at its line *****


def test_missing_front_matter_is_reported_at_line_1():
    text = SEED.split("---\n", 2)[2]  # the prose alone
    problem = only_problem(text)
    assert problem.line == 1
    assert "front matter" in problem.message


def test_unclosed_front_matter_is_reported():
    text = SEED.replace("---\nThe **graph**", "The **graph**")
    problem = problems_of(text)[0]
    assert problem.line == 1
    assert "front matter" in problem.message


@pytest.mark.parametrize(
    ("old", "new", "bad_line_text"),
    [
        # a second `:` on one line: YAML stops at that line
        ("summary: How a.grad adds up.", "summary: How: a.grad: adds up.", "summary: How:"),
        # a key indented under a scalar
        ("order: 1\n", "order: 1\n  nested: [\n", "nested: ["),
        # a tab where YAML wants spaces, deep in the questions
        ("    hint: Two paths.\n", "    hint: Two paths.\n\tstep: 3\n", "\tstep: 3"),
    ],
)
def test_malformed_yaml_is_reported_at_the_line_of_the_error(old, new, bad_line_text):
    text = replaced(old, new)
    problem = only_problem(text)
    assert problem.line == line_of(text, bad_line_text)
    assert "not YAML" in problem.message


def test_a_yaml_error_names_no_line_but_the_files():
    text = replaced("summary: How a.grad adds up.", "summary: How: a.grad: adds up.")
    problem = only_problem(text)
    mentioned = {int(n) for n in re.findall(r"line (\d+)", problem.message)}
    assert mentioned <= {problem.line}, problem.message


def test_front_matter_that_is_not_a_mapping_is_reported():
    problem = only_problem("---\n- just\n- a list\n---\nprose\n")
    assert problem.line == 2
    assert "mapping" in problem.message


def test_a_missing_snippet_is_reported_at_the_start_of_the_front_matter():
    # no line holds a key that is absent: the front matter's first line is the place to add it
    text = SEED.replace("snippet: |\n", "").replace("  import torch\n", "", 1)
    text = re.sub(r"(?m)^  (a = |b = |d = |d\.backward|print\().*\n", "", text)
    problem = only_problem(text)
    assert problem.line == 2
    assert "snippet" in problem.message
    assert "required" in problem.message.lower()


def test_a_choice_question_with_no_correct_choice_is_reported_at_the_question():
    text = replaced('{text: "`a`", correct: true}', '{text: "`a`"}')
    text = replaced('{text: "`b`", correct: true}', '{text: "`b`"}', text)
    problem = only_problem(text)
    assert problem.line == line_of(text, "id: leaves")
    assert "correct" in problem.message


def test_two_correct_choices_without_multiple_are_reported_at_the_question():
    text = replaced("    multiple: true\n", "")
    problem = only_problem(text)
    assert problem.line == line_of(text, "id: leaves")
    assert "2 choices are correct" in problem.message and "multiple" in problem.message


def test_several_node_answers_without_multiple_are_reported():
    text = replaced("answer: [MulBackward0]", "answer: [MulBackward0, AddBackward0]")
    problem = only_problem(text)
    assert problem.line == line_of(text, "id: next")
    assert "multiple" in problem.message


def test_an_unknown_question_type_is_reported_at_the_question():
    text = replaced("type: order", "type: essay")
    problem = only_problem(text)
    # the question's first line, or the `type` line itself: both point at the mistake
    assert problem.line in (line_of(text, "id: order"), line_of(text, "type: essay"))
    assert "essay" in problem.message
    assert "choice" in problem.message and "numeric" in problem.message


def test_duplicate_question_ids_are_reported_at_the_second_one():
    text = replaced("id: order", "id: next")
    problem = only_problem(text)
    assert "next" in problem.message
    assert problem.line == line_of(text, "id: next", nth=2)


def test_an_unknown_key_in_a_question_is_reported_at_that_key():
    text = replaced("    hint: Two paths.\n", "    hint: Two paths.\n    colour: red\n")
    problem = only_problem(text)
    assert problem.line == line_of(text, "colour: red")
    assert "colour" in problem.message and "not permitted" in problem.message


def test_an_unknown_top_level_key_is_reported_at_that_key():
    text = replaced("order: 1\n", "order: 1\nauthor: me\n")
    problem = only_problem(text)
    assert problem.line == line_of(text, "author: me")
    assert "author" in problem.message and "not permitted" in problem.message


def test_an_unknown_key_in_a_choice_is_reported_at_its_line():
    text = replaced('{text: "`d`", feedback: "d has a grad_fn."}', '{text: "`d`", why: "no"}')
    problem = only_problem(text)
    assert problem.line == line_of(text, 'why: "no"')
    assert "why" in problem.message and "not permitted" in problem.message


def test_a_wrong_value_type_is_reported_at_its_line():
    text = replaced("answer: 5", "answer: five")
    problem = only_problem(text)
    assert problem.line == line_of(text, "answer: five")
    assert "answer" in problem.message and "number" in problem.message


def test_every_problem_is_reported_each_at_its_own_line():
    text = replaced("answer: 5", "answer: five")
    text = replaced("checkpoint: 7", "checkpoint: 0", text)
    problems = problems_of(text)
    assert sorted(p.line for p in problems) == [
        line_of(text, "answer: five"),
        line_of(text, "checkpoint: 0"),
    ]
    by_line = {p.line: p.message for p in problems}
    assert "answer" in by_line[line_of(text, "answer: five")]
    assert "checkpoint" in by_line[line_of(text, "checkpoint: 0")]


def test_a_narration_override_needs_exactly_one_of_step_and_span():
    text = replaced('  - span: "a*b + a"\n', '  - span: "a*b + a"\n    step: 3\n')
    problem = only_problem(text)
    assert problem.line == line_of(text, 'span: "a*b + a"')
    assert "either `step` or `span`" in problem.message


@pytest.mark.parametrize("name", ["Seed.md", "two_paths.md", "two paths.md", "-seed.md", "é.md"])
def test_a_file_name_that_is_not_a_slug_is_refused(name):
    problems = problems_of(SEED, name)
    assert problems[0].line == 0
    assert repr(name) in problems[0].message and "slug" in problems[0].message


# ***** the published schema *****


def test_lesson_schema_is_the_one_published_in_docs():
    published = json.loads((ROOT / "docs" / "lesson.schema.json").read_text(encoding="utf-8"))
    assert lesson_schema() == published
