"""Printing a trace page gives a handout (static/handout.js, player.css's print section): every
step with its heading, its picture and its narration, in Chromium's own PDF print. The pictures
are checked against app/render/playback.state_at, the fold's reference, and the page without
JavaScript still prints every step in words."""

from __future__ import annotations

import io
import json
import re
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
from playwright.sync_api import expect
from pypdf import PdfReader

from app.examples import BY_SLUG, DEFAULT
from app.lessons.library import Library
from app.render.playback import state_at
from tests.browser.test_player_page import open_trace, started

ROOT = Path(__file__).resolve().parents[2]
CONTROLS = ["Jump to backward", "« First", "Last »", "Zoom in", "Share, embed or download"]
# 100 passes of a loop: 501 steps, past the handout's cap of 300
LONG_LOOP = """\
import torch
w = torch.tensor(1.0, requires_grad=True)
for i in range(100):
    y = w * 2.0
    y.backward()
"""


def flat(text: str) -> str:
    """Text as a PDF's text layer gives it back, compared loosely: ligatures (ﬁ) undone,
    backticks (shown as code) dropped, every run of whitespace one space."""
    return " ".join(unicodedata.normalize("NFKC", text).replace("`", "").split())


def pdf_text(page) -> tuple[str, int]:
    reader = PdfReader(io.BytesIO(page.pdf()))
    return flat(" ".join(p.extract_text() for p in reader.pages)), len(reader.pages)


def player_data(page) -> dict:
    return json.loads(page.locator("script[data-player-data]").text_content())


def assert_in_order_once(text: str, parts: list[str]) -> None:
    """Each part is in `text` once per time it is in `parts` (a step said again, as a second
    backward() may, is printed again), and in the order of `parts`."""
    for part, times in Counter(parts).items():
        assert text.count(part) == times, f"{part!r} is in the PDF {text.count(part)} times"
    at = 0
    for part in parts:
        found = text.find(part, at)
        assert found >= 0, f"{part!r} is out of order in the PDF"
        at = found + len(part)


def handout_blocks(page):
    return page.locator("section.handout > .handout-step")


def test_printing_gives_every_step_once_in_order(page, server_url):
    open_trace(page, server_url, DEFAULT.code)
    started(page)
    steps = player_data(page)["steps"]
    texts = [flat(s["text"]) for s in steps]
    assert len(set(texts)) == len(texts) > 3  # distinct, so "once" means something
    page.emulate_media(media="print")  # Chromium tells matchMedia("print") listeners
    expect(handout_blocks(page)).to_have_count(len(steps))
    text, pages = pdf_text(page)
    assert pages >= 2  # a block never splits: 11 steps with pictures do not fit one page
    assert_in_order_once(text, texts)
    n = len(steps)
    assert_in_order_once(text, [f"Step {k} of {n} · {s['phase']}" for k, s in enumerate(steps, 1)])
    for words in CONTROLS:
        assert words not in text


def test_a_real_print_builds_the_handout_through_beforeprint(page, server_url):
    """Ctrl+P fires `beforeprint` (and so does Chromium's PDF print), with no media change
    beforehand: that path alone must build it."""
    open_trace(page, server_url, BY_SLUG["retain-graph"].code)
    started(page)
    steps = player_data(page)["steps"]
    assert handout_blocks(page).count() == 0  # nothing built until the page prints
    text, _ = pdf_text(page)
    assert_in_order_once(text, [flat(s["text"]) for s in steps])
    expect(handout_blocks(page)).to_have_count(len(steps))
    # built once: printing again reuses it
    page.evaluate("document.querySelector('section.handout').dataset.first = 'yes'")
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert page.locator("section.handout").count() == 1
    assert page.locator("section.handout").get_attribute("data-first") == "yes"


def test_on_screen_the_handout_is_not_seen(page, server_url):
    open_trace(page, server_url, BY_SLUG["retain-graph"].code)
    started(page)
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    expect(handout_blocks(page).first).to_be_attached()
    expect(page.locator("section.handout")).to_be_hidden()
    expect(page.locator("[data-action=first]")).to_be_visible()


@pytest.mark.parametrize("view", ["tensors", "autograd"])
def test_each_picture_is_the_fold_at_its_step(page, server_url, view):
    """Three passes (so three frames): each block's picture shows exactly the elements the
    fold shows at its step, focus and texts included, framed on the step's pass."""
    open_trace(page, server_url, BY_SLUG["accumulation"].code)
    started(page)
    page.locator(f"input[name=view][value={view}]").check()
    data = player_data(page)
    steps = data["steps"]
    meta = data["views"][view]
    assert data["generations"] > 1
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    expect(handout_blocks(page)).to_have_count(len(steps))
    pictures = page.evaluate(
        """() => [...document.querySelectorAll('section.handout > .handout-step')].map((block) => {
          const svg = block.querySelector('svg');
          if (!svg) return null;
          const parts = [...svg.querySelectorAll('g.node, g.edge')];
          const texts = (cls) => Object.fromEntries(parts
            .filter((el) => el.querySelector('text.' + cls))
            .map((el) => [el.dataset.id, el.querySelector('text.' + cls).textContent]));
          const ids = (els) => els.map((el) => el.dataset.id);
          return {
            label: svg.getAttribute('aria-label'),
            viewBox: svg.getAttribute('viewBox'),
            visible: ids(parts.filter((el) => !el.classList.contains('hidden'))),
            focus: ids(parts.filter((el) => el.matches('.focus, .error'))),
            grads: texts('grad'),
            values: texts('value'),
          };
        })"""
    )
    for k, (step, picture) in enumerate(zip(steps, pictures, strict=True)):
        state = state_at(steps, view, k)
        if not state.visible:
            assert picture is None, f"step {k + 1} shows nothing, yet has a picture"
            continue
        assert picture["label"] == f"The {view} graph at step {k + 1}"
        assert set(picture["visible"]) == set(state.visible), f"step {k + 1}"
        assert set(picture["focus"]) == set(state.focus) & set(state.visible), f"step {k + 1}"
        for id_, text in state.grads.items():
            if id_ in picture["grads"]:
                assert picture["grads"][id_] == text, f"step {k + 1}, {id_}'s grad"
        for id_, text in state.values.items():
            if id_ in picture["values"]:
                assert picture["values"][id_] == text, f"step {k + 1}, {id_}'s value"
        frame = meta["frames"][step["generation"] - 1] or [0, 0, meta["width"], meta["height"]]
        assert [float(n) for n in picture["viewBox"].split()] == pytest.approx(frame)


def test_the_handout_adds_no_id_and_no_tab_stop(page, server_url):
    open_trace(page, server_url, BY_SLUG["two-paths"].code)
    started(page)
    ids = "[...document.querySelectorAll('[id]')].map((el) => el.id)"
    before = page.evaluate(ids)
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    expect(handout_blocks(page).first).to_be_attached()
    after = page.evaluate(ids)
    assert sorted(after) == sorted(before)
    assert len(set(after)) == len(after)
    assert page.locator("section.handout [tabindex], section.handout [role=button]").count() == 0
    # the drawings' own ids are still on the live drawings
    assert page.locator("section.handout svg [data-id]").count() > 0


def test_a_range_prints_only_its_steps(page, server_url):
    ident = open_trace(page, server_url, BY_SLUG["two-paths"].code)
    total = len(player_data(page)["steps"])
    page.goto(f"{server_url}/embed/{ident}?from=3&to=5")
    started(page)
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    expect(handout_blocks(page)).to_have_count(3)
    headings = handout_blocks(page).locator("h3").all_text_contents()
    assert [h.split(" ·")[0] for h in headings] == [f"Step {k} of {total}" for k in (3, 4, 5)]


def test_a_long_run_prints_its_first_300_steps_and_says_so(page, server_url):
    open_trace(page, server_url, LONG_LOOP)
    started(page)
    total = len(player_data(page)["steps"])
    assert total > 300
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    expect(handout_blocks(page)).to_have_count(300)
    note = page.locator("section.handout .handout-note")
    expect(note).to_have_text(
        re.compile(r"first 300 of these \d+ steps; the PDF export has every one")
    )
    expect(handout_blocks(page).last.locator("h3")).to_contain_text(f"Step 300 of {total}")


def test_without_javascript_the_page_prints_every_step_in_words(browser, server_url):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        reply = page.request.post(f"{server_url}/api/traces", data={"code": DEFAULT.code})
        page.goto(f"{server_url}/t/{reply.json()['id']}")
        steps = player_data(page)["steps"]
        # the list prints open even after a reader closed it
        page.locator("details.all-steps > summary").click()
        expect(page.locator("details.all-steps")).not_to_have_attribute("open", "")
        text, pages = pdf_text(page)
        assert pages >= 1
        assert_in_order_once(text, [flat(s["text"]) for s in steps])
        assert page.locator("section.handout").count() == 0
    finally:
        context.close()


def test_a_lesson_prints_its_prose_then_the_handout(page, server_url):
    slug = Library.load(ROOT / "lessons").lessons[0].slug
    page.goto(f"{server_url}/lessons/{slug}")
    started(page)
    prose = flat(page.locator(".prose > p").first.text_content())
    steps = player_data(page)["steps"]
    text, _ = pdf_text(page)
    first_step = text.find(f"Step 1 of {len(steps)}")
    assert 0 <= text.find(prose[:60]) < first_step
    assert_in_order_once(text, [flat(s["text"]) for s in steps])
    assert "Answer key" not in text
