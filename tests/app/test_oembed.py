"""oEmbed (app/routes/oembed.py) and its discovery on a trace's page, through TestClient."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from fastapi.testclient import TestClient

from app.config import Names, Settings, StoreSettings
from app.main import create_app
from app.sessions import COOKIE

SITE = "http://localhost"
HOSTILE = '# "><script>alert(1)</script>\nimport torch\nx = torch.tensor(2.0, requires_grad=True)\n'


@pytest.fixture
def client(tmp_path):
    settings = Settings(
        store=StoreSettings(path=tmp_path / "traces.db"),
        allowed_hosts=Names("localhost,gradtrace.test"),
    )
    return TestClient(create_app(settings), base_url=SITE)


@pytest.fixture
def ident(client):
    code = "import torch\nw = torch.tensor(2.0, requires_grad=True)\n(w * w).backward()\n"
    return client.post("/api/traces", json={"code": code}).json()["id"]


def oembed(client, url, **params):
    return client.get("/oembed", params={"url": url, **params})


def iframe_of(answer: dict) -> dict[str, str]:
    """The attributes of the one iframe in an answer's html, unescaped."""
    markup = answer["html"]
    assert markup.startswith("<iframe ") and markup.endswith("></iframe>")
    assert markup.count("<") == 2  # the iframe and its end tag, nothing else
    pairs = re.findall(r'([\w-]+)(?:="([^"]*)")?', markup[len("<iframe ") : -len("></iframe>")])
    return {name: html.unescape(value) for name, value in pairs}


def test_a_trace_page_url_answers_a_rich_embed_of_its_embed_page(client, ident):
    answer = oembed(client, f"{SITE}/t/{ident}")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert body["version"] == "1.0" and body["type"] == "rich"
    assert body["provider_name"] == "gradtrace" and body["provider_url"] == f"{SITE}/"
    assert (body["width"], body["height"]) == (800, 500)
    assert body["title"] == "gradtrace: w = torch.tensor(2.0, requires_grad=True)"
    frame = iframe_of(body)
    assert frame["src"] == f"{SITE}/embed/{ident}"
    assert frame["title"] == body["title"]
    assert (frame["width"], frame["height"]) == ("800", "500")
    assert body["thumbnail_url"] == f"{SITE}/t/{ident}.png"
    assert (body["thumbnail_width"], body["thumbnail_height"]) == (640, 400)
    assert body["cache_age"] > 0


def test_the_step_of_a_page_url_or_an_embed_url_goes_into_the_iframe(client, ident):
    by_hash = oembed(client, f"{SITE}/t/{ident}#step=3").json()
    assert iframe_of(by_hash)["src"] == f"{SITE}/embed/{ident}?step=3"
    assert by_hash["thumbnail_url"] == f"{SITE}/t/{ident}.png?step=3"
    by_query = oembed(client, f"{SITE}/t/{ident}?step=2").json()
    assert iframe_of(by_query)["src"] == f"{SITE}/embed/{ident}?step=2"
    # an embed URL keeps its options; a host's own parameters are not carried
    embed = oembed(client, f"{SITE}/embed/{ident}?step=2&theme=dark&controls=none&utm=x").json()
    src = urlsplit(iframe_of(embed)["src"])
    assert src.path == f"/embed/{ident}"
    assert parse_qs(src.query) == {"step": ["2"], "theme": ["dark"], "controls": ["none"]}
    # and what the iframe names is an embed that answers
    assert client.get(src.path + "?" + src.query).status_code == 200


def test_the_iframe_is_scaled_down_to_fit_keeping_its_ratio(client, ident):
    wide = oembed(client, f"{SITE}/t/{ident}", maxwidth="400").json()
    assert (wide["width"], wide["height"]) == (400, 250)
    assert (iframe_of(wide)["width"], iframe_of(wide)["height"]) == ("400", "250")
    tall = oembed(client, f"{SITE}/t/{ident}", maxwidth="700", maxheight="100").json()
    assert (tall["width"], tall["height"]) == (160, 100)
    roomy = oembed(client, f"{SITE}/t/{ident}", maxwidth="2000", maxheight="2000").json()
    assert (roomy["width"], roomy["height"]) == (800, 500)  # never scaled up
    # the spec: a thumbnail must fit too; ours has one size, so it is left out
    assert "thumbnail_url" not in wide and "thumbnail_width" not in tall
    assert roomy["thumbnail_width"] == 640


@pytest.mark.parametrize("size", ["0", "-5", "wide", "1e3", "12.5", "9" * 40])
def test_a_bad_size_is_a_400(client, ident, size):
    assert oembed(client, f"{SITE}/t/{ident}", maxwidth=size).status_code == 400
    assert oembed(client, f"{SITE}/t/{ident}", maxheight=size).status_code == 400


def test_xml_is_not_implemented_and_a_missing_url_is_a_400(client, ident):
    assert oembed(client, f"{SITE}/t/{ident}", format="xml").status_code == 501
    assert client.get("/oembed").status_code == 400
    assert client.get("/oembed?url=").status_code == 400
    assert oembed(client, f"{SITE}/t/{ident}", format="json").status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/t/{ident}",
        "http://localhost.evil.example/t/{ident}",
        "http://user@localhost/t/{ident}",
        "ftp://localhost/t/{ident}",
        "javascript:alert(1)",
        "http://localhost:99999/t/{ident}",
        "http://[::1/t/{ident}",
        "http://localhost/lessons/{ident}",
        "http://localhost/t/{ident}/export.html",
        "http://localhost/t/aaaaaaaaaaaaaaaa",
        "http://localhost/t/nosuchtrace",
        "/t/{ident}",
    ],
)
def test_a_url_not_of_a_stored_trace_here_is_a_404(client, ident, url):
    answer = oembed(client, url.format(ident=ident))
    assert answer.status_code == 404
    assert answer.json()["detail"]


def test_any_name_the_site_answers_to_is_ours(client, ident):
    for url in (f"https://gradtrace.test/t/{ident}", f"http://gradtrace.test:8443/t/{ident}"):
        answer = oembed(client, url)
        assert answer.status_code == 200, url
        # the iframe is at the address the consumer reached us by
        assert iframe_of(answer.json())["src"] == f"{SITE}/embed/{ident}"


def test_a_bad_option_in_the_url_is_a_400(client, ident):
    assert oembed(client, f"{SITE}/t/{ident}#step=two").status_code == 400
    assert oembed(client, f"{SITE}/embed/{ident}?theme=neon").status_code == 400


def test_no_answer_sets_a_cookie_and_each_may_be_shared(client, ident):
    client.cookies.clear()  # storing the trace gave this client one
    for answer in (
        oembed(client, f"{SITE}/t/{ident}"),
        oembed(client, f"{SITE}/t/aaaaaaaaaaaaaaaa"),
        oembed(client, f"{SITE}/t/{ident}", format="xml"),
        client.get("/oembed"),
    ):
        assert "set-cookie" not in answer.headers
        assert answer.headers["cache-control"].startswith("public, max-age=")
    assert COOKIE not in client.cookies


def test_a_hostile_title_is_escaped_in_the_iframe(client):
    ident = client.post("/api/traces", json={"code": HOSTILE}).json()["id"]
    body = oembed(client, f"{SITE}/t/{ident}").json()
    # in JSON the title is the consumer's to escape; in the html it is escaped already
    assert body["title"] == 'gradtrace: "><script>alert(1)</script>'
    assert "<script>" not in body["html"] and '"><script' not in body["html"]
    assert iframe_of(body)["title"] == body["title"]


def test_a_lone_surrogate_in_an_old_trace_does_not_break_the_answer(client):
    from engine.tracer import trace_snippet

    trace = trace_snippet("print(1)\n")
    trace["code"] = "# caf\ud800\nprint(1)\n"
    ident, _ = client.app.state.store.put("old trace", trace)
    for answer in (oembed(client, f"{SITE}/t/{ident}"), client.get(f"/t/{ident}")):
        assert answer.status_code == 200


def test_a_trace_page_says_where_its_oembed_is(client, ident):
    page = client.get(f"/t/{ident}")
    found = re.search(
        r'<link rel="alternate" type="application/json\+oembed" href="([^"]+)"', page.text
    )
    assert found, "no discovery link in the page"
    head = page.text[: page.text.index("</head>")]
    assert found.start() < len(head)
    href = html.unescape(found.group(1))
    assert href == f"{SITE}/oembed?url=http%3A%2F%2Flocalhost%2Ft%2F{ident}&format=json"
    # the same in the Link header, and both lead to an answer about this trace
    link = page.headers["link"]
    target = re.fullmatch(
        r'<([^>]+)>; rel="alternate"; type="application/json\+oembed"; (.+)', link
    )
    assert target and target.group(1) == href
    assert unquote(target.group(2).removeprefix("title*=UTF-8''")).startswith("gradtrace: w = ")
    answer = client.get(target.group(1).removeprefix(SITE))
    assert iframe_of(answer.json())["src"] == f"{SITE}/embed/{ident}"


def test_the_page_after_a_run_says_where_its_oembed_is(client):
    page = client.post("/run", data={"code": "print('ran')\n"}).text
    assert 'type="application/json+oembed"' in page
    assert client.get("/").text.count("json+oembed") == 0  # the bare editor has no trace


def test_a_hostile_title_is_escaped_in_the_discovery_link_and_header(client):
    ident = client.post("/api/traces", json={"code": HOSTILE}).json()["id"]
    page = client.get(f"/t/{ident}")
    assert "<script>alert(1)</script>" not in page.text
    assert 'title="gradtrace: &#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"' in page.text
    assert page.headers["link"].isascii() and "<script>" not in page.headers["link"]
