"""Logs: one JSON object per line, each with its request's id, the id every answer echoes;
the sandbox's reader thread and the render pool write their lines under it too."""

from __future__ import annotations

import io
import json
import logging

import pytest
from fastapi.testclient import TestClient

from app import logs, request_ids
from app.config import Networks, Settings, StoreSettings
from app.main import create_app

SEED = "import torch\nx = torch.ones(2, requires_grad=True)\nx.sum().backward()\n"


def _client(tmp_path, **settings) -> TestClient:
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db"), **settings))
    return TestClient(app, base_url="http://localhost", client=("127.0.0.1", 50000))


def _lines(caplog, logger: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == logger]


def test_a_runs_log_line_carries_the_id_its_answer_shows(tmp_path, caplog):
    client = _client(tmp_path)
    with caplog.at_level(logging.INFO):
        answer = client.post("/api/traces", json={"code": SEED})
    ident = answer.headers["x-request-id"]
    assert len(ident) == 32
    ran = [r for r in _lines(caplog, "gradtrace.sandbox") if "ended" in r.getMessage()]
    # written on the sandbox's reader thread, which the request's context does not reach
    assert [(r.request_id, r.status) for r in ran] == [(ident, "ok")]
    assert ran[0].threadName != "MainThread"
    watched = _lines(caplog, "gradtrace.http")
    assert [(r.request_id, r.route, r.status) for r in watched] == [(ident, "/api/traces", 200)]


def test_a_renders_log_line_carries_its_requests_id(tmp_path, caplog):
    client = _client(tmp_path)
    url = client.post("/api/traces", json={"code": SEED}).json()["url"]
    with caplog.at_level(logging.INFO):
        answer = client.get(url)
    drawn = _lines(caplog, "gradtrace.render")
    assert [(r.request_id, r.render_kind) for r in drawn] == [
        (answer.headers["x-request-id"], "page")
    ]


def test_every_request_gets_an_id_of_its_own(tmp_path):
    client = _client(tmp_path)
    ids = {client.get("/healthz").headers["x-request-id"] for _ in range(3)}
    assert len(ids) == 3
    refused = client.get("/", headers={"Host": "evil.example"})  # refused outside the app
    assert refused.status_code == 400
    assert refused.headers["x-request-id"] not in ids


@pytest.mark.parametrize(
    ("trusted", "sent", "kept"),
    [
        ("127.0.0.1", "proxy-id-1234", True),
        ("", "proxy-id-1234", False),  # anyone could write lines under someone else's id
        ("127.0.0.1", "has spaces\tand tabs", False),
        ("127.0.0.1", "x" * 129, False),
    ],
)
def test_an_incoming_id_is_believed_only_from_a_trusted_proxy(tmp_path, trusted, sent, kept):
    client = _client(tmp_path, trusted_proxies=Networks(trusted))
    echoed = client.get("/healthz", headers={"X-Request-ID": sent}).headers["x-request-id"]
    assert (echoed == sent) is kept
    assert request_ids._ACCEPTED.fullmatch(echoed)


def test_a_log_line_is_one_json_object_with_the_request_id_and_extras():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JSONFormatter())
    logger = logging.getLogger("gradtrace.test_logs")
    logger.addHandler(handler)
    logger.propagate = False
    logs.stamp_request_ids()
    try:
        with request_ids.bound("abc123"):
            try:
                raise ValueError("line one\nline two")
            except ValueError:
                logger.error("failed: %s", "\ud800 \x1b[31m", exc_info=True, extra={"run": 7})
        logger.warning("outside")
    finally:
        logger.removeHandler(handler)
    first, second = stream.getvalue().splitlines()
    line = json.loads(first)
    assert line["request_id"] == "abc123"
    assert line["level"] == "error"
    assert line["logger"] == "gradtrace.test_logs"
    assert line["message"] == "failed: \ud800 \x1b[31m"
    assert line["run"] == 7
    assert "ValueError: line one\nline two" in line["exception"]
    assert "request_id" not in json.loads(second)
