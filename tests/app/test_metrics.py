"""/metrics: what it counts moves by the right amount as runs, pages and requests happen, and
only this machine (and the networks configured) may read it. Real sandbox, real render pool."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app import execution
from app.config import Networks, Settings, StoreSettings
from app.main import create_app
from app.sandbox import SandboxBusy

SEED = """import torch
a = torch.tensor(2.0, requires_grad=True)
(a * a).backward()
print(a.grad.item())
"""
FAILING = "import torch\ntorch.ones(3) + torch.ones(2)\n"
LOOPBACK = ("127.0.0.1", 50000)


def _client(tmp_path, peer=LOOPBACK, **settings) -> TestClient:
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db"), **settings))
    return TestClient(app, base_url="http://localhost", client=peer)


@pytest.fixture
def client(tmp_path):
    return _client(tmp_path)


def scrape(client: TestClient) -> dict[tuple, float]:
    """Every sample of /metrics: (name, sorted labels) -> value."""
    answer = client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=")
    samples = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            samples[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def moved(before: dict, after: dict, name: str, **labels) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def test_a_run_moves_the_run_sandbox_and_http_metrics(client):
    before = scrape(client)
    assert client.post("/api/traces", json={"code": SEED}).status_code == 200
    assert client.post("/api/traces", json={"code": FAILING}).status_code == 200
    after = scrape(client)

    def since(name: str, **labels) -> float:
        return moved(before, after, name, **labels)

    assert since("gradtrace_runs_total", status="ok") == 1
    assert since("gradtrace_runs_total", status="error") == 1
    assert since("gradtrace_sandbox_run_seconds_count") == 2
    assert since("gradtrace_sandbox_queue_wait_seconds_count") == 2
    assert since("gradtrace_sandbox_run_seconds_sum") > 0
    route = {"method": "POST", "route": "/api/traces"}
    assert since("gradtrace_http_requests_total", **route, status="200") == 2
    assert since("gradtrace_http_request_duration_seconds_count", **route) == 2
    # the first scrape itself was counted, by its route's template
    assert since("gradtrace_http_requests_total", method="GET", route="/metrics", status="200") == 1
    assert since("gradtrace_store_operation_seconds_count", operation="put") == 2
    assert value(after, "gradtrace_store_traces") == 2
    assert value(after, "gradtrace_store_bytes") == client.app.state.store.total_bytes() > 0


def test_the_same_code_again_is_no_run(client):
    client.post("/api/traces", json={"code": SEED})
    before = scrape(client)
    client.post("/api/traces", json={"code": SEED})
    after = scrape(client)
    assert value(after, "gradtrace_runs_total", status="ok") == value(
        before, "gradtrace_runs_total", status="ok"
    )
    find = {"operation": "find"}
    assert value(after, "gradtrace_store_operation_seconds_count", **find) == (
        value(before, "gradtrace_store_operation_seconds_count", **find) + 1
    )


def test_a_page_is_drawn_once_then_answered_from_memory(client):
    url = client.post("/api/traces", json={"code": SEED}).json()["url"]
    before = scrape(client)
    assert client.get(url).status_code == 200
    assert client.get(url).status_code == 200
    after = scrape(client)
    drawn = {"kind": "page", "outcome": "ok"}
    assert moved(before, after, "gradtrace_render_seconds_count", **drawn) == 1
    assert moved(before, after, "gradtrace_page_cache_misses_total") == 1
    assert moved(before, after, "gradtrace_page_cache_hits_total") == 1
    page = {"method": "GET", "route": "/t/{ident}", "status": "200"}
    assert value(after, "gradtrace_http_requests_total", **page) == 2  # not one per trace id


def test_an_unknown_path_is_counted_as_unmatched(client):
    client.get("/no/such/page/1")
    client.get("/no/such/page/2")
    samples = scrape(client)
    unmatched = {"method": "GET", "route": "unmatched", "status": "404"}
    assert value(samples, "gradtrace_http_requests_total", **unmatched) == 2


def test_a_made_up_method_is_counted_as_other_whatever_its_name(client):
    for n in range(3):
        client.request(f"BREW{n}", "/")
    samples = scrape(client)
    other = {"method": "other", "route": "/", "status": "405"}
    assert value(samples, "gradtrace_http_requests_total", **other) == 3
    assert not any("BREW" in str(labels) for _, labels in samples)


def test_a_busy_refusal_is_counted_by_what_was_full(client, monkeypatch):
    async def refuse(code, requester):
        raise SandboxBusy(503, 3, "The server is busy running snippets; try again.")

    monkeypatch.setattr(execution, "run_snippet_async", refuse)
    answer = client.post("/api/traces", json={"code": "print('refused')"})
    assert answer.status_code == 503
    samples = scrape(client)
    assert value(samples, "gradtrace_busy_answers_total", reason="sandbox") == 1
    refused = {"method": "POST", "route": "/api/traces", "status": "503"}
    assert value(samples, "gradtrace_http_requests_total", **refused) == 1


def test_each_app_counts_from_zero(tmp_path):
    first = _client(tmp_path / "one")
    first.post("/api/traces", json={"code": SEED})
    second = _client(tmp_path / "two")
    assert value(scrape(second), "gradtrace_runs_total", status="ok") == 0
    assert value(scrape(first), "gradtrace_runs_total", status="ok") == 1


@pytest.mark.parametrize(
    ("peer", "forwarded_for", "settings", "allowed"),
    [
        (("127.0.0.1", 1), None, {}, True),
        (("::1", 1), None, {}, True),
        (("203.0.113.9", 1), None, {}, False),
        (("testclient", 1), None, {}, False),  # not an address: nobody we know
        (("203.0.113.9", 1), None, {"metrics_networks": Networks("203.0.113.0/24")}, True),
        (("198.51.100.7", 1), None, {"metrics_networks": Networks("203.0.113.0/24")}, False),
        # through a proxy on this machine, the world is not loopback
        (("127.0.0.1", 1), "198.51.100.7", {"trusted_proxies": Networks("127.0.0.1")}, False),
        (("127.0.0.1", 1), "127.0.0.1", {"trusted_proxies": Networks("127.0.0.1")}, True),
        # an untrusted peer's X-Forwarded-For is not believed
        (("203.0.113.9", 1), "127.0.0.1", {}, False),
    ],
)
def test_metrics_are_for_this_machine_and_the_networks_named(
    tmp_path, peer, forwarded_for, settings, allowed
):
    client = _client(tmp_path, peer, **settings)
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    answer = client.get("/metrics", headers=headers)
    assert answer.status_code == (200 if allowed else 404)
    assert ("gradtrace_http_requests_total" in answer.text) is allowed


def test_metrics_names_carry_the_prefix_and_their_units(client):
    client.post("/api/traces", json={"code": SEED})
    text = client.get("/metrics").text
    names = {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")}
    assert names and all(name.startswith("gradtrace_") for name in names)
    for line in text.splitlines():
        if line.startswith("# TYPE") and line.split()[3] == "histogram":
            assert line.split()[2].endswith("_seconds"), line


def test_exports_are_counted_by_format_and_timed_when_drawn(client):
    ident = client.post("/api/traces", json={"code": SEED}).json()["id"]
    for _ in range(2):  # the second is the kept file: answered, not drawn again
        assert client.get(f"/t/{ident}.svg").status_code == 200
    assert client.get(f"/t/{ident}/export.html").status_code == 200
    assert client.get(f"/t/{ident}/export.html?view=nope").status_code == 422  # not a file
    samples = scrape(client)
    assert value(samples, "gradtrace_exports_total", format="svg") == 2
    assert value(samples, "gradtrace_exports_total", format="html") == 1
    assert value(samples, "gradtrace_export_seconds_count", format="svg") == 1
    assert value(samples, "gradtrace_export_seconds_count", format="html") == 1
    drawn = {"kind": "export", "outcome": "ok"}
    assert value(samples, "gradtrace_render_seconds_count", **drawn) == 1


def test_classes_are_counted_as_they_start_gain_members_and_record_answers(client):
    lesson = "define-by-run"
    before = scrape(client)
    client.post("/classes", data={"lesson": lesson})
    teach = client.post("/classes", data={"lesson": lesson}, follow_redirects=True)
    code = teach.text.split("data-join-code>")[1].split("<")[0]
    client.post("/join", data={"code": code, "name": "Ada"})
    answer = {"choice": "0", "attempt": "0"}
    assert client.post(f"/lessons/{lesson}/questions/predict-y-grad-fn", data=answer).is_success
    after = scrape(client)
    assert moved(before, after, "gradtrace_class_events_total", event="started") == 2
    assert moved(before, after, "gradtrace_class_events_total", event="joined") == 1
    assert moved(before, after, "gradtrace_class_events_total", event="answered") == 1
    assert ("gradtrace_class_streams", ()) in after  # none open: read, and 0
    assert value(after, "gradtrace_class_streams") == 0


def test_every_metric_is_in_the_deploying_guide_and_every_one_there_is_served(client):
    client.post("/api/traces", json={"code": SEED})
    text = client.get("/metrics").text
    # a counter's family is named with or without the `_total` its samples carry
    served = {
        line.split()[2].removesuffix("_total")
        for line in text.splitlines()
        if line.startswith("# TYPE")
    }
    guide = (Path(__file__).resolve().parents[2] / "docs" / "deploying.md").read_text()
    row = re.compile(r"^\| `(gradtrace_\w+)` \| (?:counter|gauge|histogram) \|", re.M)
    listed = {name.removesuffix("_total") for name in row.findall(guide)}
    assert served == listed
