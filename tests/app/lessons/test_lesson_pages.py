"""The lesson pages through FastAPI's TestClient: /lessons, a lesson with its quick checks graded
on the server (htmx fragment or whole page), its answer key, and "Quiz me" on a stored run."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import LimitsSettings, Settings, StoreSettings
from app.examples import BY_SLUG
from app.lessons import generated
from app.main import create_app
from engine.tracer import trace_snippet
from tests.app.lessons.seed import SEED, SEED_SNIPPET, replaced

HX = {"HX-Request": "true"}

# a second lesson, listed after the seed (order 2) though its file name sorts first
PRODUCTS = """\
---
title: Products of products
summary: Two MulBackward0 nodes, one after the other.
order: 2
snippet: |
  import torch
  a = torch.tensor(3.0, requires_grad=True)
  b = torch.tensor(4.0, requires_grad=True)
  c = a * b
  d = c * a
  d.backward()
narration:
  - step: 3
    text: "Here `c` is born of a product."
questions:
  - id: grad-b
    type: numeric
    prompt: What is `b.grad`?
    answer: 9
    fact: grad b
---
A product of **products**.
"""


@pytest.fixture(scope="module")
def lessons_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lessons")
    (folder / "two-paths.md").write_text(SEED, encoding="utf-8")
    (folder / "a-products.md").write_text(PRODUCTS, encoding="utf-8")
    # a file that does not read as a lesson: it must not take the others down
    (folder / "broken.md").write_text(replaced("type: order", "type: essay"), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def client(tmp_path_factory, lessons_dir):
    db = tmp_path_factory.mktemp("db") / "traces.db"
    app = create_app(
        Settings(store=StoreSettings(path=db), session_secret="s", lessons_dir=lessons_dir)
    )
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
        yield client


@pytest.fixture(scope="module")
def seed_page(client) -> str:
    page = client.get("/lessons/two-paths")
    assert page.status_code == 200
    return page.text


def form_of(page: str, qid: str) -> str:
    match = re.search(rf'<form class="check" id="q-{qid}".*?</form>', page, re.S)
    assert match, f"no form for {qid}"
    return match.group(0)


def verdict(text: str) -> str:
    found = re.findall(r'data-verdict="(\w+)"', text)
    assert len(found) == 1, found
    return found[0]


def node_value(form: str, name: str) -> str:
    """The element id the form's node list sends for the node called `name`."""
    found = re.findall(r'name="node" value="([^"]+)"> <code>([^<]+)</code>', form)
    values = [value for value, text in found if html.unescape(text) == name]
    assert len(values) == 1, found
    return values[0]


def ranks(form: str, order: list[str]) -> dict[str, str]:
    """The rank fields that put the form's items into `order`."""
    found = re.findall(r'<select name="(rank-\d+)" aria-label="Position of ([^"]+)">', form)
    assert len(found) == len(order)
    return {field: str(order.index(html.unescape(item)) + 1) for field, item in found}


# ***** the list *****


def test_lessons_are_listed_by_their_order_and_a_broken_one_is_left_out(client):
    page = client.get("/lessons")
    assert page.status_code == 200
    slugs = re.findall(r'<a href="/lessons/([a-z0-9-]+)">', page.text)
    assert slugs == ["two-paths", "a-products"]
    assert "Two paths into a" in page.text and "Products of products" in page.text
    assert "broken" not in page.text


def test_a_broken_lesson_has_no_page(client):
    assert client.get("/lessons/broken").status_code == 404
    assert client.get("/lessons/no-such-lesson").status_code == 404


# ***** a lesson's page *****


def test_the_lesson_page_has_its_prose_and_its_summary(seed_page):
    assert "The <strong>graph</strong> of <code>d = a*b + a</code>." in seed_page
    assert '<a href="#step=8">step 8</a>' in seed_page
    assert "How a.grad adds up." in seed_page
    assert "<grad-player" in seed_page


def test_the_narration_override_replaces_the_steps_words(seed_page):
    # the step list the page draws (and the player's data) say the lesson's words
    steps = re.findall(r"<li data-phase=\"\w+\">(.*?)</li>", seed_page, re.S)
    assert any("Our words: <code>a*b + a</code> adds." in step for step in steps), steps
    assert '"text": "Our words: `a*b + a` adds."' in seed_page


def test_a_step_override_by_number(client):
    page = client.get("/lessons/a-products").text
    steps = re.findall(r"<li data-phase=\"\w+\">(.*?)</li>", page, re.S)
    assert "Here <code>c</code> is born of a product." in steps[2]


def test_every_question_has_its_form(seed_page):
    for qid, kind in [
        ("grad-a", "numeric"),
        ("next", "predict"),
        ("leaves", "choice"),
        ("order", "order"),
    ]:
        form = form_of(seed_page, qid)
        assert f'data-kind="{kind}"' in form
        assert f'action="/lessons/two-paths/questions/{qid}#q-{qid}"' in form
        assert 'name="attempt" value="0"' in form
    assert 'name="value"' in form_of(seed_page, "grad-a")
    assert 'data-checkpoint="7"' in form_of(seed_page, "next")
    assert form_of(seed_page, "leaves").count('type="checkbox" name="choice"') == 3
    assert form_of(seed_page, "order").count('<select name="rank-') == 4


def test_prev_and_next_links_follow_the_order(client, seed_page):
    assert 'rel="prev"' not in seed_page
    assert '<a rel="next" href="/lessons/a-products">' in seed_page
    last = client.get("/lessons/a-products").text
    assert '<a rel="prev" href="/lessons/two-paths">' in last
    assert 'rel="next"' not in last


# ***** grading, htmx and plain *****


def post(client, qid: str, data, htmx: bool = True, slug: str = "two-paths"):
    return client.post(f"/lessons/{slug}/questions/{qid}", data=data, headers=HX if htmx else {})


def test_an_htmx_post_gets_only_the_feedback_right(client):
    reply = post(client, "grad-a", {"value": "5", "attempt": "0"})
    assert reply.status_code == 200
    assert "<html" not in reply.text and "<form" not in reply.text
    assert verdict(reply.text) == "right"


def test_an_htmx_post_gets_only_the_feedback_wrong_with_the_hint(client):
    reply = post(client, "grad-a", {"value": "4", "attempt": "0"})
    assert reply.status_code == 200 and "<html" not in reply.text
    assert verdict(reply.text) == "wrong"
    assert "Two paths." in reply.text
    assert "Answer:" not in reply.text
    second = post(client, "grad-a", {"value": "4", "attempt": "1"})
    assert verdict(second.text) == "wrong" and "<strong>Answer:</strong> 5" in second.text


def test_a_malformed_answer_is_a_422_saying_what_to_fix(client):
    reply = post(client, "grad-a", {"value": "five"})
    assert reply.status_code == 422
    assert verdict(reply.text) == "problem"
    assert "is not a number" in html.unescape(reply.text)


def test_an_unknown_question_or_lesson_is_a_404(client):
    assert post(client, "no-such-question", {"value": "5"}).status_code == 404
    assert post(client, "grad-a", {"value": "5"}, slug="no-such-lesson").status_code == 404
    assert post(client, "grad-a", {"value": "5"}, slug="broken").status_code == 404


def test_a_plain_post_gets_the_whole_page_with_the_feedback_in_place(client):
    reply = post(client, "grad-a", {"value": "4", "attempt": "0"}, htmx=False)
    assert reply.status_code == 200
    assert "<html" in reply.text
    form = form_of(reply.text, "grad-a")
    assert verdict(form) == "wrong"
    assert 'name="attempt" value="1"' in form  # the next post counts this wrong answer
    for other in ("next", "leaves", "order"):
        assert "data-verdict" not in form_of(reply.text, other)


def test_a_plain_malformed_post_is_the_whole_page_with_a_422(client):
    reply = post(client, "leaves", {"choice": "7"}, htmx=False)
    assert reply.status_code == 422
    assert "<html" in reply.text and verdict(form_of(reply.text, "leaves")) == "problem"


def test_every_question_type_graded_through_the_page(client, seed_page):
    mul = node_value(form_of(seed_page, "next"), "MulBackward0")
    add = node_value(form_of(seed_page, "next"), "AddBackward0")
    assert verdict(post(client, "next", {"node": mul}).text) == "right"
    assert verdict(post(client, "next", {"node": add}).text) == "wrong"
    assert verdict(post(client, "leaves", {"choice": ["0", "1"]}).text) == "right"
    wrong = post(client, "leaves", {"choice": ["2"]})
    assert verdict(wrong.text) == "wrong" and "d has a grad_fn." in wrong.text
    order = ["AddBackward0", "MulBackward0", "AccumulateGrad(a)", "AccumulateGrad(b)"]
    listed = ranks(form_of(seed_page, "order"), order)
    assert verdict(post(client, "order", listed).text) == "right"
    backwards = ranks(form_of(seed_page, "order"), order[::-1])
    assert verdict(post(client, "order", backwards).text) == "wrong"


def test_reveal_shows_the_answer(client):
    reply = post(client, "grad-a", {"reveal": "1", "attempt": "0"})
    assert reply.status_code == 200
    assert "<strong>Answer:</strong> 5" in reply.text
    assert 'data-replay="8"' in reply.text


# ***** the answer key *****


def test_the_key_has_every_question_and_its_answers(client):
    page = client.get("/lessons/two-paths/key")
    assert page.status_code == 200
    text = page.text
    for prompt in (
        "What is <code>a.grad</code>?",
        "Which node runs next?",
        "Which are leaves?",
        "Order them.",
    ):
        assert prompt in text
    assert "<strong>Answer:</strong> 5" in text
    assert "<code>MulBackward0</code>" in text
    assert "✓" in text and "d has a grad_fn." in text and "Two paths." in text


def test_the_key_without_answers_has_the_questions_only(client):
    text = client.get("/lessons/two-paths/key?answers=false").text
    for prompt in (
        "What is <code>a.grad</code>?",
        "Which node runs next?",
        "Which are leaves?",
        "Order them.",
    ):
        assert prompt in text
    for answer in (
        "Answer:",
        "✓",
        "✗",
        "d has a grad_fn.",
        "Two paths.",
        "Hint:",
        "AccumulateGrad(a)",
    ):
        assert answer not in text, answer
    assert client.get("/lessons/no-such-lesson/key").status_code == 404


# ***** Quiz me on a stored run *****


@pytest.fixture(scope="module")
def quiz_ident(client) -> str:
    reply = client.post("/run", data={"code": SEED_SNIPPET}, headers=HX)
    assert reply.status_code == 200
    return reply.headers["hx-push-url"].removeprefix("/t/")


def test_the_quiz_of_a_run_has_its_generated_questions(client, quiz_ident):
    page = client.get(f"/t/{quiz_ident}/quiz")
    assert page.status_code == 200
    expected = [q.id for q in generated.questions(trace_snippet(SEED_SNIPPET))]
    assert re.findall(r'<form class="check" id="q-([\w-]+)"', page.text) == expected
    assert client.get("/t/nosuchtrace/quiz").status_code == 404


def test_every_node_a_quiz_offers_on_a_network_is_drawn_to_pick(client):
    """A network's trace page draws each module call as one box; its quiz, whose questions may
    ask for any node, opens them all, so every node a question offers is in the graph."""
    reply = client.post("/run", data={"code": BY_SLUG["mlp-training"].code}, headers=HX)
    ident = reply.headers["hx-push-url"].removeprefix("/t/")
    assert 'class="node module' in client.get(f"/t/{ident}").text  # boxed where nothing is asked
    page = client.get(f"/t/{ident}/quiz").text
    offered = set(re.findall(r'name="node" value="([\w-]+)"', page))
    assert offered, "the quiz asks no node question"
    drawn = set(re.findall(r'<g id="([\w-]+)" class="node ', page))
    assert offered - drawn == set()
    assert "Close model" not in page and 'class="node module' not in page


def test_a_generated_question_graded_right_and_wrong(client, quiz_ident):
    asked = generated.questions(trace_snippet(SEED_SNIPPET))
    grad_a = next(q for q in asked if q.fact == "grad a")
    assert grad_a.answer == 5.0  # ∂(a·b + a)/∂a = b + 1 at b = 4
    url = f"/t/{quiz_ident}/quiz/{grad_a.id}"
    assert verdict(client.post(url, data={"value": "5"}, headers=HX).text) == "right"
    assert verdict(client.post(url, data={"value": "3"}, headers=HX).text) == "wrong"
    plain = client.post(url, data={"value": "5"})
    assert "<html" in plain.text and verdict(form_of(plain.text, grad_a.id)) == "right"
    assert client.post(f"/t/{quiz_ident}/quiz/nope", data={"value": "5"}).status_code == 404
    assert client.post("/t/nosuchtrace/quiz/grad-1", data={"value": "5"}).status_code == 404


# ***** junk never makes a 500 *****

JUNK_BODIES = [
    {"value": "9" * 100_000},
    {"value": "1" * 5000, "node": "n" * 5000, "choice": "0" * 5000},
    {"choice": ["0"] * 2000},  # past Starlette's field count: a 400
    {"node": "\x00\x01\x02"},
    {"value": "\u202e5", "node": "<script>alert(1)</script>"},
    {"attempt": "-99999999999999999999999", "value": "5"},
    {"rank-0": "1", "rank-1": "1", "rank-2": "1", "rank-3": "1"},
    {"value": ["1", "2", "3"]},
    {},
]


@pytest.mark.parametrize("qid", ["grad-a", "next", "leaves", "order"])
@pytest.mark.parametrize("body", JUNK_BODIES, ids=range(len(JUNK_BODIES)))
def test_junk_form_fields_are_never_a_500(client, qid, body):
    for htmx in (True, False):
        reply = post(client, qid, body, htmx=htmx)
        assert reply.status_code in (200, 400, 422), (reply.status_code, reply.text[:300])
        assert "<script>alert(1)</script>" not in reply.text


def test_a_file_sent_where_a_form_reads_text_is_a_422_not_a_500(client, quiz_ident):
    """Every form the site reads is text: the answers of a lesson's and of a run's quiz, and
    the snippet /run takes. A multipart post may send a file part in a field's place."""
    asked = generated.questions(trace_snippet(SEED_SNIPPET))
    grad_a = next(q for q in asked if q.fact == "grad a")
    for url, name in [
        ("/lessons/two-paths/questions/grad-a", "value"),
        ("/lessons/two-paths/questions/leaves", "choice"),
        ("/lessons/two-paths/questions/grad-a", "attempt"),
        (f"/t/{quiz_ident}/quiz/{grad_a.id}", "value"),
        ("/run", "code"),
    ]:
        for headers in (HX, {}):
            files = {name: ("answer.txt", b"5", "text/plain")}
            data = {"attempt": "0"} if name != "attempt" else {"value": "5"}
            reply = client.post(url, data=data, files=files, headers=headers)
            assert reply.status_code == 422, (url, name, reply.status_code, reply.text[:300])
            if url != "/run":
                assert f"the field &#39;{name}&#39; was sent as a file" in reply.text
            else:
                assert "The snippet is sent as text, not as a file." in reply.text


@pytest.mark.parametrize("attempt", ["x", "1.5", "2" * 5000])
def test_a_junk_attempt_field_is_a_422_not_a_500(client, attempt):
    reply = post(client, "grad-a", {"value": "5", "attempt": attempt})
    assert reply.status_code == 422, reply.status_code


@pytest.mark.parametrize(
    "raw",
    [
        b"value=%ff%fe%fd",  # percent-encoded bytes that are not UTF-8
        b"value=\xff\xfe\xfd",  # raw bytes that are not UTF-8
        b"value=5&value=5&value=5",
        b"choice=0&choice=0&choice=1",
        b"%zz=1&value=%",
        b"\x00" * 1000,
        b"=" * 5000,
        b"value=" + b"1" * 300_000,
    ],
)
def test_undecodable_and_repeated_bodies_are_never_a_500(client, raw):
    headers = {"Content-Type": "application/x-www-form-urlencoded", **HX}
    for url in ("/lessons/two-paths/questions/grad-a", "/lessons/two-paths/questions/leaves"):
        reply = client.post(url, content=raw, headers=headers)
        assert reply.status_code < 500, (url, reply.status_code, reply.text[:300])


@pytest.mark.parametrize(
    "path",
    [
        "/lessons/" + "a" * 5000,
        "/lessons/%00",
        "/lessons/..%2f..%2fetc",
        "/lessons/two-paths/key?answers=maybe",
        "/lessons/two-paths/questions/" + "q" * 3000,
        "/t/%ff%fe/quiz",
        "/t/" + "x" * 3000 + "/quiz",
    ],
)
def test_junk_addresses_are_never_a_500(client, path):
    for method in ("GET", "POST"):
        reply = client.request(method, path, data={"value": "1"} if method == "POST" else None)
        assert reply.status_code < 500, (method, path, reply.status_code)


def test_a_lesson_with_a_checkpoint_past_the_end_is_not_a_500(tmp_path):
    """It reads (the front matter is valid), but its questions cannot be worked out."""
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "late.md").write_text(replaced("checkpoint: 7", "checkpoint: 99"), encoding="utf-8")
    app = create_app(
        Settings(
            store=StoreSettings(path=tmp_path / "t.db"), session_secret="s", lessons_dir=folder
        )
    )
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
        assert client.get("/lessons/late").status_code < 500
        assert client.post("/lessons/late/questions/grad-a", data={"value": "5"}).status_code < 500


# ***** lessons that end with an error, authors' text, runs with nothing to ask *****


@pytest.fixture(scope="module")
def odd_client(tmp_path_factory):
    folder = tmp_path_factory.mktemp("odd-lessons")
    # a lesson about the error a second backward() raises
    erring = replaced(
        "  print(a.grad.item(), b.grad.item())\n",
        "  print(a.grad.item(), b.grad.item())\n  d.backward()\n",
    )
    erring = replaced("order: 1\n", "order: 1\nends_with: error\n", erring)
    (folder / "second-time.md").write_text(erring, encoding="utf-8")
    # markup in the author's words is shown as text, wherever it is shown
    marked = replaced("prompt: What is `a.grad`?", "prompt: What is <img src=x onerror=alert(1)>?")
    marked = replaced("title: Two paths into a", 'title: "<script>alert(2)</script>"', marked)
    marked = replaced("hint: Two paths.", "hint: <b onclick=x>bold</b>", marked)
    (folder / "marked.md").write_text(marked, encoding="utf-8")
    db = tmp_path_factory.mktemp("odd-db") / "traces.db"
    app = create_app(Settings(store=StoreSettings(path=db), session_secret="s", lessons_dir=folder))
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
        yield client


def test_a_lesson_whose_snippet_ends_with_an_error_has_its_page(odd_client):
    page = odd_client.get("/lessons/second-time")
    assert page.status_code == 200
    assert "Trying to backward through the graph a second time" in page.text
    reply = odd_client.post(
        "/lessons/second-time/questions/grad-a", data={"value": "5"}, headers=HX
    )
    assert verdict(reply.text) == "right"


@pytest.mark.parametrize("url", ["/lessons", "/lessons/marked", "/lessons/marked/key"])
def test_markup_in_an_authors_text_is_escaped(odd_client, url):
    page = odd_client.get(url)
    assert page.status_code == 200
    for raw in ("<script>alert(2)", "<img src=x", "<b onclick"):
        assert raw not in page.text, raw
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page.text


def test_a_hint_with_markup_is_escaped_in_the_feedback(odd_client):
    reply = odd_client.post("/lessons/marked/questions/grad-a", data={"value": "4"}, headers=HX)
    assert verdict(reply.text) == "wrong"
    assert "<b onclick" not in reply.text and "&lt;b onclick=x&gt;bold&lt;/b&gt;" in reply.text


@pytest.mark.parametrize(
    "code",
    [
        "print(1)\n",
        "import torch\na = torch.tensor(1.0, requires_grad=True)\nraise ValueError('x')\n",
    ],
)
def test_a_run_with_nothing_to_ask_says_so(odd_client, code):
    reply = odd_client.post("/run", data={"code": code}, headers=HX)
    ident = reply.headers["hx-push-url"].removeprefix("/t/")
    page = odd_client.get(f"/t/{ident}/quiz")
    assert page.status_code == 200
    assert '<form class="check"' not in page.text
    assert "nothing to ask" in page.text


def test_a_lesson_dropped_in_or_changed_is_served_without_a_restart(tmp_path):
    folder = tmp_path / "lessons"
    folder.mkdir()
    settings = Settings(
        store=StoreSettings(path=tmp_path / "traces.db"), session_secret="s", lessons_dir=folder
    )
    with TestClient(create_app(settings), base_url="http://localhost") as client:
        assert client.get("/lessons/products").status_code == 404
        (folder / "products.md").write_text(PRODUCTS, encoding="utf-8")
        assert "Products of products" in client.get("/lessons").text
        assert (
            client.post("/lessons/products/questions/grad-b", data={"value": "9"}).status_code
            == 200
        )
        # the author fixes the question: the page and its grading follow the file
        changed = PRODUCTS.replace("prompt: What is `b.grad`?", "prompt: And `b.grad` is?")
        changed = changed.replace("answer: 9", "answer: 9\n    tolerance: 0.5")
        (folder / "products.md").write_text(changed, encoding="utf-8")
        page = client.get("/lessons/products").text
        assert "And <code>b.grad</code> is?" in page
        graded = client.post(
            "/lessons/products/questions/grad-b", data={"value": "9.4"}, headers=HX
        )
        assert 'data-verdict="right"' in graded.text  # within the new tolerance
        (folder / "products.md").unlink()
        assert client.get("/lessons/products").status_code == 404


def test_a_learner_over_their_quota_still_opens_a_lesson(tmp_path, lessons_dir):
    settings = Settings(
        store=StoreSettings(path=tmp_path / "traces.db"),
        session_secret="s",
        lessons_dir=lessons_dir,
        limits=LimitsSettings(session_quota_traces=0),  # nothing new may be stored for this browser
    )
    with TestClient(create_app(settings), base_url="http://localhost") as client:
        refused = client.post("/run", data={"code": "import torch\nprint(1)\n"})
        assert refused.status_code == 429
        assert client.get("/lessons/two-paths").status_code == 200  # the site's own snippet


def test_a_lesson_whose_answer_contradicts_its_fact_asks_nothing_and_logs_why(tmp_path, caplog):
    # b.grad is 9 (d = a·b·a, a = 3): a lesson that says 6 must not grade 6 "Right"
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "lying.md").write_text(PRODUCTS.replace("answer: 9", "answer: 6"), encoding="utf-8")
    app = create_app(
        Settings(
            store=StoreSettings(path=tmp_path / "traces.db"), session_secret="s", lessons_dir=folder
        )
    )
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
        with caplog.at_level("ERROR", logger="gradtrace.lessons"):
            page = client.get("/lessons/lying")
        assert page.status_code == 200
        assert "quick checks are being fixed" in page.text
        assert 'id="q-grad-b"' not in page.text
        assert "the trace says 9" in caplog.text and "lying.md" in caplog.text
        answer = client.post("/lessons/lying/questions/grad-b", data={"value": "6"}, headers=HX)
        assert answer.status_code == 409
        assert "Right" not in answer.text


def test_question_text_reads_as_written(tmp_path):
    """In-place-and-versions: order items and choices that mix words and `code` show code, not
    backticks, each choice's text in one piece beside its box (a flex row made columns of
    "b.mul_(" and "1)"), and a right answer whose own note says "Right:" is not "Right. Right:"."""
    root = Path(__file__).resolve().parents[3]
    app = create_app(
        Settings(
            store=StoreSettings(path=tmp_path / "t.db"),
            session_secret="s",
            lessons_dir=root / "lessons",
        )
    )
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
        page = client.get("/lessons/in-place-and-versions").text
        order = form_of(page, "sequence")
        assert "`" not in re.sub(r'aria-label="[^"]*"', "", order)
        assert "<code>c = b * b</code> saves <code>b</code>" in order
        assert 'aria-label="Position of c = b * b saves b and notes version 0"' in order
        choices = form_of(page, "which-safe")
        mul = "<code>b.mul_(1)</code>, since multiplying by one changes nothing"
        assert f'value="3"> <span>{mul}</span>' in choices
        feedback = client.post(
            "/lessons/in-place-and-versions/questions/which-safe",
            data={"choice": ["0", "1"]},
            headers=HX,
        ).text
        assert "Right: a new tensor" in feedback and "Right." not in feedback
        key = client.get("/lessons/in-place-and-versions/key").text
        assert "<code>c.backward()</code> reaches MulBackward0(c) →" in key
