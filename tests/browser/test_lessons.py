"""Lessons in a real browser: one walked end to end (a predict check answered wrongly, then
rightly, with nodes picked by keyboard and by mouse; a numeric check; progress kept), the same
lesson without JavaScript; and every built-in lesson page audited by axe, its held checks
walked.

The walk uses a lesson of its own (below) on a server of its own, so that rewriting a built-in
lesson never breaks it; the built-in lessons are audited on the suite's shared server.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.lessons.library import Library
from app.lessons.overrides import overridden
from tests import corpus
from tests.app.lessons.seed import SEED_SNIPPET
from tests.browser.test_accessibility import audit
from tests.live_server import free_port, serving, uvicorn_command

ROOT = Path(__file__).resolve().parents[2]

LESSON = f"""\
---
title: Two paths into a
summary: How a.grad adds up what both paths bring.
order: 1
snippet: |
{textwrap.indent(SEED_SNIPPET, "  ")}
narration:
  - span: "a*b + a"
    text: "In the lesson's words: `a*b + a` uses `a` a second time."
questions:
  - id: next
    type: node
    prompt: Which node does backward() run next?
    answer: [MulBackward0]
    checkpoint: 7
    fact: next-backward after 6
    hint: AddBackward0 just sent a gradient towards `a*b`.
  - id: grad-a
    type: numeric
    prompt: What is `a.grad` after backward()?
    answer: 5
    fact: grad a
    hint: Two paths lead back to `a`.
    step: 8
---
`a` reaches `d` twice. Watch [step 8](#step=8).
"""
CHECKPOINT = 7  # the predict check's step: playback holds at step 6


@pytest.fixture(scope="module")
def lesson_url(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lessons")
    (folder / "two-paths.md").write_text(LESSON, encoding="utf-8")
    port = free_port()
    env = dict(
        os.environ,
        GRADTRACE_STORE_PATH=str(tmp_path_factory.mktemp("db") / "traces.db"),
        GRADTRACE_LESSONS_DIR=str(folder),
    )
    with serving(uvicorn_command(port), port, env=env) as (_, url):
        yield url


def counter(page):
    return page.locator("grad-player [data-counter]")


def submit(form) -> None:
    form.locator("button[type=submit]:not([name])").click()


def test_a_lesson_walked_end_to_end(page, lesson_url, shot):
    page.goto(lesson_url + "/lessons")
    page.get_by_role("link", name="Two paths into a").click()
    expect(counter(page)).to_have_text(re.compile(r"^Step 1 of"))
    total = int(counter(page).inner_text().split()[-1])
    # the override's words stand in for the generated narration at that step
    assert "In the lesson's words" in page.locator("details.all-steps").text_content()

    # playback holds before the predicted step, and says why; the steps past it stay hidden
    for _ in range(CHECKPOINT + 2):
        page.locator("[data-action=next]").click()
    expect(counter(page)).to_have_text(f"Step {CHECKPOINT - 1} of {total}")
    expect(page.locator(".checkpoint-note")).to_contain_text(f"Predict step {CHECKPOINT}")
    steps_shown = page.locator("details.all-steps li:not([hidden])")
    expect(steps_shown).to_have_count(CHECKPOINT - 1)
    form = page.locator("#q-next")
    expect(form).to_have_class(re.compile(r"\basking\b"))

    # a wrong node, picked with the keyboard in the graph: feedback, and still held
    wrong = page.locator("figure[data-view=autograd] g.node#n2")  # AccumulateGrad(a)
    wrong.focus()
    page.keyboard.press("Enter")
    expect(form.locator("[data-pick-status]")).to_have_text("Picked AccumulateGrad(a).")
    expect(form.locator("input[name=node][value=n2]")).to_be_checked()
    submit(form)
    expect(form.locator("[data-verdict]")).to_have_attribute("data-verdict", "wrong")
    expect(form.locator(".hint")).to_contain_text("AddBackward0 just sent")
    expect(counter(page)).to_have_text(f"Step {CHECKPOINT - 1} of {total}")

    # the right one, by mouse: the predicted step plays
    page.locator("figure[data-view=autograd] g.node#n1").click()
    expect(form.locator("input[name=node][value=n1]")).to_be_checked()
    submit(form)
    expect(form.locator("[data-verdict]")).to_have_attribute("data-verdict", "right")
    expect(counter(page)).to_have_text(f"Step {CHECKPOINT} of {total}")
    expect(page.locator(".checkpoint-note")).to_be_hidden()
    expect(steps_shown).to_have_count(total)
    page.locator("[data-action=last]").click()
    expect(counter(page)).to_have_text(f"Step {total} of {total}")

    # a numeric check: wrong twice brings the answer and a replay of the step that shows it
    numeric = page.locator("#q-grad-a")
    numeric.locator("input[name=value]").fill("4")
    submit(numeric)
    expect(numeric.locator("[data-verdict]")).to_have_attribute("data-verdict", "wrong")
    expect(numeric.locator(".answer")).to_have_count(0)
    submit(numeric)
    expect(numeric.locator(".answer")).to_contain_text("Answer: 5")
    numeric.get_by_role("link", name="Replay step 8").click()
    expect(counter(page)).to_have_text(f"Step 8 of {total}")
    numeric.locator("input[name=value]").fill("5")
    submit(numeric)
    expect(numeric.locator("[data-verdict]")).to_have_attribute("data-verdict", "right")
    shot(page, "lesson-walked")

    progress = json.loads(
        page.evaluate("localStorage.getItem('gradtrace:progress:lesson:two-paths')")
    )
    # the predict check right after a wrong answer and its hint; the numeric one's answer shown
    assert progress["answered"] == {"next": "hint", "grad-a": "shown"}
    # steps 1 to 7 stepped through, the last jumped to, step 8 replayed (0-based here)
    assert set(progress["seen"]) == {*range(CHECKPOINT), total - 1, 7}
    page.goto(lesson_url + "/lessons")
    # not done: an answer shown is not an answer found
    listed = page.locator("[data-progress=two-paths]")
    seen = len(progress["seen"])
    expect(listed).to_have_text(f" · 1 of 2 answered right, 1 answer shown, {seen} steps seen")
    expect(page.locator(".lesson-list li.done")).to_have_count(0)

    # coming back: each question says how it was settled, and an answered predict check no
    # longer holds playback
    page.goto(lesson_url + "/lessons/two-paths")
    expect(form.locator("[data-settled-note]")).to_have_text("Answered right after a hint")
    expect(numeric.locator("[data-settled-note]")).to_have_text("Answer shown")
    page.locator("[data-action=last]").click()
    expect(counter(page)).to_have_text(f"Step {total} of {total}")

    # starting over forgets it all: the predict check holds playback again
    page.get_by_role("button", name="Start this lesson over").click()
    expect(counter(page)).to_have_text(f"Step 1 of {total}")
    page.locator("[data-action=last]").click()
    expect(counter(page)).to_have_text(f"Step {CHECKPOINT - 1} of {total}")
    stored = page.evaluate("localStorage.getItem('gradtrace:progress:lesson:two-paths')")
    assert json.loads(stored)["answered"] == {}
    # right the first time is told apart
    numeric.locator("input[name=value]").fill("5")
    submit(numeric)
    expect(numeric.locator("[data-settled-note]")).to_have_text("Answered right the first time")


def test_a_lesson_without_javascript(browser, lesson_url):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(lesson_url + "/lessons/two-paths")
        # every step as a list, and each question a plain form the server grades
        assert page.locator("details.all-steps li").count() > CHECKPOINT
        form = page.locator("#q-grad-a")
        form.locator("input[name=value]").fill("5")
        submit(form)
        page.wait_for_load_state()
        assert page.url.endswith("/lessons/two-paths/questions/grad-a#q-grad-a")
        verdict = page.locator("#q-grad-a [data-verdict]")
        assert verdict.get_attribute("data-verdict") == "right"
        node_form = page.locator("#q-next")
        node_form.locator("input[name=node][value=n1]").check()
        submit(node_form)
        page.wait_for_load_state()
        assert page.locator("#q-next [data-verdict]").get_attribute("data-verdict") == "right"
    finally:
        context.close()


LIBRARY = Library.load(ROOT / "lessons")  # read once: each test asks it of its lesson
BUILT_IN = [lesson.slug for lesson in LIBRARY.lessons]


def test_the_lesson_list_passes_axe(a11y_page, server_url):
    a11y_page.goto(f"{server_url}/lessons")
    assert a11y_page.locator(".lesson-list li").count() == len(BUILT_IN) >= 10
    audit(a11y_page, "the lesson list")


def test_a_quiz_page_passes_axe(a11y_page, server_url):
    a11y_page.goto(f"{server_url}/")
    a11y_page.get_by_role("button", name="Run").click()
    a11y_page.get_by_role("link", name="Quiz me").click()
    expect(a11y_page.locator("form.check").first).to_be_visible()
    audit(a11y_page, "a generated quiz")


# ***** a predict check gives nothing of what comes after it away *****


def _ahead_of(slug: str) -> dict[int, dict]:
    """For each checkpoint of a built-in lesson (its 1-based step), what the page may show while
    the check holds at the step before it, worked out from the trace: the output printed by
    then, and what it must not show: the steps' words after it (those no earlier step says) and
    how the run ended, if that is still to come."""
    lesson = LIBRARY.get(slug).lesson
    trace = corpus.traced(lesson.snippet)
    steps = overridden(
        corpus.rendered(lesson.snippet)["steps"], lesson.snippet.splitlines(), lesson.narration
    )
    words = [step["text"].replace("`", "") for step in steps]
    ahead = {}
    for checkpoint in sorted({q.checkpoint for q in lesson.questions if q.checkpoint}):
        held = checkpoint - 2  # the index of the step playback holds at
        last_seq = max(s["seq"][1] for s in steps[: held + 1] if s["seq"])
        printed = "".join(
            e["text"] for e in trace["events"] if e["kind"] == "print" and e["seq"] <= last_seq
        )
        later = set(words[held + 1 :]) - set(words[: held + 1])
        if trace["outcome"]["status"] != "ok":
            later.add(trace["outcome"]["message"])
        ahead[checkpoint] = {"held": held, "printed": printed, "hidden": sorted(later)}
    return ahead


@pytest.mark.parametrize("slug", BUILT_IN)
def test_a_built_in_lesson_passes_axe_and_its_held_checks_show_nothing_ahead(
    a11y_page, server_url, slug
):
    """axe on every built-in lesson page and its answer key; and every checkpoint of the
    lesson, reached as a learner reaches it (the earlier checks answered, then End): the
    output, the steps in words, the narration and the title hold nothing of the steps after
    the one playback holds at. The page as it opens (nothing answered yet) is both the page
    axe audits and the first checkpoint's, so the two share that load."""
    page = a11y_page
    url = f"{server_url}/lessons/{slug}"
    page.goto(url)
    expect(counter(page)).to_have_text(re.compile(r"^Step 1 of"))
    audit(page, f"lesson {slug}")
    checks = page.locator("form.check[data-checkpoint]")
    order = sorted(
        (int(f.get_attribute("data-checkpoint")), f.get_attribute("data-question"))
        for f in checks.all()
    )
    ahead = _ahead_of(slug)
    assert [checkpoint for checkpoint, _ in order] == sorted(ahead)
    for i, (checkpoint, _) in enumerate(order):
        if i:  # the earlier checks answered, as a learner who comes back has them
            answered = {question: "right" for _, question in order[:i]}
            page.evaluate(
                "([key, answered]) => localStorage.setItem(key, "
                "JSON.stringify({seen: [], answered}))",
                [f"gradtrace:progress:lesson:{slug}", answered],
            )
            page.goto(url)
            expect(counter(page)).to_have_text(re.compile(r"^Step 1 of"))
        page.locator("grad-player").focus()
        page.keyboard.press("End")
        expected = ahead[checkpoint]
        expect(counter(page)).to_have_text(re.compile(rf"^Step {expected['held'] + 1} of"))
        expect(page.locator(".checkpoint-note")).to_be_visible()
        assert page.locator(".output pre.stdout").text_content() == expected["printed"], checkpoint
        shown = page.locator("#result").inner_text() + "\n" + page.title()
        told = [text for text in expected["hidden"] if text in shown]
        assert told == [], f"{slug}: held before step {checkpoint}, the page shows {told}"
    page.goto(f"{url}/key")
    audit(page, f"the answer key of {slug}")


def test_a_node_question_read_before_its_nodes_exist_brings_them_into_view(page, server_url):
    """In-place-and-versions, read at 1280x800 from the top: its node question is reached while
    playback is at step 1, before the graph has a node. The player stays beside the question,
    and "Pick in the graph" moves it on to where the question's nodes are drawn, no further."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{server_url}/lessons/in-place-and-versions")
    expect(counter(page)).to_have_text(re.compile(r"^Step 1 of"))
    form = page.locator("#q-failing-node")
    form.scroll_into_view_if_needed()
    expect(page.locator("grad-player .views")).to_be_in_viewport()
    node = form.locator("label.option", has_text="MulBackward0(c)").locator("input")
    drawn = page.locator(f'figure[data-view="autograd"] [id="{node.get_attribute("value")}"]')
    expect(drawn).to_be_hidden()
    form.get_by_role("button", name="Pick in the graph").click()
    expect(page.locator('figure[data-view="autograd"]')).to_be_visible()
    expect(drawn).to_be_visible()
    expect(drawn).to_be_in_viewport()
    # the first step that draws the question's nodes: the one before it did not
    shown = int(re.match(r"Step (\d+)", counter(page).text_content()).group(1))
    assert 1 < shown < 6  # the predict check of step 6 still holds
    drawn.click()
    expect(form.locator("[data-pick-status]")).to_have_text("Picked MulBackward0(c).")
    expect(node).to_be_checked()


def test_a_replay_past_a_held_check_says_why_it_does_not_play(page, lesson_url):
    page.goto(lesson_url + "/lessons/two-paths")
    expect(counter(page)).to_have_text(re.compile(r"^Step 1 of"))
    numeric = page.locator("#q-grad-a")  # asked while the check of step 7 holds
    for _ in range(2):  # wrong twice brings the answer and its replay link
        numeric.locator("input[name=value]").fill("4")
        submit(numeric)
    replay = numeric.get_by_role("link", name="Replay step 8")
    replay.click()
    expect(numeric.locator("[data-told]")).to_have_text(
        f"Step 8 plays once the check before step {CHECKPOINT} is answered."
    )
    expect(counter(page)).to_have_text(re.compile(r"^Step 1 of"))
