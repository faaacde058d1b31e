"""A class over HTTP (app/routes/classes.py, app/classes.py): starting one, joining, every
answer recorded as the spec says (first answer kept, attempts, hints, reveals), the results
panel and the CSV, the instructor's controls, retention, and bad input answered 4xx.

One lesson, the built-in define-by-run: `nodes-before-line-4` is a numeric check (answer 0),
`predict-y-grad-fn` a choice (0 is right, 1 and 2 name misconceptions)."""

import csv
import io
import re
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from app.classes import DAY, STARTS_PER_HOUR, Classes
from app.config import Settings, StoreSettings
from app.main import create_app

LESSON = "define-by-run"
NUMERIC, CHOICE = "nodes-before-line-4", "predict-y-grad-fn"


class Browser:
    """One visitor's cookies, its requests made through the app's one started client (its
    render workers live on that client's event loop)."""

    def __init__(self, client: TestClient) -> None:
        self._client, self._jar = client, httpx.Cookies()

    def request(self, method: str, url: str, **options) -> httpx.Response:
        self._client.cookies = self._jar
        try:
            return self._client.request(method, url, **options)
        finally:
            self._jar = httpx.Cookies(self._client.cookies)

    def get(self, url: str, **options) -> httpx.Response:
        return self.request("GET", url, **options)

    def post(self, url: str, **options) -> httpx.Response:
        return self.request("POST", url, **options)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("classes")
    settings = Settings(store=StoreSettings(path=folder / "t.db"), session_secret="s")
    app = create_app(settings)
    with TestClient(app, base_url="http://localhost") as client:  # sandbox, renderers: once
        app.state.test_client = client
        yield app


def _client(app) -> Browser:
    return Browser(app.state.test_client)


def _start(app, **fields) -> tuple[Browser, str, str]:
    """A new instructor's client, their private link, and the join code."""
    instructor = _client(app)
    answer = instructor.post("/classes", data={"lesson": LESSON, **fields}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    teach = answer.headers["location"]
    page = instructor.get(teach)
    code = re.search(r"data-join-code>(\w+)<", page.text).group(1)
    return instructor, teach, code


def _join(app, code: str, name: str = "") -> Browser:
    student = _client(app)
    answer = student.post("/join", data={"code": code, "name": name}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == f"/lessons/{LESSON}"
    return student


def _answer(student: Browser, qid: str, **fields) -> None:
    answer = student.post(f"/lessons/{LESSON}/questions/{qid}", data=fields)
    assert answer.status_code == 200, answer.text


def _rows(instructor: Browser, teach: str) -> list[dict]:
    answer = instructor.get(f"{teach}/results.csv")
    assert answer.headers["content-type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(answer.text)))


def test_the_instructors_page_is_private_and_shows_how_to_join(app):
    instructor, teach, code = _start(app, title="Monday 9:00")
    page = instructor.get(teach)
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"
    assert re.fullmatch(r"[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}", code)
    assert f"http://localhost/join/{code}" in page.text
    assert 'src="data:image/svg+xml' in page.text  # the QR code
    assert "Monday 9:00" in page.text and 'id="class-results"' in page.text
    assert f'sse-connect="{teach}/events"' in page.text
    key = teach.rsplit("/", 1)[1]
    assert len(key) >= 22  # 128 bits and more, url-safe
    wrong = teach[: -len(key)] + ("A" * len(key))
    for path in (wrong, f"{wrong}/results", f"{wrong}/results.csv"):
        assert instructor.get(path).status_code == 404
    assert instructor.post(f"{wrong}/end").status_code == 404


def test_answers_are_recorded_first_answer_kept_and_attempts_counted(app):
    instructor, teach, code = _start(app)
    ann = _join(app, code, "Ann")
    _answer(ann, NUMERIC, value="1", attempt="0")  # wrong, hinted
    _answer(ann, NUMERIC, value="2", attempt="1")  # wrong again: the answer is shown
    _answer(ann, NUMERIC, value="0", attempt="2")  # right
    _answer(ann, CHOICE, choice="1", attempt="0")
    _answer(ann, CHOICE, reveal="1", attempt="1")
    _answer(ann, CHOICE, reveal="1", class_reveal="1")  # the instructor's reveal: not hers
    bo = _join(app, code, "")  # no name: a number
    _answer(bo, CHOICE, choice="0", attempt="0")
    _join(app, code, "Cy")  # answers nothing
    rows = {(r["student"], r["question"]): r for r in _rows(instructor, teach)}
    numeric = rows[("Ann", NUMERIC)]
    assert (numeric["first_answer"], numeric["first_correct"], numeric["last_answer"]) == (
        "1", "0", "0",
    )  # fmt: skip
    assert (numeric["attempts"], numeric["hints"], numeric["correct"]) == ("3", "1", "1")
    assert numeric["revealed"] == "0"
    choice = rows[("Ann", CHOICE)]
    assert choice["first_answer"] == "`None`, like `x.grad_fn`"
    assert (choice["attempts"], choice["revealed"], choice["correct"]) == ("1", "1", "0")
    assert rows[("Student 2", CHOICE)]["first_correct"] == "1"
    assert rows[("Cy", "")]["attempts"] == ""  # one row, no question
    assert len(rows) == 4


def test_the_results_panel_counts_answers_names_misconceptions_and_who_is_stuck(app):
    instructor, teach, code = _start(app)
    for name, picked in (("<b>Ann</b>", "1"), ("Bo", "1"), ("Cy", "0")):
        _answer(_join(app, code, name), CHOICE, choice=picked, attempt="0")
    stuck = _join(app, code, "Dee")
    _answer(stuck, CHOICE, choice="2", attempt="0")
    _answer(stuck, CHOICE, choice="1", attempt="1")
    panel = instructor.get(f"{teach}/results").text
    assert re.search(r"data-member-count>4<", panel)
    assert "&lt;b&gt;Ann&lt;/b&gt;" in panel and "<b>Ann</b>" not in panel
    question = panel.split(f'data-class-question="{CHOICE}"')[1].split("</section>")[0]
    assert re.search(r"data-answered-count>4<", question)
    counts = re.findall(r"data-answer-count>(\d+)<", question)
    assert counts == ["1", "2", "1"]  # in the choices' order: the right one, then two wrong
    assert "(right)" in question.split("<tr")[1] and "(right)" not in question.split("<tr")[2]
    assert "Only tensors that no operation produced" in question  # choice 1's misconception
    assert re.search(r"Stuck: Dee<", question)


def test_a_student_sees_their_class_and_answers_elsewhere_are_not_recorded(app):
    instructor, teach, code = _start(app)
    student = _join(app, code, "Ann\x00\x1b[31m")
    page = student.get(f"/lessons/{LESSON}").text
    assert "data-class-banner" in page and "data-class-follow=" in page
    assert "\x1b" not in page and "Ann" in page
    other = student.get("/lessons/training-step").text
    assert "data-class-banner" not in other
    student.post("/lessons/training-step/questions/anything", data={"value": "1"})
    assert [r["question"] for r in _rows(instructor, teach)] == [""]
    assert _rows(instructor, teach)[0]["student"] == "Ann [31m"  # no control characters


def test_joining_again_keeps_the_member_and_takes_a_new_name(app):
    instructor, teach, code = _start(app)
    student = _join(app, code, "Ann")
    student.post("/join", data={"code": code.lower(), "name": "Anne"}, follow_redirects=False)
    assert [r["student"] for r in _rows(instructor, teach)] == ["Anne"]


def test_a_wrong_code_and_bad_starts_are_refused_with_a_message(app):
    client = _client(app)
    answer = client.post("/join", data={"code": "ZZZZZZ", "name": "x"})
    assert answer.status_code == 404 and "No class has that code" in answer.text
    assert client.post("/join", data={"code": "", "name": ""}).status_code == 404
    long_name = client.post("/join", data={"code": "ZZZZZZ", "name": "n" * 500})
    assert long_name.status_code == 422 and "at most" in long_name.text
    refusals = [
        ({}, 422),
        ({"lesson": LESSON, "trace": "abc"}, 422),
        ({"lesson": "no-such-lesson"}, 404),
        ({"trace": "nosuchtrace"}, 404),
        ({"lesson": LESSON, "retention_days": "0"}, 422),
        ({"lesson": LESSON, "retention_days": "366"}, 422),
        ({"lesson": LESSON, "retention_days": "a week"}, 422),
        ({"lesson": LESSON, "title": "t" * 500}, 422),  # a page that says so, not JSON
    ]
    for fields, status in refusals:
        answer = client.post("/classes", data=fields, follow_redirects=False)
        assert answer.status_code == status, fields
        assert "data-class-problem" in answer.text


def test_starting_classes_is_bounded_per_client(app):
    client = _client(app)
    answers = [
        client.post("/classes", data={"lesson": LESSON}, follow_redirects=False)
        for _ in range(STARTS_PER_HOUR + 1)
    ]
    started = [a.headers["location"].split("/")[2] for a in answers if a.status_code == 303]
    for class_id in started:  # the other tests' classes start from this same address
        app.state.store.inner.classes.delete(class_id, time.time())
    assert answers[-1].status_code == 429 and len(started) <= STARTS_PER_HOUR
    assert "At most" in answers[-1].text


def test_csv_cells_that_a_spreadsheet_would_run_are_defused(app):
    instructor, teach, code = _start(app)
    student = _join(app, code, "=HYPERLINK(1)")
    _answer(student, NUMERIC, value="-1", attempt="0")
    (row,) = _rows(instructor, teach)
    assert row["student"] == "'=HYPERLINK(1)" and row["first_answer"] == "'-1"


def test_pace_reveal_and_end(app):
    instructor, teach, code = _start(app)
    class_id = teach.split("/")[2]
    store = app.state.store.inner.classes
    before = store.last_event()
    assert instructor.post(f"{teach}/pace", data={"step": "4"}).status_code == 200
    assert store.get(class_id, time.time()).paced_step == 4
    assert instructor.post(f"{teach}/pace", data={"step": "x"}).status_code == 422
    for nameless in ({}, {"question": "q" * 101}):  # a page that says so, and no event
        refused = instructor.post(f"{teach}/reveal", data=nameless)
        assert refused.status_code == 422 and "data-class-problem" in refused.text
    instructor.post(f"{teach}/reveal", data={"question": CHOICE}, headers={"HX-Request": "1"})
    instructor.post(f"{teach}/pace", data={"step": "", "release": "1"})
    kinds = [(e.kind, e.data) for e in store.events_after(before)]
    assert kinds == [
        ("pace", {"step": 4}),
        ("reveal", {"question": CHOICE}),
        ("pace", {"step": None}),
    ]
    student = _join(app, code, "Ann")
    assert instructor.post(f"{teach}/end").status_code == 200
    gone = instructor.get(teach)
    assert gone.status_code == 404 and gone.headers["referrer-policy"] == "no-referrer"
    assert instructor.post(f"{teach}/pace", data={"step": "2"}).status_code == 404
    assert "data-class-banner" not in student.get(f"/lessons/{LESSON}").text


def test_an_expired_class_is_gone_everywhere_and_swept(app):
    instructor, teach, code = _start(app, retention_days="1")
    student = _join(app, code, "Ann")
    _answer(student, NUMERIC, value="0", attempt="0")
    kept = app.state.classes
    later = Classes(app.state.store.inner, "s", clock=lambda: time.time() + DAY + 60)
    app.state.classes = later
    try:
        assert instructor.get(teach).status_code == 404
        assert _client(app).post("/join", data={"code": code}).status_code == 404
        assert "data-class-banner" not in student.get(f"/lessons/{LESSON}").text
        assert later.sweep() >= 1
    finally:
        app.state.classes = kept
    class_id = teach.split("/")[2]
    assert app.state.store.inner.classes.members(class_id) == []
    assert instructor.get(teach).status_code == 404  # deleted, not only expired
