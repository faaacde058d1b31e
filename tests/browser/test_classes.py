"""A class in Chromium: the instructor's results update live as a student joins and answers
(no reload: htmx's SSE extension), and the student's player follows the instructor's pace and
reveals."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

LESSON, QUESTION = "define-by-run", "nodes-before-line-4"  # a numeric check


def test_the_instructor_sees_answers_live_and_the_student_follows(page, browser, server_url, shot):
    started = httpx.post(
        f"{server_url}/classes", data={"lesson": LESSON, "title": "Live"}, follow_redirects=True
    )
    teach = started.url.path
    code = re.search(r"data-join-code>(\w+)<", started.text).group(1)
    page.goto(server_url + teach)
    page.wait_for_function(
        "() => document.querySelector('[sse-connect]')['htmx-internal-data']"
        "?.sseEventSource?.readyState === EventSource.OPEN"
    )
    results = page.locator("#class-results")
    expect(results.locator("[data-member-count]")).to_have_text("0")

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    student = context.new_page()
    problems: list[str] = []
    student.on("pageerror", lambda error: problems.append(str(error)))
    try:
        student.goto(f"{server_url}/join/{code}")
        student.get_by_label("Your name").fill("Ann")
        student.get_by_role("button", name="Join").click()
        expect(student.locator("[data-class-banner]")).to_contain_text("as Ann")
        expect(results.locator("[data-member-count]")).to_have_text("1")

        form = student.locator(f"#q-{QUESTION}")
        form.locator("input[name=value]").fill("1")
        form.locator("button[type=submit]:not([name])").click()
        expect(form.locator("[data-verdict]")).to_have_attribute("data-verdict", "wrong")
        question = results.locator(f'[data-class-question="{QUESTION}"]')
        expect(question.locator("[data-answered-count]")).to_have_text("1")
        expect(question.locator("[data-answer-count]").first).to_have_text("1")
        shot(page, "class-results-live")

        page.locator("[data-pace-step]").fill("2")
        page.get_by_role("button", name="Hold here").click()
        expect(student.locator("grad-player [data-counter]")).to_have_text(
            re.compile(r"^Step 2 of")
        )

        # the instructor shows everyone the answer: it appears on the student's page, and is
        # not counted as the student's own reveal
        question.locator("[data-class-reveal]").click()
        expect(form.locator("[data-verdict]")).to_have_attribute("data-answered", "")
        expect(form.locator(".answer")).to_contain_text("Answer: 0")
    finally:
        context.close()
    assert problems == []
