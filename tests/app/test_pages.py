"""The playground page and its form, through FastAPI's TestClient."""

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app


@pytest.fixture
def client(tmp_path):
    return TestClient(create_app(Settings(db_path=tmp_path / "traces.db")))


def test_the_page_offers_the_seed_example(client):
    page = client.get("/")
    assert page.status_code == 200
    assert "a = torch.tensor(3.0, requires_grad=True)" in page.text
    assert page.headers["x-frame-options"] == "DENY"
    assert "script-src 'self'" in page.headers["content-security-policy"]


def test_a_plain_post_returns_the_whole_page_with_the_output(client):
    page = client.post("/run", data={"code": "import torch\nprint(torch.ones(2) * 3)\n"})
    assert page.status_code == 200
    assert "<html" in page.text
    assert "tensor([3., 3.])" in page.text


def test_an_htmx_post_returns_only_the_partial(client):
    page = client.post("/run", data={"code": "print(1)"}, headers={"HX-Request": "true"})
    assert page.status_code == 200
    assert "<html" not in page.text
    assert "Output" in page.text


def test_what_the_snippet_printed_is_escaped(client):
    page = client.post("/run", data={"code": "print('<script>alert(1)</script>')"})
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text


def test_errors_are_shown_with_their_line(client):
    page = client.post("/run", data={"code": "import torch\n\ntorch.ones(3) + torch.ones(2)\n"})
    assert page.status_code == 200
    assert "Line 3" in page.text
    assert "The size of tensor a (3) must match the size of tensor b (2)" in page.text


def test_oversize_code_is_refused_with_413(client):
    page = client.post("/run", data={"code": "x = 1\n" * 5000})
    assert page.status_code == 413
    assert "longer than 20,000 bytes" in page.text


def test_cross_site_posts_are_refused(client):
    page = client.post("/run", data={"code": "print(1)"},
                       headers={"Origin": "https://evil.example"})
    assert page.status_code == 403


def test_healthz_answers_json(client):
    health = client.get("/healthz").json()
    assert health["status"] == "ok"
    assert health["sandbox"]["mode"] == "zygote"
    assert set(health["sandbox"]["layers"]) >= {"landlock", "seccomp", "namespaces", "rlimits"}
    assert health["sandbox"]["limits"]["cpu_seconds"] > 0
