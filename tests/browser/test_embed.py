"""Embeds in real Chromium: framed by a page of another origin (a second loopback port), driven
and followed through postMessage; a step range the player never leaves; the controls, code and
dark-theme options; and the trace page, which no other origin may frame."""

from __future__ import annotations

import functools
import http.server
import re
import threading

import pytest
from playwright.sync_api import expect

from app.examples import BY_SLUG
from tests.browser.test_accessibility import audit
from tests.browser.test_player_page import contrast, luminance
from tests.live_server import free_port

CODE = BY_SLUG["two-paths"].code

# the host page collects every message the embed sends it and can send it any
HOST_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A host</title><link rel="icon" href="data:,">
</head><body>
{frames}
<script>
window.received = [];
addEventListener("message", (event) => {{
  if (event.data && event.data.gradtrace) window.received.push(event.data);
}});
function send(message) {{
  document.getElementById("embed").contentWindow.postMessage(message, "*");
}}
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def ident(browser, server_url):
    context = browser.new_context()
    reply = context.request.post(f"{server_url}/api/traces", data={"code": CODE})
    assert reply.ok, reply.text()
    ident = reply.json()["id"]
    context.close()
    return ident


@pytest.fixture(scope="module")
def total(browser, server_url, ident):
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{server_url}/embed/{ident}")
    steps = int(page.locator("[data-scrubber]").get_attribute("max"))
    context.close()
    return steps


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """host(name, frames) -> the URL of a page made of `frames` (HTML), served from another
    origin than the app: the same loopback address on another port."""
    root = tmp_path_factory.mktemp("host")
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def page(name: str, frames: str) -> str:
        (root / f"{name}.html").write_text(HOST_PAGE.format(frames=frames))
        return f"http://127.0.0.1:{server.server_port}/{name}.html"

    yield page
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def received(page, kind: str) -> list[dict]:
    return page.evaluate("(kind) => window.received.filter((m) => m.gradtrace === kind)", kind)


def counter_says(frame, step: int, total: int) -> None:
    expect(frame.locator("[data-counter]")).to_have_text(f"Step {step} of {total}")


# ***** (a) another origin frames the embed, drives it and follows it *****


def test_a_host_on_another_origin_drives_and_follows_the_embed(
    page, server_url, host, ident, total
):
    src = f"{server_url}/embed/{ident}?speed=2"
    iframe = f'<iframe id="embed" title="A trace" width="960" height="540" src="{src}"></iframe>'
    page.goto(host("drive", iframe))
    assert not page.url.startswith(server_url)  # another origin
    frame = page.frame_locator("#embed")
    # framing was allowed: the player runs inside the frame
    expect(frame.locator("grad-player.live")).to_have_count(1)
    counter_says(frame, 1, total)

    page.wait_for_function("window.received.some((m) => m.gradtrace === 'ready')")
    [ready] = received(page, "ready")
    assert ready == {"gradtrace": "ready", "id": ident, "steps": total, "from": 1, "to": total}
    assert received(page, "step")[0]["step"] == 1  # where it opened

    page.evaluate("send({gradtrace: 'goto', step: 3})")
    counter_says(frame, 3, total)
    page.wait_for_function("window.received.some((m) => m.gradtrace === 'step' && m.step === 3)")
    third = [m for m in received(page, "step") if m["step"] == 3][-1]
    assert third["id"] == ident and third["steps"] == total and third["phase"] == "forward"
    narration = frame.locator("[data-narration]").text_content()
    assert third["text"] and third["text"] == narration  # what the embed shows, in words

    # play advances (a step each 0.6 s at 2x), pause stops it
    page.evaluate("send({gradtrace: 'play'})")
    page.wait_for_function("window.received.some((m) => m.gradtrace === 'step' && m.step >= 5)")
    page.evaluate("send({gradtrace: 'pause'})")
    expect(frame.locator("[data-action=play]")).to_have_text("Play")
    stopped = frame.locator("[data-counter]").text_content()
    page.wait_for_timeout(1500)
    assert frame.locator("[data-counter]").text_content() == stopped
    steps = [m["step"] for m in received(page, "step")]
    assert {4, 5} <= set(steps)

    page.evaluate("send({gradtrace: 'prev'})")
    page.evaluate("send({gradtrace: 'next'})")
    page.evaluate("send({gradtrace: 'next'})")
    here = int(re.search(r"Step (\d+)", stopped).group(1))
    counter_says(frame, here + 1, total)


def test_a_deck_opened_from_a_file_may_frame_the_embed(page, server_url, ident, tmp_path):
    deck = tmp_path / "deck.html"
    src = f"{server_url}/embed/{ident}"
    deck.write_text(
        HOST_PAGE.format(frames=f'<iframe id="embed" title="A trace" src="{src}"></iframe>')
    )
    page.goto(deck.as_uri())
    expect(page.frame_locator("#embed").locator("grad-player.live")).to_have_count(1)
    page.wait_for_function("window.received.some((m) => m.gradtrace === 'ready')")


def test_the_embed_ignores_what_is_not_a_message_of_its_api(page, server_url, host, ident, total):
    src = f"{server_url}/embed/{ident}?step=2"
    page.goto(host("junk", f'<iframe id="embed" title="A trace" src="{src}"></iframe>'))
    frame = page.frame_locator("#embed")
    counter_says(frame, 2, total)
    page.wait_for_function("window.received.some((m) => m.gradtrace === 'ready')")
    for junk in (
        "'goto'",
        "null",
        "{gradtrace: 'goto', step: '5'}",
        "{gradtrace: 'goto'}",
        "{gradtrace: 'constructor'}",
        "{gradtrace: 'toString'}",
        "{gradtrace: 'eval', code: 'document.body.remove()'}",
        "[1, 2]",
    ):
        page.evaluate(f"send({junk})")
    page.wait_for_timeout(300)
    counter_says(frame, 2, total)
    # a step out of range is clamped, not an error
    page.evaluate("send({gradtrace: 'goto', step: 999})")
    counter_says(frame, total, total)
    page.evaluate("send({gradtrace: 'goto', step: -4})")
    counter_says(frame, 1, total)


# ***** (b) a step range *****


def test_a_range_holds_every_way_of_moving(page, server_url, ident, total):
    page.goto(f"{server_url}/embed/{ident}?from=2&to=4&step=4")
    counter_says(page, 4, total)
    page.locator("[data-action=next]").click()
    counter_says(page, 4, total)
    page.locator("[data-action=last]").click()
    counter_says(page, 4, total)
    for _ in range(4):
        page.locator("[data-action=prev]").click()
    counter_says(page, 2, total)
    page.keyboard.press("End")
    counter_says(page, 4, total)
    page.keyboard.press("Home")
    counter_says(page, 2, total)
    page.keyboard.press("ArrowLeft")
    counter_says(page, 2, total)
    scrubber = page.locator("[data-scrubber]")
    assert (scrubber.get_attribute("min"), scrubber.get_attribute("max")) == ("2", "4")
    page.evaluate("document.querySelector('grad-player').goto(0)")
    counter_says(page, 2, total)
    # the steps in words outside the range are held back too
    shown = page.locator("details.all-steps li:not([hidden])")
    expect(shown).to_have_count(3)


def test_playing_stops_at_the_end_of_the_range(page, server_url, ident, total):
    page.goto(f"{server_url}/embed/{ident}?from=2&to=3&autoplay=1&speed=4")
    counter_says(page, 3, total)
    expect(page.locator("[data-action=play]")).to_have_text("Play")
    page.wait_for_timeout(700)
    counter_says(page, 3, total)


def test_a_looping_range_wraps_to_its_first_step(page, server_url, ident, total):
    page.goto(f"{server_url}/embed/{ident}?from=2&to=3&loop=1&speed=4")
    counter_says(page, 2, total)
    # the steps it shows while it plays (0-based: 1 is "Step 2", the range's start, 2 its end),
    # until it has come back to the start after the end
    seen = page.evaluate(LOOPED)
    assert seen[:3] == [2, 1, 2] and set(seen) == {1, 2}
    expect(page.locator("[data-action=play]")).to_have_text("Pause")


LOOPED = """() => new Promise((resolve, reject) => {
  const player = document.querySelector('grad-player');
  const seen = [];
  player.addEventListener('grad-step', (event) => {
    seen.push(event.detail.step);
    if (seen.length === 3) resolve(seen);
  });
  setTimeout(() => reject(new Error(`only ${seen}`)), 8000);
  player.play();
})"""


# ***** (c) controls, code and theme *****


def test_controls_none_shows_no_controls_and_still_narrates(page, server_url, ident):
    page.goto(f"{server_url}/embed/{ident}?controls=none&autoplay=1&speed=4")
    expect(page.locator("grad-player.live")).to_have_count(1)
    expect(page.locator(".controls")).to_be_hidden()
    expect(page.locator(".controls button:visible, .zoom button:visible")).to_have_count(0)
    expect(page.locator("[data-narration]")).not_to_be_empty()
    # autoplay drives it
    expect(page.locator("[data-counter]")).to_have_text(re.compile(r"Step [3-9]"))


def test_controls_minimal_keeps_back_play_next_and_the_counter(page, server_url, ident):
    page.goto(f"{server_url}/embed/{ident}?controls=minimal")
    buttons = page.locator(".controls button:visible")
    expect(buttons).to_have_text(["‹ Back", "Play", "Next ›"])
    expect(page.locator("[data-counter]")).to_be_visible()
    for gone in ("[data-scrubber]", "select[data-speed]", ".view-toggle", "[data-phase-label]"):
        expect(page.locator(gone)).to_be_hidden()


def test_code_hide_gives_the_graph_the_whole_width(page, server_url, ident):
    page.set_viewport_size({"width": 900, "height": 500})
    page.goto(f"{server_url}/embed/{ident}?code=hide")
    expect(page.locator("grad-player.live")).to_have_count(1)
    expect(page.locator("pre.code")).to_be_hidden()
    assert page.locator("[data-views]").bounding_box()["width"] > 850
    # and with the code, it shares the row
    page.goto(f"{server_url}/embed/{ident}")
    expect(page.locator("pre.code")).to_be_visible()
    assert page.locator("[data-views]").bounding_box()["width"] < 650


def test_the_embed_fills_its_frame(page, server_url, ident):
    for width, height in ((900, 500), (420, 640)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{server_url}/embed/{ident}")
        expect(page.locator("grad-player.live")).to_have_count(1)
        assert page.evaluate("document.scrollingElement.scrollHeight") <= height
        assert page.evaluate("document.scrollingElement.scrollWidth") <= width
        graph = page.locator("[data-views]").bounding_box()
        assert graph["height"] > height / 4


EFFECTIVE_BACKGROUND = """(el) => {
  for (let node = el; node; node = node.parentElement) {
    const colour = getComputedStyle(node).backgroundColor;
    if (colour !== 'rgba(0, 0, 0, 0)' && colour !== 'transparent') return colour;
  }
  return 'rgb(255, 255, 255)';
}"""


def test_the_dark_theme_is_dark_and_readable(page, server_url, ident, shot):
    page.goto(f"{server_url}/embed/{ident}?theme=dark&step=8")
    expect(page.locator("grad-player.live")).to_have_count(1)
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert luminance(background) < 0.05
    narration = page.locator("[data-narration]")
    ink = narration.evaluate("(el) => getComputedStyle(el).color")
    assert contrast(ink, narration.evaluate(EFFECTIVE_BACKGROUND)) >= 4.5
    counter = page.locator("[data-counter]")
    assert contrast(counter.evaluate("(el) => getComputedStyle(el).color"), background) >= 4.5
    # the graph's edges and their gradient labels are light on the dark stage
    stage = page.locator("[data-views]").evaluate(EFFECTIVE_BACKGROUND)
    assert luminance(stage) < 0.05
    edge = page.locator("figure:not([hidden]) g.edge:not(.hidden) > path").first
    assert contrast(edge.evaluate("(el) => getComputedStyle(el).stroke"), stage) >= 3
    label = page.locator("figure:not([hidden]) g.edge:not(.hidden) text.grad").filter(
        has_text=re.compile(".")
    )
    assert label.count() > 0
    assert contrast(label.first.evaluate("(el) => getComputedStyle(el).fill"), stage) >= 4.5
    shot(page, "embed-dark")


# ***** (d) only embeds may be framed *****


def test_another_origin_may_not_frame_the_trace_page(page, server_url, host, ident):
    frames = (
        f'<iframe id="page" title="The trace page" src="{server_url}/t/{ident}"></iframe>'
        f'<iframe id="embed" title="The embed" src="{server_url}/embed/{ident}"></iframe>'
    )
    page.goto(host("refused", frames))
    expect(page.frame_locator("#embed").locator("grad-player.live")).to_have_count(1)
    refused = page.frame_locator("#page")
    expect(refused.locator("body")).to_have_count(1)  # Chromium's error page stands in
    expect(refused.locator("grad-player")).to_have_count(0)
    # the frame holds an error page, not the trace page's document
    assert not page.locator("#page").element_handle().content_frame().url.startswith(server_url)
    # Chromium says why, in the console: the one error this test expects
    refusals = [p for p in page.problems if "frame-ancestors 'none'" in p]
    assert refusals, page.problems
    page.problems[:] = [p for p in page.problems if p not in refusals]


@pytest.mark.parametrize("query", ["", "?theme=dark&controls=minimal", "?controls=none&code=hide"])
def test_the_embed_passes_axe(a11y_page, server_url, ident, query):
    a11y_page.goto(f"{server_url}/embed/{ident}{query}")
    expect(a11y_page.locator("grad-player.live")).to_have_count(1)
    audit(a11y_page, f"the embed{query}")


# ***** the player's options for pages inside other apps (a notebook uses these two) *****


def test_hash_off_and_keys_on_focus_leave_the_host_page_alone(page, server_url, ident, total):
    # the trace page as a notebook would write its player: the same markup, two attributes more
    def with_options(route):
        answer = route.fetch()
        body = answer.text().replace(
            "<grad-player ", '<grad-player data-hash="off" data-keys="focus" ', 1
        )
        route.fulfill(response=answer, body=body)

    page.route(f"{server_url}/t/{ident}", with_options)
    page.goto(f"{server_url}/t/{ident}#step=4")
    counter_says(page, 1, total)  # the URL's step is not read
    page.locator("body").click(position={"x": 2, "y": 2})
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(200)
    counter_says(page, 1, total)  # a key outside the player is not its business
    page.locator("grad-player").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    counter_says(page, 3, total)
    assert page.evaluate("location.hash") == "#step=4"  # nor is it written
    page.evaluate("location.hash = '#step=7'")
    page.wait_for_timeout(200)
    counter_says(page, 3, total)


def test_loading_the_player_twice_is_harmless(page, server_url, ident, total):
    # a notebook that runs the cell that loads the player again
    page.goto(f"{server_url}/embed/{ident}")
    counter_says(page, 1, total)
    page.evaluate("() => import('/static/player.js?again').then(() => true)")
    page.locator("[data-action=next]").click()
    counter_says(page, 2, total)


def test_an_800_by_500_embed_shows_whole_code_lines(page, server_url):
    # the Share box's default size; the code column beside the graph once cut long lines
    code = BY_SLUG["linear-step"].code
    reply = page.request.post(f"{server_url}/api/traces", data={"code": code})
    assert reply.ok, reply.text()
    page.set_viewport_size({"width": 800, "height": 500})
    page.goto(f"{server_url}/embed/{reply.json()['id']}")
    expect(page.locator("grad-player.live")).to_have_count(1)
    longest = max(len(line) for line in code.splitlines())
    assert longest > 40  # long enough to need the room
    cut = page.evaluate(
        """() => {
            const pre = document.querySelector("pre.code");
            return pre.scrollWidth > pre.clientWidth;
        }"""
    )
    assert not cut
