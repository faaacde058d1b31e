"""The standalone HTML export played in Chromium from `file://` with the network cut off: the
player comes alive from what the file holds, steps, jumps, switches views, keeps to the range
it was exported with, and not one request leaves the page.

Every request but the file's own is aborted (`context.route`, which sees `file://` requests
too), and the requests the page makes are counted: the only one allowed is the file. The
file's own CSP forbids any fetch, and a violation is a console error, which fails the test.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from app.examples import BY_SLUG, DEFAULT
from app.export.make import export
from app.export.options import ExportRequest
from app.render import render
from engine.tracer import trace_snippet

LOOP = BY_SLUG["accumulation"]  # three backward passes, three forward graphs


def exported(tmp_path, code: str, request: ExportRequest) -> tuple[str, dict]:
    """`code`'s trace exported as `request`, written to a file: its file:// URL, and the
    rendered trace the file was made from."""
    trace = trace_snippet(code)
    path = tmp_path / f"{request.theme}-{request.filename('test')}"
    path.write_bytes(export(trace, "test", request))
    return path.as_uri(), render(trace)


def open_offline(page, url: str) -> list[str]:
    """Open `url` with every other request refused; returns the URLs the page asked for (the
    list grows as the test goes on)."""
    page.context.route(
        "**/*", lambda route: route.continue_() if route.request.url == url else route.abort()
    )
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(url)
    expect(page.locator("grad-player.live")).to_be_attached()
    return asked


def counter(page):
    return page.locator("[data-counter]")


def button(page, action: str):
    return page.locator(f"[data-action={action}]")


def plain(text: str) -> str:
    """A narration as a reader sees it: its `quoted` code shown without the backticks."""
    return text.replace("`", "")


@pytest.mark.parametrize("example", [DEFAULT, LOOP], ids=lambda e: e.slug)
def test_the_file_plays_offline_and_asks_for_nothing(page, tmp_path, example):
    url, rendered = exported(tmp_path, example.code, ExportRequest.checked("html"))
    steps = rendered["steps"]
    total = len(steps)
    asked = open_offline(page, url)
    expect(counter(page)).to_have_text(f"Step 1 of {total}")
    expect(page.locator("[data-narration]")).to_have_text(plain(steps[0]["text"]))

    button(page, "next").click()
    expect(counter(page)).to_have_text(f"Step 2 of {total}")
    expect(page.locator("[data-narration]")).to_have_text(plain(steps[1]["text"]))
    button(page, "last").click()
    expect(counter(page)).to_have_text(f"Step {total} of {total}")
    expect(page.locator("[data-narration]")).to_have_text(plain(steps[-1]["text"]))

    tensors = page.locator('figure[data-view="tensors"]')
    autograd = page.locator('figure[data-view="autograd"]')
    expect(tensors).to_be_visible()
    expect(autograd).to_be_hidden()
    page.get_by_role("radio", name="autograd").check()
    expect(autograd).to_be_visible()
    expect(tensors).to_be_hidden()
    # the last step draws the graph's last pass: some of it is shown
    assert autograd.locator("g.node[id]:not(.hidden)").count() > 0

    if rendered["generations"] > 1:  # the pass picker works from the file too
        expect(page.locator("select[data-pass]")).to_have_value(str(rendered["generations"]))
        button(page, "first").click()
        expect(page.locator("select[data-pass]")).to_have_value("1")

    assert asked == [url], f"the file asked for more than itself: {asked}"


def test_a_range_is_all_the_file_shows(page, tmp_path):
    url, rendered = exported(tmp_path, DEFAULT.code, ExportRequest.checked("html", first=3, last=5))
    total = len(rendered["steps"])
    asked = open_offline(page, url)
    expect(counter(page)).to_have_text(f"Step 3 of {total}")
    button(page, "prev").click()
    expect(counter(page)).to_have_text(f"Step 3 of {total}")
    button(page, "last").click()
    expect(counter(page)).to_have_text(f"Step 5 of {total}")
    expect(page.locator("[data-narration]")).to_have_text(plain(rendered["steps"][4]["text"]))
    button(page, "next").click()
    expect(counter(page)).to_have_text(f"Step 5 of {total}")
    page.locator("grad-player").focus()
    page.keyboard.press("Home")
    expect(counter(page)).to_have_text(f"Step 3 of {total}")
    button(page, "first").click()
    expect(counter(page)).to_have_text(f"Step 3 of {total}")
    page.keyboard.press("End")
    expect(counter(page)).to_have_text(f"Step 5 of {total}")
    assert asked == [url]


def luminance(colour: str) -> float:
    """Relative luminance (WCAG) of a computed `rgb(...)` colour, 0 black to 1 white."""
    red, green, blue = (int(c) / 255 for c in re.findall(r"\d+", colour)[:3])
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (red, green, blue)
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def page_colours(page) -> tuple[str, str]:
    """The page's computed background (the root's, or the body's where the root has none) and
    the narration's text colour."""
    return page.evaluate(
        """() => {
          const painted = (el) => getComputedStyle(el).backgroundColor;
          const clear = (c) => c === "rgba(0, 0, 0, 0)" || c === "transparent";
          const root = painted(document.documentElement);
          const background = clear(root) ? painted(document.body) : root;
          return [background, getComputedStyle(document.querySelector("[data-narration]")).color];
        }"""
    )


def test_the_dark_theme_is_dark(page, tmp_path):
    light_url, _ = exported(tmp_path, DEFAULT.code, ExportRequest.checked("html"))
    dark_url, _ = exported(tmp_path, DEFAULT.code, ExportRequest.checked("html", theme="dark"))
    page.emulate_media(color_scheme="light")  # the file's theme, not the viewer's scheme
    assert open_offline(page, light_url) == [light_url]
    background, ink = page_colours(page)
    assert luminance(background) > 0.8 and luminance(ink) < 0.2, (background, ink)
    assert open_offline(page, dark_url) == [dark_url]
    background, ink = page_colours(page)
    assert luminance(background) < 0.05, f"a dark export's background is {background}"
    assert luminance(ink) > 0.5, f"its narration is {ink} on {background}"
