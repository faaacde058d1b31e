"""A run of 404s on trace paths (or join codes) from one address is throttled
(app/not_found.py)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

import app.not_found
from app.config import Settings, StoreSettings
from app.main import create_app
from app.not_found import LIMIT, WINDOW, NotFoundThrottle
from app.sandbox import Requester

UNKNOWN = [f"/api/traces/{n:0>16}" for n in range(LIMIT)]


@pytest.fixture
def server(tmp_path):
    return create_app(
        Settings(store=StoreSettings(path=tmp_path / "traces.db"), session_secret="s")
    )


def test_past_a_run_of_unknown_ids_an_address_gets_429_and_others_do_not(server):
    stored, _ = server.state.store.put("print(1)", {"code": "print(1)"})
    guesser = TestClient(server, base_url="http://localhost", client=("192.0.2.1", 1))
    other = TestClient(server, base_url="http://localhost", client=("192.0.2.2", 1))
    assert [guesser.get(path).status_code for path in UNKNOWN] == [404] * LIMIT
    for path in ("/api/traces/2222222222222222", "/t/2222222222222222", "/embed/x"):
        refused = guesser.get(path)
        assert refused.status_code == 429, path
        assert 1 <= int(refused.headers["retry-after"]) <= WINDOW
    # a trace that is there is refused too: the answer must not tell it apart
    assert guesser.get(f"/api/traces/{stored}").status_code == 429
    assert guesser.get("/api/traces/2222222222222222").json()["detail"].startswith("Too many")
    assert guesser.get("/").status_code == 200  # only trace paths are throttled
    assert other.get(UNKNOWN[0]).status_code == 404
    assert other.get(f"/api/traces/{stored}").status_code == 200


def test_guessing_class_join_codes_is_throttled_as_unknown_traces_are(server):
    """A join code is six characters, for typing off a projector: tried one after another,
    codes would find classes to join, so a wrong one counts as a miss."""
    lesson = server.state.lessons.library().lessons[0].slug
    teacher = TestClient(server, base_url="http://localhost", client=("192.0.2.3", 1))
    started = teacher.post("/classes", data={"lesson": lesson}, follow_redirects=True)
    code = started.text.split("data-join-code>")[1].split("<")[0]
    guesser = TestClient(server, base_url="http://localhost", client=("192.0.2.1", 1))
    wrong = ("ZZZZZ" + chr(ord("A") + n % 20) for n in range(LIMIT))
    assert {guesser.post("/join", data={"code": c}).status_code for c in wrong} == {404}
    refused = guesser.post("/join", data={"code": code}, follow_redirects=False)  # too late
    assert refused.status_code == 429 and "class codes" in refused.text
    joined = TestClient(server, base_url="http://localhost", client=("192.0.2.2", 1))
    assert joined.post("/join", data={"code": code}, follow_redirects=False).status_code == 303


def test_an_ipv6_client_is_throttled_by_its_64(server):
    one = TestClient(server, base_url="http://localhost", client=("2001:db8:1:1::1", 1))
    neighbour = TestClient(server, base_url="http://localhost", client=("2001:db8:1:1::2", 1))
    for path in UNKNOWN:
        one.get(path)
    assert neighbour.get(UNKNOWN[0]).status_code == 429


def _throttled(clock) -> tuple[TestClient, NotFoundThrottle]:
    """The throttle alone, over an app where /t/here is found and any other /t/ path is not,
    behind a stand-in for name_the_client that names the client by its X-Address header."""

    async def found(request):
        known = request.path_params["ident"] == "here"
        return PlainTextResponse("a trace" if known else "no trace", 200 if known else 404)

    inner = Starlette(routes=[Route("/t/{ident}", found)])
    throttle = NotFoundThrottle(inner, limit=3, window=60.0, clock=clock)

    async def named(scope, receive, send):
        address = dict(scope["headers"]).get(b"x-address", b"a").decode()
        scope.setdefault("state", {})["requester"] = Requester(f"address:{address}", address)
        await throttle(scope, receive, send)

    return TestClient(named), throttle


def test_the_window_slides_and_found_traces_do_not_count():
    now = [1000.0]
    client, _ = _throttled(lambda: now[0])
    for _ in range(10):
        assert client.get("/t/here").status_code == 200
    for _ in range(3):
        now[0] += 10
        assert client.get("/t/gone").status_code == 404
    refused = client.get("/t/here")
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "40"  # the first miss leaves the window in 40 s
    now[0] += 40
    assert client.get("/t/here").status_code == 200
    assert client.get("/t/gone").status_code == 404  # one more miss: three in the window again
    assert client.get("/t/here").status_code == 429


def test_the_table_of_addresses_is_bounded(monkeypatch):
    monkeypatch.setattr(app.not_found, "MAX_CLIENTS", 5)
    client, throttle = _throttled(lambda: 0.0)
    for n in range(50):
        client.get("/t/gone", headers={"X-Address": f"10.0.0.{n}"})
    assert len(throttle._misses) == 5
    assert client.get("/t/gone", headers={"X-Address": "10.0.0.49"}).status_code == 404
