"""Traces a child hands back are hostile input: forged ones, through the real sandbox and HTTP.

A snippet needs no escape to forge its trace: it reaches `os` through `warnings.sys`, writes
whatever it likes on its channel to the server (fd 3) and exits. None of that may stall the
server, kill it, or leave a link that answers 500.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from fastapi.testclient import TestClient

from app.config import Settings, StoreSettings
from app.main import create_app
from app.render_pool import RenderSettings
from engine.tracer import trace_snippet

FORGE = """import warnings
json = warnings.sys.modules["json"]
os = warnings.sys.modules["os"]
trace = json.loads({template!r})
{mutation}
os.write(3, json.dumps(trace).encode())
os._exit(0)
"""


def _forging(mutation: str) -> str:
    template = json.dumps(trace_snippet("import torch\na = torch.ones(2, requires_grad=True)\n"))
    return FORGE.format(template=template, mutation=mutation)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = Settings(
        store=StoreSettings(path=tmp_path_factory.mktemp("db") / "traces.db"), session_secret="s"
    )
    with TestClient(create_app(settings), base_url="http://localhost") as test_client:
        yield test_client


def _run(client, code: str) -> dict:
    answer = client.post("/api/traces", json={"code": code})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_forgery_itself_works(client):
    """The control: an unremarkable forged trace is taken as the child's own."""
    body = _run(client, _forging('trace["stdout"] = "forged\\n"'))
    assert body["trace"]["stdout"] == "forged\n"
    assert client.get(body["url"]).status_code == 200


def test_an_id_full_of_graphviz_escapes_is_refused_and_its_link_is_harmless(client):
    mutation = (
        'bad = "\\\\N" * 8000\n'
        'trace["tensors"] = {bad: trace["tensors"]["t1"]}\n'
        'trace["events"][0]["tensor"] = bad'
    )
    body = _run(client, _forging(mutation))
    assert body["trace"]["outcome"]["status"] == "crashed"
    assert "malformed" in body["trace"]["outcome"]["message"]
    assert body["trace"]["tensors"] == {}
    assert client.get(body["url"]).status_code == 404  # a crash is not kept: no link to keep


def test_a_label_full_of_graphviz_escapes_is_drawn_as_text(client):
    mutation = 'trace["tensors"]["t1"]["label"] = "\\\\N\\\\G\\\\L<b>{|}" * 10'
    body = _run(client, _forging(mutation))
    page = client.get(body["url"])
    assert page.status_code == 200
    assert len(page.content) < 2_000_000


def test_a_lone_surrogate_in_the_output_is_shown_escaped(client):
    body = _run(client, 'print("\\ud800 after")\n')
    assert body["trace"]["outcome"]["status"] == "ok"
    assert "after" in body["trace"]["stdout"]
    page = client.get(body["url"])
    assert page.status_code == 200
    assert "\\ud800 after" in page.text


def test_a_trace_past_the_event_cap_is_refused(client):
    mutation = (
        'trace["events"] += [{"seq": n, "kind": "print", "text": "x"}\n'
        '                    for n in range(len(trace["events"]), 60_000)]'
    )
    body = _run(client, _forging(mutation))
    assert body["trace"]["outcome"]["status"] == "crashed"
    assert "malformed" in body["trace"]["outcome"]["message"]


LOOP = "import torch\nfor i in range(19999):\n    torch.ones(1)\n"


@pytest.mark.slow
def test_a_long_loops_page_is_drawn_once_and_healthz_answers_meanwhile(tmp_path):
    """Three GETs of the 19,999-op loop's page at once, against a real server's event loop:
    /healthz keeps answering while they draw (in workers, not the server), and the page is
    drawn once for the three. Told by the order of events, not by a clock: /healthz is asked
    again and again while the pages are pending, and several of its answers must come while
    the render pool draws the page (before any page is answered). A loop stalled by the
    render answers none until it is done; a free one answers twenty or so (a busy machine
    draws slower, and gets more answers in, not fewer)."""
    settings = Settings(store=StoreSettings(path=tmp_path / "traces.db"), session_secret="s")
    app = create_app(settings)
    pool = app.state.render_pool
    drawn: list[str] = []  # the pages the render pool was asked to draw
    events: list[str] = []  # "drawing", "drawn", "healthz" (an answer), "page" (one GET done)

    async def scenario() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with (
            httpx.AsyncClient(transport=transport, base_url="http://localhost") as http,
            app.router.lifespan_context(app),
        ):
            created = await http.post("/api/traces", json={"code": LOOP}, timeout=60)
            url = created.json()["url"]
            drawing = pool.page

            async def noted_page(trace, ident, *args, **kwargs):
                drawn.append(ident)
                events.append("drawing")
                try:
                    return await drawing(trace, ident, *args, **kwargs)
                finally:
                    events.append("drawn")

            pool.page = noted_page
            pages = [asyncio.create_task(http.get(url, timeout=120)) for _ in range(3)]
            for page in pages:
                page.add_done_callback(lambda _: events.append("page"))
            while not all(page.done() for page in pages):
                answer = await http.get("/healthz", timeout=30)
                assert answer.status_code == 200
                events.append("healthz")
                await asyncio.sleep(0.02)
            return [(await page).status_code for page in pages]

    assert asyncio.run(scenario()) == [200, 200, 200]
    assert len(drawn) == 1, drawn  # one render for the three visitors
    assert events.index("drawn") < events.index("page"), events
    assert events[events.index("drawing") : events.index("drawn")].count("healthz") >= 5, events


def test_a_trace_that_cannot_be_drawn_in_budget_gets_its_steps_in_words(tmp_path):
    settings = Settings(
        store=StoreSettings(path=tmp_path / "traces.db"),
        session_secret="s",
        render=RenderSettings(budget_seconds=0.001),
    )
    with TestClient(create_app(settings), base_url="http://localhost") as client:
        body = _run(client, "import torch\nx = torch.ones(2, requires_grad=True)\nprint('hi')\n")
        page = client.get(body["url"])
        assert page.status_code == 200
        assert "Too large to draw" in page.text
        assert "could not be drawn: drawing took longer than its budget" in page.text
        assert "hi" in page.text  # the printed output is still there
        assert 'class="gradtrace-graph' not in page.text
