"""/healthz reports each part the server needs: the store (reached, and how fast), the
sandbox (its zygote alive, its queue) and the render pool (its workers)."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from app import health
from app.config import Settings, StoreSettings
from app.main import create_app
from app.render_pool import RenderSettings


def _client(tmp_path, **settings) -> TestClient:
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db"), **settings))
    return TestClient(app, base_url="http://localhost")


def test_healthz_reports_the_store_the_sandbox_and_the_render_pool(tmp_path):
    client = _client(tmp_path, render=RenderSettings(workers=3))
    client.post("/api/traces", json={"code": "print(1)"})
    with client:  # the lifespan starts the render workers
        report = client.get("/healthz").json()
    assert report["status"] == "ok"
    assert "layers" in report["sandbox"]  # what was there before stays
    parts = report["components"]
    assert parts["store"]["state"] == "ok"
    assert parts["store"]["latency_ms"] >= 0
    assert parts["store"]["bytes"] == client.app.state.store.total_bytes() > 0
    assert parts["sandbox"] == {"state": "ok", "zygote_alive": True, "in_flight": 0, "queued": 0}
    assert parts["render_pool"] == {"state": "ok", "tasks": 0, "alive": 3, "workers": 3}


def test_a_failing_store_is_reported_and_healthz_still_answers(tmp_path, monkeypatch):
    client = _client(tmp_path)

    def unreachable(ident):
        raise OSError("no route to the database")

    monkeypatch.setattr(client.app.state.health.store, "has", unreachable)
    answer = client.get("/healthz")
    assert answer.status_code == 200
    report = answer.json()
    assert report["status"] == "degraded"
    assert report["components"]["store"] == {
        "state": "failing",
        "error": "OSError",
        "latency_ms": None,
    }


def test_a_slow_store_is_not_waited_for(tmp_path, monkeypatch):
    client = _client(tmp_path)
    monkeypatch.setattr(health, "STORE_PATIENCE", 0.01)
    release = []

    def stuck(ident):
        while not release:  # until the test has its answer
            time.sleep(0.01)
        return False

    monkeypatch.setattr(client.app.state.health.store, "has", stuck)
    try:
        report = client.get("/healthz").json()
    finally:
        release.append(True)
    assert report["status"] == "degraded"
    assert report["components"]["store"]["state"] == "slow"
