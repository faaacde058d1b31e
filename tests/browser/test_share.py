"""The Share dialog in Chromium: the link follows the step shown and is copied to the
clipboard; the snippets follow the choices, and pasted into another page they are the iframe
they claim (a hostile title stays a title), which loads the embed; reveal.js's fragments step
it through the slide script; the downloads follow the choices; axe finds nothing serious."""

from __future__ import annotations

import functools
import http.server
import re
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.examples import BY_SLUG
from app.export.options import MAX_FRAMES
from tests.browser.conftest import _watched_page
from tests.browser.test_accessibility import audit
from tests.browser.test_embed import QuietHandler
from tests.live_server import free_port

HOSTILE_LINE = '"><script>alert(1)</script>'
CODE = (
    f"# {HOSTILE_LINE}\n"
    "import torch\n"
    "a = torch.tensor(2.0, requires_grad=True)\n"
    "b = torch.tensor(3.0, requires_grad=True)\n"
    "c = a * b\n"
    "d = c + a\n"
    "d.backward()\n"
)
TITLE = f"gradtrace: {HOSTILE_LINE}"
CLIPBOARD = ["clipboard-read", "clipboard-write"]


@pytest.fixture
def share_page(browser, request):
    """A watched page (every console error fails the test) that may use the clipboard."""
    yield from _watched_page(browser, request, permissions=CLIPBOARD)


@pytest.fixture
def a11y_share_page(browser, request):
    yield from _watched_page(browser, request, permissions=CLIPBOARD, bypass_csp=True)


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory):
    """elsewhere(name, body) -> the URL of a page of `body`, served from another origin than
    the app's (another loopback port), as a course page or a slide deck would be;
    elsewhere.put(name, data) serves a file beside it (a deck's script)."""
    root = tmp_path_factory.mktemp("elsewhere")
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def page(name: str, body: str) -> str:
        page = f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{name}</title>'
        page += f'<link rel="icon" href="data:,"></head><body>{body}</body></html>'
        (root / f"{name}.html").write_text(page, encoding="utf-8")
        return f"http://127.0.0.1:{server.server_port}/{name}.html"

    page.put = lambda name, data: (root / name).write_bytes(data)
    yield page
    server.shutdown()
    server.server_close()


def open_at_step_3(page, server_url) -> str:
    reply = page.request.post(f"{server_url}/api/traces", data={"code": CODE})
    assert reply.ok, reply.text()
    ident = reply.json()["id"]
    page.goto(f"{server_url}/t/{ident}")
    counter = page.locator("grad-player [data-counter]")
    expect(counter).to_have_text(re.compile(r"Step 1 of \d+"))
    next_step = page.get_by_role("button", name="Next ›")
    next_step.click()
    next_step.click()
    expect(counter).to_have_text(re.compile(r"Step 3 of \d+"))
    page.locator("details.share > summary").click()
    expect(page.locator("details.share")).to_have_attribute("open", "")
    return ident


def snippet(page) -> str:
    return page.get_by_label("Embed snippet").input_value()


def parsed_iframe(page, markup: str) -> dict:
    """`markup` parsed as a document body (DOMParser) in `page`: the elements it makes and the
    first one's src and title."""
    return page.evaluate(
        """(markup) => {
            const body = new DOMParser().parseFromString(markup, "text/html").body;
            const first = body.firstElementChild;
            return {
                tags: [...body.querySelectorAll("*")].map((el) => el.tagName),
                src: first && first.getAttribute("src"),
                title: first && first.getAttribute("title"),
            };
        }""",
        markup,
    )


def test_the_link_follows_the_step_and_copies(share_page, server_url):
    page = share_page
    ident = open_at_step_3(page, server_url)
    permalink = page.get_by_label("Address of this trace at the step shown")
    expect(permalink).to_have_value(f"{server_url}/t/{ident}#step=3")
    # the trace's plain link stays as it is, under the dialog
    expect(page.locator(".permalink a")).to_have_attribute("href", f"/t/{ident}")

    share = page.locator("grad-share")
    share.get_by_role("button", name="Copy").first.click()
    expect(share.get_by_role("status").first).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == f"{server_url}/t/{ident}#step=3"

    # the dialog stays in step while open
    page.get_by_role("button", name="Next ›").click()
    expect(permalink).to_have_value(f"{server_url}/t/{ident}#step=4")
    # and the link opens the trace at that step
    page.goto(permalink.input_value())
    expect(page.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 4 of"))


def test_the_embed_snippet_follows_the_choices(share_page, server_url):
    page = share_page
    ident = open_at_step_3(page, server_url)
    embed = f"{server_url}/embed/{ident}"
    assert parsed_iframe(page, snippet(page))["src"] == f"{embed}?step=3"

    page.get_by_label("Theme", exact=True).select_option("dark")
    page.get_by_label("Embed's controls", exact=True).select_option("minimal")
    page.get_by_label("View", exact=True).select_option("autograd")
    expected = f"{embed}?view=autograd&theme=dark&controls=minimal&step=3"
    assert parsed_iframe(page, snippet(page))["src"] == expected
    # the reveal.js slide has the same address, lazily
    slide = page.get_by_label("reveal.js slide").input_value()
    assert f'data-src="{expected.replace("&", "&amp;")}"' in slide

    page.get_by_label("Embed starts at this step", exact=True).uncheck()
    page.get_by_label("From step", exact=True).fill("2")
    page.get_by_label("to step", exact=True).fill("5")
    expected = f"{embed}?view=autograd&theme=dark&from=2&to=5&controls=minimal"
    assert parsed_iframe(page, snippet(page))["src"] == expected
    # a step outside the range chosen is brought into it (the embed would refuse it)
    page.get_by_label("Embed starts at this step", exact=True).check()
    page.get_by_label("From step", exact=True).fill("4")
    assert parsed_iframe(page, snippet(page))["src"].endswith("from=4&to=5&controls=minimal&step=4")


def another_page(page):
    """A second page in `page`'s context, whose console errors fail the test too."""
    other = page.context.new_page()
    other.on("console", lambda m: page.problems.append(m.text) if m.type == "error" else None)
    other.on("pageerror", lambda e: page.problems.append(str(e)))
    return other


def test_the_snippet_pasted_elsewhere_is_the_iframe_it_says_and_plays(
    share_page, server_url, elsewhere
):
    page = share_page
    ident = open_at_step_3(page, server_url)
    markup = snippet(page)
    blank = another_page(page)
    blank.goto("about:blank")
    parsed = parsed_iframe(blank, markup)
    src = f"{server_url}/embed/{ident}?step=3"
    assert parsed == {"tags": ["IFRAME"], "src": src, "title": TITLE}
    # pasted into another site's page, it is a frame that plays the trace from step 3
    course = another_page(page)
    course.goto(elsewhere("course", markup))
    frame = course.frame_locator("iframe")
    expect(frame.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 3 of"))
    assert course.locator("iframe").get_attribute("title") == TITLE
    assert course.locator("script").count() == 0


# reveal.js itself, test-only (tests/browser/vendor/, from the npm registry, MIT): the deck is
# the Share box's slide between two others, and the Share box's script, as an instructor pastes
# them. viewDistance 1 makes reveal.js unload the trace's frame when the deck moves past it.
REVEAL = "5.2.1"
VENDOR = Path(__file__).parent / "vendor"


def reveal_deck(slide: str, script: str) -> str:
    return (
        f'<link rel="stylesheet" href="reveal-{REVEAL}.css">'
        '<div class="reveal"><div class="slides">'
        "<section><h1>Autograd, live</h1></section>"
        f"{slide}"
        "<section><h2>Questions?</h2></section>"
        "</div></div>"
        f'<script src="reveal-{REVEAL}.js"></script>'
        '<script>Reveal.initialize({ hash: false, transition: "none", viewDistance: 1 });</script>'
        f"{script}"
    )


def test_a_reveal_slide_follows_its_fragments(share_page, server_url, elsewhere):
    page = share_page
    open_at_step_3(page, server_url)
    slide = page.get_by_label("reveal.js slide").input_value()
    assert slide.startswith('<section data-trace-start="3">')
    script = page.get_by_label("reveal.js script").input_value()
    for name in (f"reveal-{REVEAL}.js", f"reveal-{REVEAL}.css"):
        elsewhere.put(name, (VENDOR / name).read_bytes())
    deck = another_page(page)
    deck.goto(elsewhere("deck", reveal_deck(slide, script)))
    deck.wait_for_function(f"() => Reveal.isReady() && Reveal.VERSION === '{REVEAL}'")
    counter = deck.frame_locator("section.present iframe").locator("grad-player [data-counter]")

    deck.keyboard.press("ArrowRight")  # to the trace's slide: its frame loads at step 3
    expect(counter).to_have_text(re.compile(r"Step 3 of"))
    deck.keyboard.press("ArrowRight")  # each fragment a step on
    expect(counter).to_have_text(re.compile(r"Step 4 of"))
    deck.keyboard.press("ArrowRight")
    expect(counter).to_have_text(re.compile(r"Step 5 of"))
    deck.keyboard.press("ArrowLeft")  # and back
    expect(counter).to_have_text(re.compile(r"Step 4 of"))
    # a fragment may name its step
    deck.evaluate("document.querySelectorAll('.fragment')[1].dataset.traceStep = '2'")
    deck.keyboard.press("ArrowRight")
    expect(counter).to_have_text(re.compile(r"Step 2 of"))
    # past the slide, reveal.js unloads its frame; back on it, the frame loads again at the
    # step its address says and catches up with the fragments (all shown, coming back)
    deck.keyboard.press("ArrowRight")
    expect(deck.locator("section[data-trace-start] iframe")).not_to_have_attribute(
        "src", re.compile(".")
    )
    deck.keyboard.press("ArrowLeft")
    expect(counter).to_have_text(re.compile(r"Step 2 of"))


def test_the_downloads_follow_the_choices_and_the_step(share_page, server_url):
    page = share_page
    ident = open_at_step_3(page, server_url)
    gif = page.get_by_role("link", name="Animated GIF")
    picture = page.get_by_role("link", name="This step as a picture")
    expect(gif).to_have_attribute("href", f"/t/{ident}/export.gif")
    expect(picture).to_have_attribute("href", f"/t/{ident}.png?step=3")
    page.get_by_label("View", exact=True).select_option("autograd")
    page.get_by_label("Theme", exact=True).select_option("dark")
    page.get_by_label("to step", exact=True).fill("4")
    expect(gif).to_have_attribute("href", f"/t/{ident}/export.gif?view=autograd&theme=dark&to=4")
    expect(picture).to_have_attribute("href", f"/t/{ident}.png?view=autograd&theme=dark&step=3")
    for name in ("Standalone HTML", "SVG and PNG of every step", "PDF, a page per step"):
        href = page.get_by_role("link", name=name).get_attribute("href")
        assert href.endswith("?view=autograd&theme=dark&to=4"), (name, href)
    # with the links following the choices, the no-JavaScript buttons are put away
    expect(page.locator("[data-share-nojs]")).to_be_hidden()
    # and what they name is served
    assert page.request.get(server_url + picture.get_attribute("href")).ok


def test_a_long_runs_downloads_say_what_they_are_doing_and_why_not(share_page, server_url):
    """The built-in 20-pass MLP has more steps than an image export draws: the dialog says so
    (the browser alone dropped the refused download without a word); with a range, the GIF is
    made while the dialog counts the seconds, and saved; a busy server's answer is shown."""
    page = share_page
    reply = page.request.post(
        f"{server_url}/api/traces", data={"code": BY_SLUG["mlp-training"].code}
    )
    assert reply.ok, reply.text()
    ident = reply.json()["id"]
    page.goto(f"{server_url}/t/{ident}")
    expect(page.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 1 of"))
    total = int(page.locator("grad-share").get_attribute("data-steps"))
    assert total > MAX_FRAMES
    page.locator("details.share > summary").click()
    status = page.locator("[data-download-status]")
    gif = page.get_by_role("link", name="Animated GIF")
    gif.click()
    expect(status).to_contain_text(f"at most {MAX_FRAMES} steps")
    expect(status).to_contain_text(f"steps 1 to {total} are {total}")

    page.get_by_label("to step", exact=True).fill("3")
    expect(page.locator("[data-frames-note]")).to_be_hidden()
    page.evaluate(
        """() => {
            const status = document.querySelector("[data-download-status]");
            window.said = [];
            new MutationObserver(() => said.push(status.textContent))
                .observe(status, { childList: true, characterData: true, subtree: true });
        }"""
    )
    with page.expect_download() as download:
        gif.click()
    assert download.value.suggested_filename == f"gradtrace-{ident}-steps-1-3.gif"
    expect(status).to_have_text(f"Downloaded gradtrace-{ident}-steps-1-3.gif.")
    assert page.evaluate("said")[0].startswith("Making Animated GIF")
    with open(download.value.path(), "rb") as saved:
        assert saved.read(6) == b"GIF89a"

    # a busy server's answer, as it says it
    page.route(
        re.compile(r".*/export\.pdf.*"),
        lambda route: route.fulfill(
            status=503, body="Too many exports at once.", headers={"Retry-After": "7"}
        ),
    )
    page.get_by_role("link", name="PDF, a page per step").click()
    expect(status).to_have_text(
        "PDF, a page per step could not be made: Too many exports at once. Try again in 7 s."
    )
    # Chromium reports the 503 itself as a console error: that one is expected here
    page.problems[:] = [p for p in page.problems if "503 (Service Unavailable)" not in p]


def test_the_open_dialog_passes_axe(a11y_share_page, server_url):
    page = a11y_share_page
    open_at_step_3(page, server_url)
    page.locator("grad-share").get_by_role("button", name="Copy").first.click()
    expect(page.locator("grad-share").get_by_role("status").first).to_have_text("Copied")
    audit(page, "the open Share dialog")
