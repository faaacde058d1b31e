"""`/embed/{id}` through FastAPI's TestClient: each option reaches the page, a bad one is a 422
that says what to give, and only embeds may be framed (and set no cookie)."""

import html
import re

import pytest
from fastapi.testclient import TestClient

from app.config import Settings, StoreSettings
from app.main import create_app
from app.render_pool import RenderBusy
from app.sessions import COOKIE

CODE = "import torch\na = torch.tensor(3.0, requires_grad=True)\nd = a * a\nd.backward()\n"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return create_app(
        Settings(store=StoreSettings(path=tmp_path_factory.mktemp("db") / "traces.db"))
    )


@pytest.fixture(scope="module")
def ident(app):
    return (
        TestClient(app, base_url="http://localhost")
        .post("/api/traces", json={"code": CODE})
        .json()["id"]
    )


@pytest.fixture
def client(app):
    """A fresh client each test: no cookie carried over from another."""
    return TestClient(app, base_url="http://localhost")


@pytest.fixture(scope="module")
def total(app, ident):
    page = TestClient(app, base_url="http://localhost").get(f"/embed/{ident}").text
    return len(re.findall(r"<li data-phase=", page))


def player_tag(page: str) -> str:
    return re.search(r"<grad-player[^>]*>", page).group(0)


def root_classes(page: str) -> set[str]:
    return set(re.search(r'<html lang="en" class="([^"]*)"', page).group(1).split())


def problem(page: str) -> str:
    return html.unescape(re.search(r"data-problem>(.*?)</p>", page, re.S).group(1))


# ***** the options *****


def test_with_no_options_the_embed_plays_the_whole_trace_as_the_site_does(client, ident, total):
    page = client.get(f"/embed/{ident}")
    assert page.status_code == 200
    tag = player_tag(page.text)
    assert f'data-from="1" data-to="{total}"' in tag and 'data-start="1"' in tag
    assert (
        'data-controls="full"' in tag and 'data-speed="1"' in tag and 'data-view="tensors"' in tag
    )
    assert "data-autoplay" not in tag and "data-loop" not in tag
    # an embed never touches its URL: in a frame, that is part of the host's history
    assert 'data-hash="off"' in tag
    assert {"embed", "theme-light", "code-show", "controls-full"} <= root_classes(page.text)
    assert "<header>" not in page.text and "site-nav" not in page.text  # no site chrome
    assert '<script type="module" src="/static/embed.js"></script>' in page.text


@pytest.mark.parametrize(
    ("query", "attribute"),
    [
        ("step=3", 'data-start="3"'),
        ("autoplay=1", 'data-autoplay="true"'),
        ("autoplay=true", 'data-autoplay="true"'),
        ("loop=1", 'data-loop="true"'),
        ("speed=0.5", 'data-speed="0.5"'),
        ("speed=4", 'data-speed="4"'),
        ("view=autograd", 'data-view="autograd"'),
        ("controls=minimal", 'data-controls="minimal"'),
        ("controls=none", 'data-controls="none"'),
        ("from=2&to=4", 'data-start="2" data-from="2" data-to="4"'),
        ("from=2&to=4&step=3", 'data-start="3" data-from="2" data-to="4"'),
    ],
)
def test_each_option_reaches_the_player(client, ident, query, attribute):
    page = client.get(f"/embed/{ident}?{query}")
    assert page.status_code == 200
    assert attribute in player_tag(page.text)


@pytest.mark.parametrize("query", ["autoplay=0", "autoplay=false", "loop=0"])
def test_an_option_turned_off_is_left_off(client, ident, query):
    name = query.split("=")[0]
    assert f"data-{name}" not in player_tag(client.get(f"/embed/{ident}?{query}").text)


@pytest.mark.parametrize(
    ("query", "classes"),
    [
        ("theme=dark", {"theme-dark"}),
        ("code=hide", {"code-hide"}),
        ("controls=none&theme=dark&code=hide", {"controls-none", "theme-dark", "code-hide"}),
    ],
)
def test_theme_code_and_controls_are_classes_of_the_page(client, ident, query, classes):
    assert classes <= root_classes(client.get(f"/embed/{ident}?{query}").text)


def test_the_embed_links_to_its_full_page_at_its_step(client, ident):
    page = client.get(f"/embed/{ident}?step=3").text
    link = re.search(r"<a [^>]*data-open-full[^>]*>([^<]*)</a>", page)
    assert f'href="/t/{ident}#step=3"' in link.group(0)
    assert 'target="_blank"' in link.group(0) and 'rel="noopener"' in link.group(0)
    assert link.group(1) == "Open in gradtrace ↗"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("view=sideways", "view='sideways' is not known: use one of tensors, autograd."),
        ("theme=blue", "theme='blue' is not known: use one of light, dark."),
        ("controls=some", "controls='some' is not known: use one of full, minimal, none."),
        ("code=maybe", "code='maybe' is not known: use one of show, hide."),
        ("speed=3", "speed='3' is not known: use one of 1, 0.5, 2, 4."),
        ("autoplay=yes", "autoplay='yes' is not known: use one of 0, 1, false, true."),
        ("loop=always", "loop='always' is not known: use one of 0, 1, false, true."),
        ("step=two", "step='two' is not a step number: give a whole number, like 3."),
        ("from=-1", "from='-1' is not a step number: give a whole number, like 3."),
        ("from=0", "from=0: this trace has steps 1 to {total}."),
        ("to=999", "to=999: this trace has steps 1 to {total}."),
        ("from=4&to=2", "from=4 is after to=2: give a range that goes forwards."),
        ("from=2&to=3&step=4", "step=4 is outside the steps shown: give one from 2 to 3."),
        ("step=0", "step=0 is outside the steps shown: give one from 1 to {total}."),
    ],
)
def test_a_bad_option_is_a_422_saying_what_to_give(client, ident, total, query, message):
    page = client.get(f"/embed/{ident}?{query}")
    assert page.status_code == 422
    assert problem(page.text) == message.format(total=total)
    assert "<grad-player" not in page.text


def test_an_unknown_trace_is_the_404_page(client):
    page = client.get("/embed/nosuchtrace")
    assert page.status_code == 404
    assert "No trace has the id" in page.text


def test_what_a_bad_option_says_is_escaped(client, ident):
    page = client.get(f"/embed/{ident}", params={"view": "<script>alert(1)</script>"})
    assert page.status_code == 422
    assert "<script>alert" not in page.text and "&lt;script&gt;" in page.text


# ***** outdated, busy and undrawn traces, as the trace page has them *****


def test_an_outdated_trace_goes_to_its_new_embed_with_the_same_options(app, client, ident):
    traces = app.state.traces
    original = traces.outdated

    async def always(_ident):
        return True

    traces.outdated = always
    try:
        answer = client.get(f"/embed/{ident}?step=2&theme=dark", follow_redirects=False)
    finally:
        traces.outdated = original
    # the same code runs to the same id here; today's engine would give it a new one
    assert answer.status_code == 307
    assert answer.headers["location"] == f"/embed/{ident}?step=2&theme=dark"


def test_a_busy_renderer_is_a_503_with_retry_after(app, client, ident):
    traces = app.state.traces
    original = traces.page

    async def busy(*_args):
        raise RenderBusy(7)

    traces.page = busy
    try:
        answer = client.get(f"/embed/{ident}?theme=dark")
    finally:
        traces.page = original
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "7"
    assert problem(answer.text) == f"{RenderBusy.message} Try again in 7 seconds."


def test_a_trace_too_large_to_draw_is_its_steps_in_words(app, client, ident):
    traces = app.state.traces
    original = traces.page

    async def undrawn(ident, requester, *_args, trace=None):
        steps = ["Line 2: the first step.", "Line 3: the second."]
        reason = "This trace could not be drawn: too many nodes."
        shown = {"code": "x = 1", "outcome": {"status": "ok"}, "stdout": "", "stderr": ""}
        return {
            "ident": ident,
            "trace": shown,
            "digest": "d",
            "undrawn": {"reason": reason, "steps": steps},
        }

    traces.page = undrawn
    try:
        page = client.get(f"/embed/{ident}?to=2").text
    finally:
        traces.page = original
    assert "Too large to draw" in page and "Line 3: the second." in page
    assert "<grad-player" not in page


# ***** framing, and no cookie *****


def frameable(answer) -> bool:
    policy = answer.headers["content-security-policy"]
    # any site, and a slide deck opened from a file (`*` alone leaves out file: ancestors)
    allowed = policy.endswith("frame-ancestors * file:")
    return allowed and "x-frame-options" not in answer.headers


def denies_framing(answer) -> bool:
    policy = answer.headers["content-security-policy"]
    return "frame-ancestors 'none'" in policy and answer.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize(
    "query", ["", "?step=2&theme=dark", "?view=sideways"], ids=["plain", "options", "bad"]
)
def test_embeds_may_be_framed_by_any_site(client, ident, query):
    answer = client.get(f"/embed/{ident}{query}")
    assert frameable(answer)
    assert "script-src 'self'" in answer.headers["content-security-policy"]
    assert answer.headers["x-content-type-options"] == "nosniff"


def test_a_missing_embed_may_be_framed_too(client):
    assert frameable(client.get("/embed/nosuchtrace"))


@pytest.mark.parametrize(
    "path", ["/", "/t/{ident}", "/lessons", "/t/nosuchtrace", "/static/embed.js"]
)
def test_every_other_answer_refuses_to_be_framed(client, ident, path):
    answer = client.get(path.format(ident=ident))
    assert denies_framing(answer)
    assert not frameable(answer)


def test_a_500_is_framed_as_its_path_says(tmp_path):
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db")))

    @app.get("/fails")
    @app.get("/embed/a/fails")
    def fails():
        raise RuntimeError("boom")

    client = TestClient(app, base_url="http://localhost", raise_server_exceptions=False)
    page, embed = client.get("/fails"), client.get("/embed/a/fails")
    assert page.status_code == embed.status_code == 500
    assert denies_framing(page)
    assert frameable(embed)


def test_an_embed_sets_no_cookie(client, ident):
    assert COOKIE in client.get("/").headers.get("set-cookie", "")  # the site's pages do
    fresh = TestClient(client.app, base_url="http://localhost")
    for query in ("", "?step=2", "?theme=nope"):
        answer = fresh.get(f"/embed/{ident}{query}")
        assert "set-cookie" not in answer.headers
    assert "set-cookie" not in fresh.get("/embed/nosuchtrace").headers


def test_an_embed_is_revalidated_per_query_string(client, ident):
    first = client.get(f"/embed/{ident}?step=2")
    tag = first.headers["etag"]
    assert client.get(f"/embed/{ident}?step=2", headers={"if-none-match": tag}).status_code == 304
    other = client.get(f"/embed/{ident}?step=3", headers={"if-none-match": tag})
    assert other.status_code == 200 and 'data-start="3"' in other.text
