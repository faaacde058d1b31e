"""A class of thirty, as an instructor runs one: paced through a lesson's predict check.

Three students are real Chromium pages; the other twenty-seven are HTTP clients that do what a
phone's browser does (join, open the lesson, follow the instructor's pace over server-sent
events, answer). The instructor's page is Chromium too: its histogram must count every answer
within 2 s of the last one (the issue's bar), and a paced step must reach every student.

An `alone` test: thirty clients and three browsers would crowd the parallel part's machine.
"""

from __future__ import annotations

import csv
import io
import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.alone

STUDENTS = 30
IN_BROWSER = 3
LESSON = "define-by-run"
QUESTION = "predict-y-grad-fn"  # a choice question, the predict check before step 4
CHECKPOINT = 4
EARLIER = "nodes-before-line-4"  # the lesson's predict check before that one, at step 3
RIGHT, NONE_LIKE_X, PLACEHOLDER = "0", "1", "2"  # its choices' indexes
# what each student answers first: most right, the rest split between the two misconceptions
FIRST_ANSWERS = [RIGHT] * 18 + [NONE_LIKE_X] * 8 + [PLACEHOLDER] * 4
CHOICE_TEXT = {
    RIGHT: "A `MulBackward0` object",
    NONE_LIKE_X: "`None`, like `x.grad_fn`",
    PLACEHOLDER: "A placeholder, because the graph is filled in when `backward()` runs",
}
SHOWN_WITHIN_MS = 2_000  # the bar: the histogram shows every answer this soon


def test_a_class_of_thirty_answers_live_and_follows_the_pace(browser, server_url, shot):
    instructor = _page(browser)
    instructor.goto(f"{server_url}/lessons/{LESSON}")
    instructor.get_by_text("Teach this as a class").click()
    instructor.get_by_role("button", name="Start a class").click()
    expect(instructor).to_have_url(re.compile(r"/classes/[^/]+/teach/[^/]+$"))
    teach_url = instructor.url
    code = instructor.locator("[data-join-code]").first.inner_text().strip()
    assert re.fullmatch(r"[A-Z2-9]{6}", code), code
    answered = instructor.locator(f'[data-class-question="{QUESTION}"] [data-answered-count]')
    expect(answered).to_have_text("0")

    # ***** thirty students join *****
    in_browser = [_join_in_browser(browser, server_url, code, f"Pupil {i}") for i in range(3)]
    by_http = [_HTTPStudent(server_url, code, f"Phone {i}") for i in range(STUDENTS - IN_BROWSER)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda student: student.join(), by_http))
    expect(instructor.locator("[data-member-count]")).to_have_text(str(STUDENTS))

    # ***** paced: the instructor's player holds at the predict check; every player follows *****
    followers = [threading.Thread(target=s.follow, daemon=True) for s in by_http]
    for thread in followers:
        thread.start()
    for student in by_http:
        assert student.listening.wait(30), f"{student.name} never started following"
    projected = instructor.locator("grad-player")
    instructor.get_by_label("Students' players follow mine").check()
    # the lesson's first check (before step 3) is passed over: its answer shown to everyone
    instructor.locator(f'[data-class-question="{EARLIER}"] [data-class-reveal]').click()
    for _ in range(CHECKPOINT):  # one Next more than the check allows: it holds
        projected.get_by_role("button", name="Next ›").click()
    expect(projected.locator("[data-counter]")).to_contain_text(f"Step {CHECKPOINT - 1} of")
    expect(projected.locator("[data-class-hold]")).to_contain_text(f"before step {CHECKPOINT}")
    for student in in_browser:
        expect(student.locator("[data-counter]")).to_contain_text(f"Step {CHECKPOINT - 1} of")
    for student in by_http:
        assert student.reached(CHECKPOINT - 1), f"{student.name} missed step {CHECKPOINT - 1}"

    # ***** everyone answers within ten seconds *****
    first = iter(FIRST_ANSWERS)
    browser_answers = [next(first) for _ in in_browser]
    http_answers = [next(first) for _ in by_http]
    started = time.monotonic()
    for student, choice in zip(in_browser, browser_answers, strict=True):
        form = student.locator(f"form[data-question='{QUESTION}']")
        form.locator(f"input[name=choice][value='{choice}']").check()
        form.get_by_role("button", name="Check").click()
        expect(form.locator("[data-verdict]")).to_be_attached()
    with ThreadPoolExecutor(9) as pool:
        list(pool.map(_HTTPStudent.answer, by_http, http_answers))
    last_answer = time.monotonic()
    assert last_answer - started < 10, "the class could not answer within ten seconds"
    expect(answered).to_have_text(str(STUDENTS), timeout=SHOWN_WITHIN_MS)
    question = instructor.locator(f'[data-class-question="{QUESTION}"]')
    counts = [int(n) for n in question.locator("[data-answer-count]").all_inner_texts()]
    assert sorted(counts, reverse=True) == [18, 8, 4]
    assert "grad_fn = None" in question.inner_text()  # the misconception a wrong choice names
    shot(instructor, "class-histogram")

    # ***** the instructor reveals and steps on; every player follows *****
    instructor.locator(f'[data-class-question="{QUESTION}"] [data-class-reveal]').click()
    projected.get_by_role("button", name="Next ›").click()
    expect(projected.locator("[data-counter]")).to_contain_text(f"Step {CHECKPOINT} of")
    for student in in_browser:
        expect(student.locator("[data-counter]")).to_contain_text(f"Step {CHECKPOINT} of")
    for student in by_http:
        assert student.reached(CHECKPOINT), f"{student.name} missed step {CHECKPOINT}"
        assert QUESTION in student.revealed, f"{student.name} was not shown the answer"

    # ***** the gradebook's CSV holds what each one answered first *****
    rows = _csv(instructor, teach_url)
    firsts = {row["student"]: row for row in rows if row["question"] == QUESTION}
    assert len(firsts) == STUDENTS
    for student, choice in zip(by_http, http_answers, strict=True):
        row = firsts[student.name]
        assert row["first_answer"] == CHOICE_TEXT[choice], row
        assert row["first_correct"] == ("1" if choice == RIGHT else "0"), row
        assert row["attempts"] == "1", row
    for student in by_http:
        student.close()
    for page in [*in_browser, instructor]:
        assert page.problems == [], f"JavaScript errors on {page.url}: {page.problems}"
        page.context.close()


# ***** the parts *****


def _page(browser):
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.problems = problems
    return page


def _join_in_browser(browser, server_url: str, code: str, name: str):
    student = _page(browser)
    student.goto(f"{server_url}/join/{code}")
    student.get_by_label(re.compile("name", re.I)).fill(name)
    student.get_by_role("button", name=re.compile("Join")).click()
    expect(student).to_have_url(re.compile(f"/lessons/{LESSON}$"))
    expect(student.locator("[data-class-banner]")).to_contain_text(name)
    return student


def _csv(instructor, teach_url: str) -> list[dict]:
    answer = instructor.request.get(f"{teach_url}/results.csv")
    assert answer.ok and answer.headers["content-type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(answer.text())))


class _HTTPStudent:
    """A phone in the class: joins, follows the pace over server-sent events, answers."""

    def __init__(self, server_url: str, code: str, name: str) -> None:
        self.url, self.code, self.name = server_url, code, name
        self.client = httpx.Client(base_url=server_url, timeout=30)
        self.listening = threading.Event()
        self.steps: list[int | None] = []
        self.revealed: set[str] = set()
        self.changed = threading.Condition()

    def join(self) -> None:
        assert self.client.get(f"/join/{self.code}").status_code == 200
        joined = self.client.post(
            "/join", data={"code": self.code, "name": self.name}, follow_redirects=True
        )
        assert joined.status_code == 200 and joined.url.path == f"/lessons/{LESSON}", joined
        follow = re.search(r'data-class-follow="([^"]+)"', joined.text)
        assert follow, "the lesson page does not say it follows a class"
        self.follow_url = follow.group(1)

    def follow(self) -> None:
        with self.client.stream("GET", self.follow_url, timeout=None) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            self.listening.set()
            event = None
            for line in stream.iter_lines():
                if line.startswith("event:"):
                    event = line.partition(":")[2].strip()
                elif line.startswith("data:") and event in ("pace", "reveal"):
                    data = json.loads(line.partition(":")[2])
                    with self.changed:
                        if event == "pace":
                            self.steps.append(data["step"])
                        else:
                            self.revealed.add(data["question"])
                        self.changed.notify_all()

    def reached(self, step: int, timeout: float = 30) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.steps and self.steps[-1] == step, timeout)

    def answer(self, choice: str) -> None:
        answer = self.client.post(
            f"/lessons/{LESSON}/questions/{QUESTION}",
            data={"choice": choice, "attempt": "0"},
            headers={"HX-Request": "true"},
        )
        assert answer.status_code == 200, answer.text

    def close(self) -> None:
        self.client.close()
