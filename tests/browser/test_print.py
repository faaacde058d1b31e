"""Printing a trace page gives a handout (static/handout.js, player.css's print section): every
step with its heading, its picture and its narration, in Chromium's own PDF print; a loop's
passes between its first and its last one block each. The pictures are checked against
app/render/playback.state_at, the fold's reference, and framed as playback.paper_windows frames
them, their labels printed at 9 pt or more; the page without JavaScript still prints every step
in words."""

from __future__ import annotations

import io
import json
import math
import re
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
from playwright.sync_api import expect
from pypdf import PdfReader

from app.examples import BY_SLUG, DEFAULT
from app.lessons.library import Library
from app.render import render
from app.render.playback import HANDOUT_PAPER, MIN_LABEL_PT, paper_windows, state_at
from tests.browser.test_player_page import open_trace, started

ROOT = Path(__file__).resolve().parents[2]
CONTROLS = ["Jump to backward", "« First", "Last »", "Zoom in", "Share, embed or download"]
# one pass of 351 steps, past the handout's cap of 300
LONG_PASS = """\
import torch
w = torch.tensor(1.0, requires_grad=True)
y = w
for i in range(350):
    y = y * 1.001
"""
# Each block of the handout: its heading, and what its picture shows (null when it has none).
BLOCKS = """() => [...document.querySelectorAll('section.handout > .handout-step')].map((block) => {
  const svg = block.querySelector('svg');
  const heading = block.querySelector('h3').textContent;
  if (!svg) return { heading, picture: null };
  const parts = [...svg.querySelectorAll('g.node, g.edge')];
  const texts = (cls) => Object.fromEntries(parts
    .filter((el) => el.querySelector('text.' + cls))
    .map((el) => [el.dataset.id, el.querySelector('text.' + cls).textContent]));
  const ids = (els) => els.map((el) => el.dataset.id);
  return {
    heading,
    picture: {
      label: svg.getAttribute('aria-label'),
      viewBox: svg.getAttribute('viewBox').split(' ').map(Number),
      visible: ids(parts.filter((el) => !el.classList.contains('hidden'))),
      focus: ids(parts.filter((el) => el.matches('.focus, .error'))),
      grads: texts('grad'),
      values: texts('value'),
      texts: [...svg.querySelectorAll('text')].map((t) => t.textContent.trim()).filter(Boolean),
    },
  };
})"""


def flat(text: str) -> str:
    """Text as a PDF's text layer gives it back, compared loosely: ligatures (ﬁ) undone,
    backticks (shown as code) dropped, and whitespace too (a line may wrap where the text has
    no space, after the slash of ∂loss/∂w, and the text layer puts one there)."""
    return "".join(unicodedata.normalize("NFKC", text).replace("`", "").split())


def pdf_text(page) -> tuple[str, int]:
    reader = PdfReader(io.BytesIO(page.pdf()))
    return flat(" ".join(p.extract_text() for p in reader.pages)), len(reader.pages)


def player_data(page) -> dict:
    return json.loads(page.locator("script[data-player-data]").text_content())


def assert_in_order_once(text: str, parts: list[str]) -> None:
    """Each part is in `text` once per time it is in `parts` (a step said again, as a second
    backward() may, is printed again), and in the order of `parts`."""
    parts = [flat(part) for part in parts]
    for part, times in Counter(parts).items():
        assert text.count(part) == times, f"{part!r} is in the PDF {text.count(part)} times"
    at = 0
    for part in parts:
        found = text.find(part, at)
        assert found >= 0, f"{part!r} is out of order in the PDF"
        at = found + len(part)


def handout_blocks(page):
    return page.locator("section.handout > .handout-step")


def open_stored(page, server_url, code) -> dict:
    """Open `code`'s trace page; the trace the server stored for it."""
    reply = page.request.post(f"{server_url}/api/traces", data={"code": code})
    assert reply.ok, reply.text()
    page.goto(f"{server_url}/t/{reply.json()['id']}")
    started(page)
    return reply.json()["trace"]


def step_of(heading: str) -> int:
    """The 0-based step a block's picture shows: its own, or a summarised pass's last."""
    if found := re.match(r"Step (\d+) of", heading):
        return int(found.group(1)) - 1
    return int(re.search(r"steps \d+ to (\d+) of", heading).group(1)) - 1


def text_sizes(pdf: bytes) -> list[tuple[str, float]]:
    """Each run of text the PDF draws and its size on paper, in points: its font size through
    the text matrix and the drawing's (a picture drawn at half size halves its labels)."""
    runs = []

    def visit(text, cm, tm, font, size):
        if text.strip():
            a, b, c, d = (
                tm[0] * cm[0] + tm[1] * cm[2],
                tm[0] * cm[1] + tm[1] * cm[3],
                tm[2] * cm[0] + tm[3] * cm[2],
                tm[2] * cm[1] + tm[3] * cm[3],
            )
            runs.append((text.strip(), size * math.sqrt(abs(a * d - b * c))))

    for sheet in PdfReader(io.BytesIO(pdf)).pages:
        sheet.extract_text(visitor_text=visit)
    return runs


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
        assert flat(words) not in text


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
    """Three passes (so three frames): the first and the last step by step, the second as one
    block pictured at its last step. Each picture shows exactly the elements the fold shows at
    its step, focus and texts included, framed as playback.paper_windows frames it for the
    handout's paper (the pass whole where that is legible, else a window at 9 pt)."""
    trace = open_stored(page, server_url, BY_SLUG["accumulation"].code)
    page.locator(f"input[name=view][value={view}]").check()
    data = player_data(page)
    steps = data["steps"]
    assert data["generations"] == 3
    windows = paper_windows(render(trace), view, HANDOUT_PAPER)
    meta = data["views"][view]
    framed = [meta["frames"][s["generation"] - 1] for s in steps]
    if view == "tensors":  # its passes are too tall for 9 pt in 8 cm: some steps are windows
        assert any(w != f for w, f in zip(windows, framed, strict=True))
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    first, middle, last = (
        [k for k, s in enumerate(steps) if s["generation"] == g] for g in (1, 2, 3)
    )
    expect(handout_blocks(page)).to_have_count(len(first) + 1 + len(last))
    blocks = page.evaluate(BLOCKS)
    shown = [step_of(block["heading"]) for block in blocks]
    assert shown == [*first, middle[-1], *last]
    for k, block in zip(shown, blocks, strict=True):
        picture = block["picture"]
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
        assert picture["viewBox"] == pytest.approx(windows[k], abs=0.02), f"step {k + 1}"


def test_a_training_loop_prints_its_first_and_last_pass_step_by_step_at_9_pt(page, server_url):
    """mlp-training: 20 passes, 404 steps, once 151 pages of A4 with labels at 0.7 pt. Its first
    pass and its last print step by step, each pass between once, and no text on the paper,
    labels included, is under 9 pt."""
    trace = open_stored(page, server_url, BY_SLUG["mlp-training"].code)
    data = player_data(page)
    steps = data["steps"]
    total, last = len(steps), data["generations"]
    assert last == 20
    pdf = page.pdf(format="A4")
    reader = PdfReader(io.BytesIO(pdf))
    text = flat(" ".join(p.extract_text() for p in reader.pages))
    blocks = page.evaluate(BLOCKS)

    def heading(k: int) -> str:
        return f"Step {k + 1} of {total} · {steps[k]['phase']}"

    passes: dict[int, list[int]] = {}
    for k, step in enumerate(steps):
        passes.setdefault(step["generation"], []).append(k)
    expected = [heading(k) for k in passes[1]]
    expected += [
        f"Pass {g} of {last} · steps {passes[g][0] + 1} to {passes[g][-1] + 1} of {total}, "
        "summarised"
        for g in range(2, last)
    ]
    expected += [heading(k) for k in passes[last]]
    assert [block["heading"] for block in blocks] == expected
    assert_in_order_once(text, [flat(h) for h in expected])
    # in order (a pass's narration may hold another step's: not once each)
    at = 0
    for k in passes[1] + passes[last]:
        at = text.find(flat(steps[k]["text"]), at)
        assert at >= 0, f"step {k + 1}'s narration is missing or out of order"
    assert flat("Passes 2 to 19 are summarised") in text
    assert flat("The PDF export has every step.") in text
    # a block is a picture of at most 8 cm and a few lines, so two share most of A4's 26.7 cm
    # pages: at least three blocks to two pages (its 62 blocks take 32), against 151 before
    assert len(reader.pages) <= len(blocks) * 2 // 3
    # every label as printed: the texts the pictures draw, found among the PDF's runs of text
    labels = {t for block in blocks if block["picture"] for t in block["picture"]["texts"]}
    sizes = text_sizes(pdf)
    drawn = [size for run, size in sizes if run in labels]
    assert len(drawn) > 100
    assert round(min(drawn), 2) >= MIN_LABEL_PT
    assert round(min(size for _, size in sizes), 2) >= MIN_LABEL_PT  # nothing else either
    # each picture framed by the exports' rule for the handout's paper
    view = page.evaluate("document.querySelector('grad-player').view")
    windows = paper_windows(render(trace), view, HANDOUT_PAPER)
    for block in blocks:
        k = step_of(block["heading"])
        assert block["picture"]["viewBox"] == pytest.approx(windows[k], abs=0.02), f"step {k + 1}"


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


def test_a_long_pass_prints_its_first_300_steps_and_says_so(page, server_url):
    open_trace(page, server_url, LONG_PASS)
    started(page)
    data = player_data(page)
    total = len(data["steps"])
    assert total > 300 and data["generations"] == 1
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
    first_step = text.find(flat(f"Step 1 of {len(steps)}"))
    assert 0 <= text.find(prose[:60]) < first_step
    assert_in_order_once(text, [flat(s["text"]) for s in steps])
    assert flat("Answer key") not in text
