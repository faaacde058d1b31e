"""Live runs (POST /live, /live/keep): run as the learner types, stored only when kept."""

import re

import pytest
from fastapi.testclient import TestClient

from app import execution
from app.config import LimitsSettings, Settings, StoreSettings
from app.main import create_app
from app.recent_snippets import RecentSnippets
from app.sandbox import SandboxBusy

CODE = "import torch\nb = torch.tensor({}, requires_grad=True)\n(b * b).backward()\nprint(b.grad)\n"


def make_client(tmp_path, **limits) -> TestClient:
    """A client whose requests share one event loop (the render workers' pipes are its)."""
    settings = Settings(
        store=StoreSettings(path=tmp_path / "traces.db"), limits=LimitsSettings(**limits)
    )
    return TestClient(create_app(settings), base_url="http://localhost")


@pytest.fixture
def client(tmp_path):
    with make_client(tmp_path) as client:
        yield client


def stored(client, ident: str) -> bool:
    return client.app.state.traces.store.has(ident)


def test_a_live_run_answers_the_result_partial_and_stores_nothing(client):
    code = CODE.format("2.0")
    answer = client.post("/live", data={"code": code})
    assert answer.status_code == 200
    assert "<html" not in answer.text and "<grad-player" in answer.text
    assert "tensor(4.)" in answer.text
    ident = answer.headers["x-trace-id"]
    assert ident == client.app.state.traces.store.public_id(code)
    assert answer.headers["x-trace-stored"] == "0"
    assert answer.headers["cache-control"] == "no-store"
    assert not stored(client, ident)
    assert client.get(f"/api/traces/{ident}").status_code == 404


def test_keeping_a_live_run_stores_it_under_the_id_it_was_shown_with(client):
    code = CODE.format("5.0")
    ident = client.post("/live", data={"code": code}).headers["x-trace-id"]
    kept = client.post("/live/keep", data={"code": code})
    assert kept.status_code == 200
    assert kept.json() == {"id": ident, "url": f"/t/{ident}", "stored": True}
    assert stored(client, ident)
    # and a live run of stored code says so, and is answered from the store
    again = client.post("/live", data={"code": code})
    assert again.headers["x-trace-id"] == ident and again.headers["x-trace-stored"] == "1"


def test_the_page_of_a_live_run_never_kept_stores_it_instead_of_a_404(client):
    code = CODE.format("7.0")
    ident = client.post("/live", data={"code": code}).headers["x-trace-id"]
    page = client.get(f"/t/{ident}")
    assert page.status_code == 200
    assert "tensor(14.)" in page.text
    assert stored(client, ident)
    # an id no live run had is still nothing
    assert client.get("/t/" + "a" * len(ident)).status_code == 404


def test_the_quiz_of_a_live_run_never_kept_stores_it_instead_of_a_404(client):
    """ "Quiz me" opened in a new tab goes past the page's keeping: its address keeps it."""
    ident = client.post("/live", data={"code": CODE.format("8.0")}).headers["x-trace-id"]
    assert not stored(client, ident)
    quiz = client.get(f"/t/{ident}/quiz")
    assert quiz.status_code == 200 and "form" in quiz.text
    assert stored(client, ident)
    assert client.get("/t/" + "a" * len(ident) + "/quiz").status_code == 404


def test_keeping_counts_against_the_storage_quota_and_live_runs_do_not(tmp_path):
    with make_client(tmp_path, session_quota_traces=1) as client:
        quota_applies_to_keeping_only(client)


def quota_applies_to_keeping_only(client) -> None:
    for value in ("1.0", "2.0", "3.0"):  # live runs: no quota is used
        assert client.post("/live", data={"code": CODE.format(value)}).status_code == 200
    assert client.post("/live/keep", data={"code": CODE.format("1.0")}).status_code == 200
    refused = client.post("/live/keep", data={"code": CODE.format("2.0")})
    assert refused.status_code == 429
    assert "retry-after" in refused.headers
    assert client.post("/live", data={"code": CODE.format("4.0")}).status_code == 200


def test_a_snippet_python_cannot_read_is_marked_at_its_line(client):
    answer = client.post("/live", data={"code": "import torch\nb = (1,\n"})
    assert answer.status_code == 422
    problem = re.search(r'data-problem data-line="(\d+)" data-column="(\d+)"', answer.text)
    assert problem is not None and problem.group(1) == "2"
    assert "SyntaxError" in answer.text


@pytest.mark.parametrize("path", ["/live", "/live/keep"])
def test_live_posts_are_checked_as_run_is(client, path):
    assert client.post(path, data={"code": "x = 1\n" * 5000}).status_code == 413
    as_file = client.post(path, files={"code": ("a.py", b"print(1)")})
    assert as_file.status_code == 422
    refused = client.post(path, data={"code": "print(1)"}, headers={"Origin": "https://evil.x"})
    assert refused.status_code == 403


def test_recent_snippets_are_bounded_in_count_and_bytes():
    recent = RecentSnippets(count=3, size=100)
    for n in range(5):
        recent.remember(f"id{n}", f"x = {n}")
    assert len(recent) == 3 and recent.code_of("id0") is None and recent.code_of("id4") == "x = 4"
    recent.code_of("id2")
    recent.remember("big", "y" * 95)  # over the bytes: the oldest go until it fits
    assert recent.code_of("big") is not None and recent.bytes <= 100
    assert recent.code_of("id2") is None
    recent.remember("huge", "z" * 101)  # larger than the whole memory: not kept
    assert recent.code_of("huge") is None and recent.code_of("big") is not None
    recent.forget("big")
    assert recent.code_of("big") is None and recent.bytes == len("x = 4")


def test_live_runs_take_the_same_fair_share_of_the_sandbox_as_run(client, monkeypatch):
    """Both go to the sandbox as the request's requester, so its admission (a share per
    session and address) counts them alike; its refusal is a live run's answer too."""
    asked = []

    async def refuse(code, requester):
        asked.append(requester)
        raise SandboxBusy(429, 4, "You have as many runs going as you may; try again.")

    monkeypatch.setattr(execution, "run_snippet_async", refuse)
    for path in ("/run", "/live"):
        refused = client.post(path, data={"code": CODE.format("9.0")}, headers={"HX-Request": "1"})
        assert refused.status_code == 429, path
        assert refused.headers["retry-after"] == "4"
        assert "as many runs going" in refused.text
    assert len(asked) == 2 and asked[0] == asked[1]  # the same client, counted the same
    assert not stored(client, client.app.state.traces.store.public_id(CODE.format("9.0")))
