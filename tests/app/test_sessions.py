"""Sessions and quotas over HTTP: a signed anonymous cookie tells a classroom's browsers apart."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from app import execution
from app.config import Networks, Settings
from app.main import create_app
from app.sessions import COOKIE, MintBudget, Sessions
from engine.tracer import trace_snippet


def _client(app) -> TestClient:
    return TestClient(app, base_url="http://localhost")


@pytest.fixture
def app(tmp_path):
    return create_app(Settings(db_path=tmp_path / "traces.db", session_secret="test-secret"))


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
    app = create_app(Settings(db_path=tmp_path / "traces.db", session_secret="s"))
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
    settings = Settings(db_path=tmp_path / "traces.db", session_secret="s", session_quota_traces=3)
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
    settings = Settings(db_path=tmp_path / "traces.db", session_secret="s", address_quota_traces=4)
    app = create_app(settings)
    for n in range(4):
        assert _client(app).post("/api/traces", json={"code": f"print({n})"}).status_code == 200
    refused = _client(app).post("/api/traces", json={"code": "print(4)"})
    assert refused.status_code == 429 and "your address" in refused.json()["detail"].lower()


def test_an_ipv6_client_is_one_address_for_its_whole_64(tmp_path, seen):
    settings = Settings(
        db_path=tmp_path / "traces.db",
        session_secret="s",
        address_quota_traces=2,
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


def test_an_address_is_given_only_so_many_new_sessions(tmp_path):
    """Cookies minted by the hundred would each be a client of its own: past the budget, a
    cookieless request gets none, and counts as its address."""
    settings = Settings(
        db_path=tmp_path / "traces.db",
        session_secret="s",
        session_mints_burst=5,
        session_mints_per_hour=1,
        trusted_proxies=Networks("127.0.0.1"),
    )
    app = create_app(settings)

    def visit(address: str):
        proxy = TestClient(app, base_url="http://localhost", client=("127.0.0.1", 40000))
        return proxy.get("/", headers={"X-Forwarded-For": address})

    given = [COOKIE in visit("203.0.113.9").cookies for _ in range(8)]
    assert given == [True] * 5 + [False] * 3
    assert COOKIE in visit("203.0.113.10").cookies  # another address has its own budget


def test_mint_budgets_refill_and_forget_full_buckets():
    now = [0.0]
    budget = MintBudget(burst=2, per_hour=3600, clock=lambda: now[0])
    assert [budget.take("a") for _ in range(3)] == [True, True, False]
    now[0] += 1.0  # one more a second
    assert budget.take("a") and not budget.take("a")
    for n in range(MintBudget.KEPT + 1):
        budget.take(f"10.{n // 65536}.{n // 256 % 256}.{n % 256}")
    assert len(budget) <= MintBudget.KEPT
