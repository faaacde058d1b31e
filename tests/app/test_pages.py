"""The playground's pages through FastAPI's TestClient (snippets run in the real sandbox)."""

import re

import pytest
from fastapi.testclient import TestClient

from app.config import Networks, Settings, StoreSettings
from app.examples import EXAMPLES
from app.main import create_app
from engine.tracer import trace_snippet


@pytest.fixture
def client(tmp_path):
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db")))
    return TestClient(app, base_url="http://localhost")


def test_the_page_offers_the_seed_example_and_every_other(client):
    page = client.get("/")
    assert page.status_code == 200
    assert "a = torch.tensor(3.0, requires_grad=True)" in page.text
    for example in EXAMPLES:
        assert f'href="/?example={example.slug}"' in page.text
    assert page.headers["x-frame-options"] == "DENY"
    assert "script-src 'self'" in page.headers["content-security-policy"]


def test_an_example_link_loads_its_code(client):
    page = client.get("/?example=no-grad")
    assert "with torch.no_grad():" in page.text
    assert 'aria-current="page">no_grad records nothing' in page.text


def test_a_plain_post_returns_the_whole_page_with_the_player_and_output(client):
    page = client.post("/run", data={"code": "import torch\nprint(torch.ones(2) * 3)\n"})
    assert page.status_code == 200
    assert "<html" in page.text
    assert "<grad-player" in page.text
    assert "tensor([3., 3.])" in page.text


def test_an_htmx_post_returns_only_the_partial_and_pushes_the_trace_address(client):
    page = client.post("/run", data={"code": "print(1)"}, headers={"HX-Request": "true"})
    assert page.status_code == 200
    assert "<html" not in page.text
    assert "Printed output" in page.text
    ident = re.search(r'href="/t/(\w+)"', page.text).group(1)
    assert page.headers["hx-push-url"] == f"/t/{ident}"


def test_without_javascript_the_page_has_the_final_graph_and_every_step(client):
    code = "import torch\na = torch.tensor(3.0, requires_grad=True)\nd = a * a\nd.backward()\n"
    page = client.post("/run", data={"code": code}).text
    # each view drawn once, as it stands after the last step (the player folds it back)
    assert page.count("<svg") == 2 and "<noscript>" not in page
    assert re.search(r'<text[^>]*class="grad"[^>]*data-start=""[^>]*>grad 6</text>', page)
    steps = re.findall(r"<li data-phase=\"(\w+)\">", page)
    assert "forward" in steps and "backward" in steps
    assert "MulBackward0" in page


def test_a_run_that_drew_before_any_seed_is_told_pytorch_prints_other_numbers(client):
    said = "This run drew random numbers without torch.manual_seed"
    page = client.post("/run", data={"code": "import torch\nprint(torch.randn(2))\n"}).text
    assert re.search(rf'<p class="notice">{said} .*?PyTorch gives different ones', page)
    seeded = "import torch\ntorch.manual_seed(0)\nprint(torch.randn(2))\n"
    assert said not in client.post("/run", data={"code": seeded}).text


def test_a_stored_trace_has_its_own_address(client):
    ident = client.post("/api/traces", json={"code": "print('hello')"}).json()["id"]
    page = client.get(f"/t/{ident}")
    assert page.status_code == 200
    assert "hello" in page.text
    assert "print(&#39;hello&#39;)" in page.text  # the code is back in the editor, escaped


def test_an_unknown_trace_is_a_404_page(client):
    page = client.get("/t/nosuchtrace")
    assert page.status_code == 404
    assert "No trace has the id" in page.text


def test_what_the_snippet_wrote_is_escaped_everywhere(client):
    code = (
        "import torch\n"
        "print('<script>alert(1)</script>')\n"
        "print(torch.tensor(1.0) * len('<b>x</b>'))\n"
    )
    page = client.post("/run", data={"code": code}).text
    assert "<script>alert(1)</script>" not in page
    assert "<b>x</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_errors_are_shown_with_their_line(client):
    page = client.post("/run", data={"code": "import torch\n\ntorch.ones(3) + torch.ones(2)\n"})
    assert page.status_code == 200
    assert "Line 3" in page.text
    assert "The size of tensor a (3) must match the size of tensor b (2)" in page.text


def test_oversize_code_is_refused_with_413(client):
    page = client.post("/run", data={"code": "x = 1\n" * 5000})
    assert page.status_code == 413
    assert "longer than 20,000 bytes" in page.text


def test_cross_site_posts_are_refused(client):
    page = client.post(
        "/run", data={"code": "print(1)"}, headers={"Origin": "https://evil.example"}
    )
    assert page.status_code == 403


def test_healthz_answers_json_with_the_sandbox_layers(client):
    health = client.get("/healthz").json()
    assert health["status"] == "ok"
    assert "layers" in health["sandbox"]


def test_a_big_loop_is_stacked_and_a_stack_can_be_expanded(client):
    code = (
        "import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x\n"
        "for i in range(600):\n    y = y * 1.001\ny.backward()\n"
    )
    ident = client.post("/api/traces", json={"code": code}).json()["id"]
    page = client.get(f"/t/{ident}").text
    assert "are stacked" in page
    link = re.search(r'href="(/t/\w+\?expand=(g\d+))"', page)
    expanded = client.get(link.group(1)).text
    assert f'?expand={link.group(2)}"' not in expanded  # that stack is drawn out now
    assert expanded.count('class="node') > page.count('class="node')


def test_a_stored_trace_with_a_lone_surrogate_is_shown_escaped(client):
    """A trace stored before traces were checked may hold one; its page must still render."""
    store = client.app.state.store
    trace = trace_snippet('print("ok")\n')
    trace["stdout"] = "before \ud800 after\n"
    ident, _ = store.put("old trace", trace)
    page = client.get(f"/t/{ident}")
    assert page.status_code == 200
    assert "before \\ud800 after" in page.text


def test_one_link_expands_at_most_a_few_stacks(client, monkeypatch):
    """Each set of expanded stacks is a page drawn of its own: a link cannot ask for thousands."""
    asked = []

    async def page(ident, requester, expand=(), *, trace=None):
        asked.append(list(expand))
        shown = {"code": "print(1)", "outcome": {"status": "ok"}, "stdout": "", "stderr": ""}
        undrawn = {"reason": "-", "steps": []}
        opened = tuple(expand)
        return {"ident": ident, "trace": shown, "digest": "d", "undrawn": undrawn, "opened": opened}

    ident = client.post("/api/traces", json={"code": "print(1)"}).json()["id"]
    monkeypatch.setattr(client.app.state.traces, "page", page)
    many = ",".join(f"g{n}" for n in range(1, 1000))
    assert client.get(f"/t/{ident}?expand={many}").status_code == 200
    assert asked == [[f"g{n}" for n in range(1, 17)]]


def test_made_up_stacks_and_modules_are_the_plain_page(client):
    """A stack or module the trace does not have opens nothing: the answer sends the browser
    to the plain page, drawn once; a flood of made-up ones draws nothing new."""
    ident = client.post("/api/traces", json={"code": EXAMPLES[0].code}).json()["id"]
    plain = client.get(f"/t/{ident}")
    cache = client.app.state.traces.cache
    drawn, kept = cache.renders, len(cache)
    for n in range(20):
        made_up = f"/t/{ident}?expand=g{123456 + n},g{234567 + n},m{n + 7}"
        answer = client.get(made_up, follow_redirects=False)
        assert answer.status_code == 307 and answer.headers["location"] == f"/t/{ident}"
        assert not answer.content
        assert client.get(made_up).text == plain.text
    assert (cache.renders, len(cache)) == (drawn, kept)


def test_an_old_engines_trace_is_run_again_by_todays(client, monkeypatch):
    """A trace recorded before a trace change (no `.grad` events, say) would show stale labels:
    its link runs the snippet afresh and moves to the new trace's address."""
    import app.store
    import engine

    code = "import torch\nw = torch.tensor(2.0, requires_grad=True)\n(w * w).backward()\n"
    real_id = app.store.trace_id
    monkeypatch.setattr(app.store, "trace_id", lambda c: real_id(c, "2.13.0+gradtrace"))
    store = client.app.state.store
    old, _ = store.put(code, trace_snippet(code))
    monkeypatch.setattr(app.store, "trace_id", real_id)
    with store._db.writing() as db:
        db.execute("UPDATE traces SET engine = ? WHERE id = ?", ("old", old))
    assert old != store.public_id(code)

    moved = client.get(f"/t/{old}", follow_redirects=False)
    assert moved.status_code == 307
    assert moved.headers["location"] == f"/t/{store.public_id(code)}"
    assert store.engine_of(store.public_id(code)) == engine.__version__
    assert client.get(f"/t/{old}").status_code == 200  # followed: the fresh trace's page
    # a trace of today's engine stays where it is
    assert client.get(f"/t/{store.public_id(code)}", follow_redirects=False).status_code == 200


def test_a_page_counts_its_visitor_as_a_viewer_unless_they_stored_it(tmp_path):
    """Eviction keeps longest what the most others opened: a page view counts its visitor's
    address once, and never the owner's."""
    import sqlite3

    settings = Settings(
        store=StoreSettings(path=tmp_path / "traces.db"),
        session_secret="s",
        trusted_proxies=Networks("127.0.0.1"),
    )
    app = create_app(settings)

    def from_address(address: str) -> TestClient:
        client = TestClient(app, base_url="http://localhost", client=("127.0.0.1", 40000))
        client.headers["X-Forwarded-For"] = address
        return client

    owner = from_address("203.0.113.1")
    ident = owner.post("/api/traces", json={"code": "print(1)"}).json()["id"]
    visits = [owner, owner, from_address("203.0.113.2"), from_address("203.0.113.2")]
    visits.append(from_address("203.0.113.3"))
    for visitor in visits:
        assert visitor.get(f"/t/{ident}").status_code == 200
    db = sqlite3.connect(tmp_path / "traces.db")
    assert db.execute("SELECT viewers FROM traces WHERE id = ?", (ident,)).fetchone() == (2,)


def test_running_stored_code_again_parses_nothing_in_the_server(client, monkeypatch):
    """The same code is never run twice; nor is its stored trace parsed by the server (the
    render worker reads it, and the API hands its text on as it is)."""
    import json

    import app.store

    code = "import torch\nx = torch.tensor(2.0, requires_grad=True)\n(x * x).backward()\n"
    ident = client.post("/api/traces", json={"code": code}).json()["id"]

    class NoParsing:
        dumps = staticmethod(json.dumps)

        @staticmethod
        def loads(*_args, **_kwargs):
            raise AssertionError("a stored trace was parsed in the server")

    monkeypatch.setattr(app.store, "json", NoParsing)
    run = client.post("/run", data={"code": code}, headers={"HX-Request": "true"})
    assert run.status_code == 200 and run.headers["HX-Push-Url"] == f"/t/{ident}"
    assert "<grad-player" in run.text
    again = client.post("/api/traces", json={"code": code})
    assert again.json()["id"] == ident and again.json()["trace"]["code"] == code


def test_a_visitors_reloads_are_written_once(client, monkeypatch):
    """A view is a write to the store (an fsync): a flood of reloads of one page by one
    visitor writes it once."""
    ident = client.post("/api/traces", json={"code": "print(1)"}).json()["id"]
    written = []
    viewed = client.app.state.store.viewed
    monkeypatch.setattr(
        client.app.state.store, "viewed", lambda *args: written.append(args) or viewed(*args)
    )
    for _ in range(5):
        # no cookie: a cookie that turns 2 s old midway (a slow machine) would make its session
        # count on its own from then on, a second visitor
        client.cookies.clear()
        assert client.get(f"/t/{ident}").status_code == 200
    assert len(written) == 1


@pytest.mark.parametrize(
    "reply",
    [
        None,
        [],
        {"player_json": "</script><script>alert(1)</script>"},
        {"player_json": "{}", "steps_html": "", "drawings": {}, "openable": 5},
    ],
)
def test_a_render_workers_junk_page_is_a_failure_to_draw_never_trusted(client, reply):
    """The worker drew a hostile trace: its reply is read as hostile too. A page of the wrong
    shape, or player data that could end its <script>, is the page in words, never a 500."""
    ident = client.post("/api/traces", json={"code": "print(1)"}).json()["id"]
    pool = client.app.state.traces.pool
    original = pool.page

    async def junk(*_args):
        return reply

    pool.page = junk
    try:
        answer = client.get(f"/t/{ident}")
    finally:
        pool.page = original
    assert answer.status_code == 200
    assert "could not be drawn" in answer.text and "alert(1)" not in answer.text
