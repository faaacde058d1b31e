"""Sessions and quotas over HTTP: a signed anonymous cookie tells a classroom's browsers apart."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from app import execution
from app.config import LimitsSettings, Networks, Settings, StoreSettings
from app.main import create_app
from app.sessions import COOKIE, SALT, Sessions, Standing
from engine.tracer import trace_snippet


def _settings(tmp_path, secret: str = "s", **limits) -> Settings:
    """Settings in which a session counts as a client of its own from its first request: these
    tests are about sessions, not about how one earns its place (tested below on its own)."""
    return Settings(
        store=StoreSettings(path=tmp_path / "traces.db"),
        session_secret=secret,
        limits=LimitsSettings(**{"session_settle_seconds": 0.0, **limits}),
    )


def _client(app) -> TestClient:
    return TestClient(app, base_url="http://localhost")


@pytest.fixture
def app(tmp_path):
    return create_app(_settings(tmp_path, secret="test-secret"))


@pytest.fixture
def seen(monkeypatch):
    """Who each run was for, with the sandbox replaced by an instant fake run."""
    requesters = []

    async def fake_run(code, requester):
        requesters.append(requester)
        return trace_snippet(code)

    monkeypatch.setattr(execution, "run_snippet_async", fake_run)
    return requesters


def test_a_first_visit_gets_a_signed_http_only_cookie(app):
    answer = _client(app).get("/")
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
    value = answer.cookies[COOKIE]
    assert Sessions("test-secret").session_of(value) is not None
    assert Sessions("another-secret").session_of(value) is None


def test_a_returning_browser_keeps_its_session(app, seen):
    browser = _client(app)
    browser.get("/")
    answer = browser.post("/api/traces", json={"code": "print(1)"})
    assert "set-cookie" not in answer.headers
    browser.post("/api/traces", json={"code": "print(2)"})
    first, second = seen
    assert first.session == second.session and first.session.startswith("session:")


def test_a_forged_or_altered_cookie_counts_for_nothing(app, seen):
    browser = _client(app)
    browser.get("/")
    genuine = browser.cookies[COOKIE]
    for forged in ("anything", genuine[:-2] + ("AA" if genuine[-2:] != "AA" else "BB")):
        browser.cookies.set(COOKIE, forged)
        answer = browser.post("/api/traces", json={"code": f"print({forged!r})"})
        assert answer.status_code == 200
        assert seen[-1].session == f"address:{seen[-1].address}"  # its address's share
        assert COOKIE in answer.headers["set-cookie"]  # and a real one for next time


def test_thirty_browsers_behind_one_address_are_all_served(tmp_path):
    app = create_app(_settings(tmp_path))
    browsers = [_client(app) for _ in range(30)]
    with browsers[0]:  # the app's startup: the sandbox is warm before the class arrives
        for browser in browsers:
            browser.get("/")

        def press_run(n: int) -> list[int]:
            code = f"import torch\nx = torch.tensor({n}.0, requires_grad=True)\n(x * x).backward()"
            return [
                browsers[n].post("/api/traces", json={"code": f"{code}\nprint({k})"}).status_code
                for k in range(3)
            ]

        with ThreadPoolExecutor(30) as pool:
            codes = [code for codes in pool.map(press_run, range(30)) for code in codes]
    assert codes == [200] * 90


def test_a_session_past_its_quota_of_new_traces_is_told_so(tmp_path, seen):
    settings = _settings(tmp_path, session_quota_traces=3)
    app = create_app(settings)
    browser, classmate = _client(app), _client(app)
    browser.get("/")
    classmate.get("/")
    for n in range(3):
        assert browser.post("/api/traces", json={"code": f"print({n})"}).status_code == 200
    refused = browser.post("/api/traces", json={"code": "print(3)"})
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 60
    assert "this browser has stored 3 new traces" in refused.json()["detail"].lower()
    page = browser.post("/run", data={"code": "print(3)"}, headers={"HX-Request": "true"})
    assert page.status_code == 429 and "new traces" in page.text
    assert browser.post("/api/traces", json={"code": "print(0)"}).status_code == 200  # stored
    assert classmate.post("/api/traces", json={"code": "print(3)"}).status_code == 200
    assert len(seen) == 4  # the refused ones never reached the sandbox


def test_an_address_past_its_quota_is_refused_whatever_its_sessions(tmp_path, seen):
    settings = Settings(
        store=StoreSettings(path=tmp_path / "traces.db"),
        session_secret="s",
        limits=LimitsSettings(address_quota_traces=4),
    )
    app = create_app(settings)
    for n in range(4):
        assert _client(app).post("/api/traces", json={"code": f"print({n})"}).status_code == 200
    refused = _client(app).post("/api/traces", json={"code": "print(4)"})
    assert refused.status_code == 429 and "your address" in refused.json()["detail"].lower()


def test_an_ipv6_client_is_one_address_for_its_whole_64(tmp_path, seen):
    settings = Settings(
        store=StoreSettings(path=tmp_path / "traces.db"),
        session_secret="s",
        limits=LimitsSettings(address_quota_traces=2),
        trusted_proxies=Networks("127.0.0.1"),
    )
    app = create_app(settings)

    def post_from(address: str, n: int):
        proxy = TestClient(app, base_url="http://localhost", client=("127.0.0.1", 40000))
        headers = {"X-Forwarded-For": address}
        return proxy.post("/api/traces", json={"code": f"print({n})"}, headers=headers)

    assert post_from("2001:db8:1:1::1", 0).status_code == 200
    assert post_from("2001:db8:1:1::1", 1).status_code == 200
    assert post_from("2001:db8:1:1::1", 2).status_code == 429
    # the next address of the same /64 is the same client; the next /64 is another
    assert post_from("2001:db8:1:1::2", 3).status_code == 429
    assert post_from("2001:db8:1:2::1", 4).status_code == 200
    assert {requester.address for requester in seen} == {"2001:db8:1:1::/64", "2001:db8:1:2::/64"}


def test_a_new_session_counts_as_its_address_until_it_has_waited(tmp_path, seen):
    """Cookies cost nothing to mint: one used at once counts as its address, as no cookie does;
    once it is old enough (a learner has read the page), it is a client of its own."""
    app = create_app(_settings(tmp_path, session_settle_seconds=1.0))
    browser = _client(app)
    browser.get("/")
    browser.post("/api/traces", json={"code": "print(1)"})
    time.sleep(1.0)
    browser.post("/api/traces", json={"code": "print(2)"})
    at_once, later = seen
    assert at_once.session == f"address:{at_once.address}"
    assert later.session.startswith("session:")


def test_only_so_many_sessions_of_an_address_earn_a_place(tmp_path, seen):
    """Past its budget, an address's sessions still get their cookies, but count as the
    address: a stock of minted cookies is a few dozen clients at most."""
    app = create_app(_settings(tmp_path, earned_sessions_burst=5, earned_sessions_per_hour=1))
    browsers = [_client(app) for _ in range(8)]
    for n, browser in enumerate(browsers):
        assert COOKIE in browser.get("/").cookies
        browser.post("/api/traces", json={"code": f"print({n})"})
    own = [requester.session.startswith("session:") for requester in seen]
    assert own == [True] * 5 + [False] * 3
    browsers[0].post("/api/traces", json={"code": "print(8)"})  # an earned place is kept
    assert seen[-1].session.startswith("session:")


def test_standing_is_earned_by_age_within_a_budget_that_refills():
    now = [0.0]
    standing = Standing(settle_seconds=2.0, burst=2, per_hour=3600, clock=lambda: now[0])
    assert not standing.earned("a", "young", 1.0)
    assert [standing.earned("a", s, 5.0) for s in ("s1", "s2", "s3")] == [True, True, False]
    assert standing.earned("a", "s1", 5.0)  # kept
    now[0] += 1.0  # one more place a second
    assert standing.earned("a", "s3", 5.0) and not standing.earned("a", "s4", 5.0)
    for n in range(Standing.KEPT_ADDRESSES + 1):
        standing.earned(f"10.{n // 65536}.{n // 256 % 256}.{n % 256}", f"x{n}", 5.0)
    assert len(standing) <= Standing.KEPT_ADDRESSES


def test_a_cookie_says_how_old_it_is_and_an_older_kind_counts_as_old():
    from itsdangerous import Signer

    sessions = Sessions("k")
    session, cookie = sessions.mint()
    found, age = sessions.session_of(cookie)
    assert found == session and 0 <= age < 5
    untimed = Signer("k", salt=SALT).sign("old-session").decode()
    assert sessions.session_of(untimed) == ("old-session", float("inf"))


def test_a_place_asked_of_the_shared_ledger_never_holds_up_the_event_loop(tmp_path):
    """The ledger (the store: a database round trip, a write when a place is taken) is asked
    from a thread: while it answers, the server answers everyone else."""
    import asyncio
    import threading

    import httpx

    app = create_app(_settings(tmp_path))
    store = app.state.store.inner  # the ledger Standing was given
    asking, release, answered = threading.Event(), threading.Event(), threading.Event()
    answered_meanwhile: list[bool] = []
    earn_place = store.earn_place

    def slow_earn_place(*args):
        asking.set()
        release.wait(5)  # on the event loop, this would hold everyone up until it gives up
        answered_meanwhile.append(answered.is_set())
        return earn_place(*args)

    store.earn_place = slow_earn_place

    async def scenario() -> None:
        transport = httpx.ASGITransport(app=app)
        site = "http://localhost"
        async with httpx.AsyncClient(transport=transport, base_url=site) as newcomer:
            cookie = {COOKIE: (await newcomer.get("/healthz")).cookies[COOKIE]}
        async with (
            httpx.AsyncClient(transport=transport, base_url=site, cookies=cookie) as settled,
            httpx.AsyncClient(transport=transport, base_url=site) as others,  # no place to ask
        ):
            asked = asyncio.create_task(settled.get("/healthz"))
            await asyncio.to_thread(asking.wait, 10)
            other = await asyncio.wait_for(others.get("/healthz"), 10)
            if other.status_code == 200:
                answered.set()
            release.set()
            assert (await asked).status_code == 200

    asyncio.run(scenario())
    assert asking.is_set(), "the settled session's place was never asked of the ledger"
    assert answered_meanwhile == [True]
