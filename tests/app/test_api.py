"""The JSON API, through FastAPI's TestClient, on a real SQLite file."""

import pytest
from fastapi.testclient import TestClient

from app.config import Settings, StoreSettings
from app.main import create_app

SEED = """import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a * b + a
d.backward()
print(a.grad.item(), b.grad.item())
"""


@pytest.fixture
def client(tmp_path):
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db")))
    return TestClient(app, base_url="http://localhost")


def test_posting_code_answers_its_id_url_and_trace(client):
    answer = client.post("/api/traces", json={"code": SEED})
    assert answer.status_code == 200
    body = answer.json()
    assert body["url"] == f"/t/{body['id']}"
    assert body["trace"]["stdout"] == "5.0 3.0\n"
    assert body["trace"]["outcome"] == {"status": "ok"}


def test_a_stored_trace_is_fetched_by_id(client):
    ident = client.post("/api/traces", json={"code": SEED}).json()["id"]
    answer = client.get(f"/api/traces/{ident}")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["code"] == SEED


def test_the_same_code_gets_the_same_id_without_running_again(client, monkeypatch):
    first = client.post("/api/traces", json={"code": SEED}).json()

    async def must_not_run(code, requester):
        raise AssertionError("stored code was run again")

    monkeypatch.setattr("app.execution.run_snippet_async", must_not_run)
    second = client.post("/api/traces", json={"code": SEED}).json()
    assert second["id"] == first["id"]
    assert second["trace"] == first["trace"]


def test_a_failing_snippet_is_a_200_with_the_failure_in_the_outcome(client):
    code = "import torch\ntorch.ones(3) + torch.ones(2)"
    answer = client.post("/api/traces", json={"code": code})
    assert answer.status_code == 200
    outcome = answer.json()["trace"]["outcome"]
    assert outcome["status"] == "error"
    assert outcome["type"] == "RuntimeError"


def test_oversize_code_is_413_with_a_json_reason(client):
    answer = client.post("/api/traces", json={"code": "#" * 20_001})
    assert answer.status_code == 413
    assert "20,000" in answer.json()["detail"]


@pytest.mark.parametrize("body", [{"code": 12}, {}, {"code": "x", "extra": 1}, ["code"]])
def test_wrong_shapes_are_422(client, body):
    assert client.post("/api/traces", json=body).status_code == 422


def test_an_unknown_id_is_404_with_a_json_reason(client):
    answer = client.get("/api/traces/doesnotexist")
    assert answer.status_code == 404
    assert "doesnotexist" in answer.json()["detail"]


def test_an_ending_caused_by_load_is_not_kept(client, monkeypatch):
    runs = []

    async def overloaded(code, requester):
        runs.append(code)
        return {"outcome": {"status": "wall_limit", "message": "too slow"}}

    monkeypatch.setattr("app.execution.run_snippet_async", overloaded)
    first = client.post("/api/traces", json={"code": "x = 1"}).json()
    client.post("/api/traces", json={"code": "x = 1"})
    assert len(runs) == 2
    assert client.get(f"/api/traces/{first['id']}").status_code == 404


@pytest.mark.slow
def test_a_run_past_the_event_cap_runs_to_its_end_and_says_where_recording_stopped(client):
    code = (
        "import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x\n"
        "for i in range(25_000):\n    y = y * 1.0000001\nprint(y.item())\n"
    )
    trace = client.post("/api/traces", json={"code": code}).json()["trace"]
    assert trace["outcome"] == {"status": "ok"} and trace["stdout"] == "1.0029802322387695\n"
    assert trace["limits"] == {"truncated": True, "max_events": 20_000, "stopped_line": 5}
