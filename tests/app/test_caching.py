"""Weight and caching: compression, entity tags and 304s, Cache-Control, and HEAD, through the
real app (TestClient), plus HEAD through a real uvicorn."""

from __future__ import annotations

import gzip
import os

import httpx
import pytest
from fastapi.testclient import TestClient

from app.config import Settings, StoreSettings
from app.examples import BY_SLUG
from app.http_cache import IMMUTABLE, REVALIDATE, STATIC
from app.main import create_app
from app.security import SECURITY_HEADERS
from tests.live_server import free_port, serving, uvicorn_command

SEED = BY_SLUG["two-paths"].code
GZIP = {"Accept-Encoding": "gzip"}
IDENTITY = {"Accept-Encoding": "identity"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return create_app(
        Settings(store=StoreSettings(path=tmp_path_factory.mktemp("db") / "traces.db"))
    )


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app, base_url="http://localhost")


@pytest.fixture(scope="module")
def ident(client):
    return client.post("/api/traces", json={"code": SEED}).json()["id"]


def _tagged_paths(ident: str) -> list[str]:
    return [f"/api/traces/{ident}", f"/t/{ident}", f"/t/{ident}?expand=g1", "/static/player.js"]


def _has_security_headers(answer: httpx.Response) -> bool:
    return all(answer.headers.get(name) == value for name, value in SECURITY_HEADERS.items())


# ***** compression *****


@pytest.mark.parametrize(
    "path",
    ["/", "/t/{ident}", "/api/traces/{ident}", "/static/player.js", "/static/style.css"],
)
def test_answers_are_compressed_when_asked_and_not_when_not(client, ident, path):
    path = path.format(ident=ident)
    packed = client.get(path, headers=GZIP)
    plain = client.get(path, headers=IDENTITY)
    assert packed.status_code == plain.status_code == 200
    assert packed.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain.headers
    # httpx decoded it: the same bytes, and fewer of them on the wire
    assert packed.content == plain.content
    assert int(packed.headers["content-length"]) < len(plain.content)
    for answer in (packed, plain):
        assert "accept-encoding" in answer.headers["vary"].lower()
        assert _has_security_headers(answer)


def test_the_compressed_bytes_are_gzip_of_the_plain_ones(client, ident):
    path = f"/api/traces/{ident}"
    plain = client.get(path, headers=IDENTITY).content
    with client.stream("GET", path, headers=GZIP) as answer:
        raw = b"".join(answer.iter_raw())
    assert raw[:2] == b"\x1f\x8b" and gzip.decompress(raw) == plain


def test_a_small_answer_is_not_compressed(client):
    answer = client.get("/api/traces/" + "a" * 16, headers=GZIP)
    assert answer.status_code == 404
    assert "content-encoding" not in answer.headers
    assert _has_security_headers(answer)


# ***** entity tags and 304s *****


def test_a_stored_trace_is_cached_for_good_under_a_stable_strong_tag(client, ident):
    first = client.get(f"/api/traces/{ident}", headers=IDENTITY)
    second = client.get(f"/api/traces/{ident}", headers=IDENTITY)
    tag = first.headers["etag"]
    assert tag == second.headers["etag"] and tag.startswith('"') and tag.endswith('"')
    assert first.headers["cache-control"] == IMMUTABLE


def test_a_compressed_answer_has_a_tag_of_its_own(client, ident):
    for path in _tagged_paths(ident):
        plain = client.get(path, headers=IDENTITY).headers["etag"]
        packed = client.get(path, headers=GZIP).headers["etag"]
        assert packed == plain[:-1] + '-gzip"', path  # strong tags name bytes


@pytest.mark.parametrize("encoding", [GZIP, IDENTITY], ids=["gzip", "identity"])
def test_a_matching_tag_is_a_304_and_another_a_200(client, ident, encoding):
    for path in _tagged_paths(ident):
        fresh = client.get(path, headers=encoding)
        tag = fresh.headers["etag"]
        again = client.get(path, headers={**encoding, "If-None-Match": tag})
        assert again.status_code == 304, path
        assert again.content == b"" and again.headers["etag"] == tag
        assert again.headers["cache-control"] == fresh.headers["cache-control"]
        assert again.headers["vary"] == fresh.headers["vary"], path
        assert _has_security_headers(again)
        listed = client.get(path, headers={**encoding, "If-None-Match": f'"other", W/{tag}'})
        assert listed.status_code == 304, path  # a list, and a weak form, still match
        other = client.get(path, headers={**encoding, "If-None-Match": '"not-this-one"'})
        assert other.status_code == 200 and other.content == fresh.content, path


def test_the_page_is_revalidated_and_its_tag_names_what_it_is_drawn_from(client, ident, app):
    page = client.get(f"/t/{ident}", headers=IDENTITY)
    assert page.headers["cache-control"] == REVALIDATE
    assert "hx-request" in page.headers["vary"].lower()
    tag = page.headers["etag"]
    assert client.get(f"/t/{ident}", headers=IDENTITY).headers["etag"] == tag
    partial = client.get(f"/t/{ident}", headers={**IDENTITY, "HX-Request": "true"})
    assert partial.headers["etag"] != tag
    # a new version of the app (templates, drawing code) is a new tag for the same trace
    saved = app.state.page_version
    app.state.page_version = saved + "-next"
    try:
        newer = client.get(f"/t/{ident}", headers={**IDENTITY, "If-None-Match": tag})
    finally:
        app.state.page_version = saved
    assert newer.status_code == 200 and newer.headers["etag"] != tag


def test_a_page_with_a_module_opened_has_a_tag_of_its_own(tmp_path):
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db")))
    with TestClient(app, base_url="http://localhost") as client:
        code = BY_SLUG["mlp-training"].code
        network = client.post("/api/traces", json={"code": code}).json()["id"]
        plain = client.get(f"/t/{network}", headers=IDENTITY)
        opened = client.get(f"/t/{network}?expand=m1", headers=IDENTITY)
    assert opened.status_code == 200 and opened.url.query == b"expand=m1"
    assert plain.headers["etag"] != opened.headers["etag"]


def test_a_304_page_is_not_drawn_again(client, ident, app, monkeypatch):
    tag = client.get(f"/t/{ident}", headers=IDENTITY).headers["etag"]

    async def must_not_draw(*args, **kwargs):
        raise AssertionError("a revalidated page was drawn")

    monkeypatch.setattr(app.state.traces, "page", must_not_draw)
    again = client.get(f"/t/{ident}", headers={**IDENTITY, "If-None-Match": tag})
    assert again.status_code == 304


def test_static_files_are_revalidated(client):
    answer = client.get("/static/fold.js", headers=IDENTITY)
    assert answer.headers["cache-control"] == STATIC and answer.headers["etag"]
    assert "last-modified" in answer.headers
    again = client.get("/static/fold.js", headers={"If-None-Match": answer.headers["etag"]})
    assert again.status_code == 304 and again.headers["cache-control"] == STATIC


def test_an_answer_any_cache_may_keep_sets_no_cookie(app, ident):
    stranger = TestClient(app, base_url="http://localhost")
    assert "set-cookie" not in stranger.get(f"/api/traces/{ident}").headers
    assert "set-cookie" not in stranger.get("/static/fold.js").headers
    assert "set-cookie" in stranger.get("/").headers  # pages still start a session


# ***** HEAD *****

HEAD_PATHS = [
    "/",
    "/?example=no-grad",
    "/t/{ident}",
    "/t/{ident}?expand=g1",
    "/t/aaaaaaaaaaaaaaaa",
    "/api/traces/{ident}",
    "/api/traces/aaaaaaaaaaaaaaaa",
    "/healthz",
    "/openapi.json",
    "/static/player.js",
    "/static/no-such-file.js",
    "/run",
    "/api/traces",
]
UNSTABLE = {"date", "set-cookie", "x-request-id"}  # the last: each request has its own


@pytest.mark.parametrize("path", HEAD_PATHS)
@pytest.mark.parametrize("encoding", [GZIP, IDENTITY], ids=["gzip", "identity"])
def test_head_answers_like_get_without_a_body(client, ident, path, encoding):
    path = path.format(ident=ident)
    got = client.get(path, headers=encoding)
    head = client.head(path, headers=encoding)
    assert head.status_code == got.status_code
    assert head.content == b""
    same = {k: v for k, v in got.headers.items() if k not in UNSTABLE}
    assert {k: v for k, v in head.headers.items() if k not in UNSTABLE} == same


def test_head_with_a_matching_tag_is_a_304(client, ident):
    tag = client.get(f"/t/{ident}").headers["etag"]
    assert client.head(f"/t/{ident}", headers={"If-None-Match": tag}).status_code == 304


@pytest.mark.slow
def test_head_through_a_real_server(tmp_path):
    """uvicorn sends no body for HEAD on its own; the length it announces is GET's."""
    port = free_port()
    env = dict(os.environ, GRADTRACE_STORE_PATH=str(tmp_path / "traces.db"))
    with serving(uvicorn_command(port), port, env=env) as (_, url):
        ident = httpx.post(f"{url}/api/traces", json={"code": SEED}, timeout=60).json()["id"]
        for path in (f"/t/{ident}", f"/api/traces/{ident}", "/static/player.js"):
            got = httpx.get(url + path, headers=GZIP)
            head = httpx.head(url + path, headers=GZIP)
            assert head.status_code == got.status_code == 200, path
            assert head.content == b""
            assert head.headers["content-length"] == got.headers["content-length"], path
            assert head.headers["etag"] == got.headers["etag"]
