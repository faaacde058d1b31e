"""The Share dialog (templates/_share.html) as the server writes it, before any JavaScript."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from app.config import Names, Networks, Settings, StoreSettings
from app.main import create_app

SITE = "http://localhost"
HOSTILE = (
    '# "><script>alert(1)</script>\n'
    "import torch\n"
    "x = torch.tensor(2.0, requires_grad=True)\n"
    "(x * x).backward()\n"
)


@pytest.fixture
def client(tmp_path):
    # started (`with`): the render pool then lives on one event loop for every request
    with TestClient(
        create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db"))), base_url=SITE
    ) as client:
        yield client


class Dialog(HTMLParser):
    """What the dialog holds: its links, its forms' buttons, and each field's text by id."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.links: list[str] = []
        self.actions: list[str] = []
        self.fields: dict[str, str] = {}
        self.attributes: dict[str, str] = {}
        self.bounded: list[str] = []  # the exports the Share box holds to data-max-frames
        self._field: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "grad-share":
            self.inside, self.attributes = True, attrs
        if not self.inside:
            return
        if tag == "a":
            self.links.append(attrs["href"])
            if "data-bounded" in attrs:
                self.bounded.append(attrs["data-export"])
        elif tag == "button" and "formaction" in attrs:
            self.actions.append(attrs["formaction"])
        elif tag == "input" and "id" in attrs:
            self.fields[attrs["id"]] = attrs.get("value", "")
        elif tag == "textarea":
            self._field = attrs["id"]
            self.fields[self._field] = ""

    def handle_endtag(self, tag):
        if tag == "grad-share":
            self.inside = False
        elif tag == "textarea":
            self._field = None

    def handle_data(self, data):
        if self._field:
            self.fields[self._field] += data


def dialog_of(page: str) -> Dialog:
    dialog = Dialog()
    dialog.feed(page)
    assert dialog.attributes, "no Share dialog on the page"
    return dialog


def stored(client, code: str) -> str:
    return client.post("/api/traces", json={"code": code}).json()["id"]


def test_a_trace_page_has_the_dialog_with_its_addresses(client):
    ident = stored(client, HOSTILE)
    page = client.get(f"/t/{ident}").text
    dialog = dialog_of(page)
    assert '<details class="share">' in page
    # the plain link stays, and the permalink without JavaScript is the trace's own
    assert f"/t/{ident}" in dialog.links
    assert dialog.fields["share-permalink"] == f"{SITE}/t/{ident}"
    for ending in ("/export.html", "/export.gif", "/export.zip", "/export.pdf", ".png"):
        assert f"/t/{ident}{ending}" in dialog.links, ending
    # the downloads' choices work without JavaScript: a GET form, a button per format
    assert dialog.actions == [f"/t/{ident}/export.{f}" for f in ("html", "gif", "zip", "pdf")]
    steps = re.search(r'max="(\d+)" value="1" step="1" data-scrubber', page).group(1)
    assert (dialog.fields["share-from"], dialog.fields["share-to"]) == ("1", steps)
    assert dialog.attributes["data-embed"] == f"{SITE}/embed/{ident}"


def test_the_box_bounds_the_very_exports_the_server_bounds(client):
    """The Share box warns before a download the server would refuse for too many steps: the
    exports it marks are those the server holds to data-max-frames steps, and no other."""
    loop = "import torch\nw = torch.tensor(1.0, requires_grad=True)\nfor _ in range(60):\n"
    ident = stored(client, loop + "    (w * 2).backward()\n")
    dialog = dialog_of(client.get(f"/t/{ident}").text)
    limit = int(dialog.attributes["data-max-frames"])
    total = int(dialog.attributes["data-steps"])
    assert total > limit
    refused = {
        f
        for f in ("html", "gif", "zip", "pdf")
        if client.get(f"/t/{ident}/export.{f}").status_code == 422
    }
    assert set(dialog.bounded) == refused == {"gif", "zip", "pdf"}


def test_the_snippets_are_an_iframe_of_the_embed_and_a_reveal_slide(client):
    ident = stored(client, HOSTILE)
    dialog = dialog_of(client.get(f"/t/{ident}").text)
    title = "gradtrace: &#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
    assert dialog.fields["share-iframe"] == (
        f'<iframe src="{SITE}/embed/{ident}" title="{title}" width="800" height="500" '
        'loading="lazy" allow="fullscreen"></iframe>'
    )
    slide = dialog.fields["share-reveal"]
    assert slide.startswith('<section data-trace-start="1">') and slide.endswith("</section>")
    assert f'<iframe data-src="{SITE}/embed/{ident}" title="{title}"' in slide
    assert "data-preload" in slide and 'class="fragment"' in slide
    script = dialog.fields["share-reveal-script"]
    assert f'const GRADTRACE = "{SITE}";' in script
    assert 'Reveal.on("fragmentshown"' in script and '{ gradtrace: "goto"' in script


def test_a_hostile_first_line_is_escaped_everywhere_on_the_page(client):
    ident = stored(client, HOSTILE)
    for page in (client.get(f"/t/{ident}").text, client.post("/run", data={"code": HOSTILE}).text):
        assert "<script>alert(1)</script>" not in page
        assert '"><script' not in page
        # in a snippet the title is attribute-escaped, and the snippet shown as text: twice
        assert "title=&#34;gradtrace: &amp;#34;&amp;gt;&amp;lt;script&amp;gt;" in page
        assert html.unescape(page).count("<script>alert(1)</script>") >= 1  # it is all there


def test_the_dialog_comes_with_the_partial_after_an_htmx_run_and_on_a_lesson(client):
    partial = client.post("/run", data={"code": "print(1)"}, headers={"HX-Request": "true"})
    ident = partial.headers["hx-push-url"].removeprefix("/t/")
    assert dialog_of(partial.text).fields["share-permalink"] == f"{SITE}/t/{ident}"
    slug = client.app.state.lessons.library().lessons[0].slug
    lesson = client.get(f"/lessons/{slug}").text
    assert "<grad-share" in lesson and "json+oembed" not in lesson.split("</head>")[0]


def test_the_addresses_follow_the_host_and_a_trusted_proxys_scheme(tmp_path):
    settings = Settings(
        store=StoreSettings(path=tmp_path / "traces.db"),
        allowed_hosts=Names("localhost,gradtrace.test"),
        trusted_proxies=Networks("127.0.0.1"),
    )
    app = create_app(settings)
    proxied = TestClient(app, base_url="http://gradtrace.test", client=("127.0.0.1", 9))
    ident = stored(proxied, "print(1)")
    https = {"X-Forwarded-Proto": "https"}
    dialog = dialog_of(proxied.get(f"/t/{ident}", headers=https).text)
    assert dialog.fields["share-permalink"] == f"https://gradtrace.test/t/{ident}"
    assert f'src="https://gradtrace.test/embed/{ident}"' in dialog.fields["share-iframe"]
    # anyone else saying so is not believed
    direct = TestClient(app, base_url="http://gradtrace.test", client=("198.51.100.7", 9))
    dialog = dialog_of(direct.get(f"/t/{ident}", headers=https).text)
    assert dialog.fields["share-permalink"] == f"http://gradtrace.test/t/{ident}"


def test_a_trace_too_large_to_draw_still_has_the_dialog(client, monkeypatch):
    async def page(ident, requester, expand=(), *, trace=None):
        steps = ["a is made", "b is made"]
        undrawn = {"reason": "too big.", "steps": steps}
        shown = {"code": "print(1)", "outcome": {"status": "ok"}, "stdout": "1\n", "stderr": ""}
        return {"ident": ident, "trace": shown, "digest": "d", "undrawn": undrawn}

    ident = stored(client, "print(1)")
    monkeypatch.setattr(client.app.state.traces, "page", page)
    dialog = dialog_of(client.get(f"/t/{ident}").text)
    assert (dialog.fields["share-from"], dialog.fields["share-to"]) == ("1", "2")
    assert dialog.attributes["data-steps"] == "2"
