"""A full sandbox is a clear HTTP answer: 503 (everyone) or 429 (this client), with Retry-After."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app import execution
from app.config import Settings, StoreSettings
from app.main import create_app
from app.sandbox import SandboxBusy


@pytest.fixture
def client(tmp_path):
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "t.db")))
    with TestClient(app, base_url="http://localhost") as test_client:
        yield test_client


def _busy(status_code: int):
    def refuse(*args, **kwargs):
        raise SandboxBusy(status_code, 7, "The server is busy running snippets; try again.")

    return refuse


@pytest.mark.parametrize("status_code", [429, 503])
def test_the_page_says_busy_and_when_to_retry(client, monkeypatch, status_code):
    async def refuse(code, requester):
        _busy(status_code)()

    monkeypatch.setattr(execution, "run_snippet_async", refuse)  # pages and API alike
    page = client.post("/run", data={"code": "print(1)"}, headers={"HX-Request": "true"})
    assert page.status_code == status_code
    assert page.headers["retry-after"] == "7"
    assert "busy running snippets" in page.text


def test_the_api_says_busy_and_when_to_retry(client, monkeypatch):
    async def refuse(code, requester):
        _busy(503)()

    monkeypatch.setattr(execution, "run_snippet_async", refuse)
    answer = client.post("/api/traces", json={"code": "print('not stored yet')"})
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "7"
    assert answer.json() == {"detail": "The server is busy running snippets; try again."}


def test_a_page_run_goes_through_the_sandbox(client):
    page = client.post("/run", data={"code": "import os\n"}, headers={"HX-Request": "true"})
    assert page.status_code == 200
    assert "gradtrace snippets can import torch" in page.text
