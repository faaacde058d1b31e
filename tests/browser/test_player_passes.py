"""A program that builds a graph per pass (the 20-step MLP) is shown one pass at a time: a pass
picker that follows the step, a second pass side by side, labels readable at the opening zoom,
and zoom, pan and fit that change what the drawing shows."""

import re

import pytest
from playwright.sync_api import expect

from app.examples import BY_SLUG

LIVE_SVG = 'figure[data-view="tensors"] svg'


@pytest.fixture
def mlp(page, server_url):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.emulate_media(reduced_motion="reduce")  # pans land at once
    reply = page.request.post(
        f"{server_url}/api/traces", data={"code": BY_SLUG["mlp-training"].code}
    )
    assert reply.ok, reply.text()
    page.goto(f"{server_url}/t/{reply.json()['id']}")
    expect(page.locator("[data-counter]")).to_have_text(re.compile(r"Step 1 of \d+"))
    page.locator("grad-player").scroll_into_view_if_needed()
    return page


def view_box(page, selector=LIVE_SVG):
    return [float(n) for n in page.locator(selector).get_attribute("viewBox").split()]


def label_heights(page, selector):
    """The rendered heights (CSS px) of the visible labels inside the drawing's own box."""
    return page.evaluate(
        """(selector) => {
          const svg = document.querySelector(selector);
          const box = svg.getBoundingClientRect();
          return [...svg.querySelectorAll('g:not(.hidden) > text')]
            .filter((t) => t.textContent.trim())
            .map((t) => t.getBoundingClientRect())
            .filter((r) => r.right > box.left && r.left < box.right
              && r.bottom > box.top && r.top < box.bottom)
            .map((r) => r.height);
        }""",
        selector,
    )


def chosen_pass(page):
    return page.locator("select[data-pass] option:checked").inner_text()


def test_the_pass_picker_follows_the_steps_and_picks_a_pass(mlp):
    page = mlp
    assert chosen_pass(page) == "Pass 1 of 20"
    expect(page.get_by_role("button", name="Previous pass")).to_be_disabled()
    page.locator("grad-player").focus()
    page.keyboard.press("End")
    assert chosen_pass(page) == "Pass 20 of 20"
    first = view_box(page)

    page.locator("select[data-pass]").select_option("7")
    assert chosen_pass(page) == "Pass 7 of 20"
    # the player is at the first step of pass 7, which the narration announces
    expect(page.locator("[data-narration]")).to_contain_text("pass 7")
    assert view_box(page) != first  # framed on pass 7, not left on pass 20
    page.get_by_role("button", name="Next pass").click()
    assert chosen_pass(page) == "Pass 8 of 20"
    page.get_by_role("button", name="Previous pass").click()
    page.get_by_role("button", name="Previous pass").click()
    assert chosen_pass(page) == "Pass 6 of 20"


def test_two_passes_side_by_side(mlp):
    page = mlp
    page.locator("select[data-pass]").select_option("5")
    page.get_by_label("side by side with").check()
    panel = page.locator("[data-compare-panel]")
    expect(panel).to_be_visible()
    expect(panel.locator("figcaption")).to_contain_text("Pass 4 of 20, at its last step")
    page.get_by_label("Pass to compare").select_option("12")
    expect(panel.locator("figcaption")).to_contain_text("Pass 12 of 20")
    copy = panel.locator("svg")
    expect(copy).to_have_count(1)
    # a read-only copy: no ids of its own, so the page's ids stay unique
    assert copy.locator("[id]").count() == 0
    ids = page.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)")
    assert len(ids) == len(set(ids))
    # it shows pass 12's own graph at its last step: drawn and visible nodes in its box
    shown = page.evaluate(
        """() => {
          const svg = document.querySelector('[data-compare-panel] svg');
          const box = svg.getBoundingClientRect();
          return [...svg.querySelectorAll('g.node:not(.hidden)')].filter((g) => {
            const r = g.getBoundingClientRect();
            return r.left >= box.left && r.right <= box.right
              && r.top >= box.top && r.bottom <= box.bottom;
          }).length;
        }"""
    )
    assert shown >= 5
    # and readable: no label in it under 10 px (pass 1 keeps the parameters, far apart)
    for other in ("12", "1"):
        page.get_by_label("Pass to compare").select_option(other)
        heights = label_heights(page, "[data-compare-panel] svg")
        # (9.99: the view box is written rounded to hundredths)
        assert heights and min(heights) >= 9.99, (other, heights and min(heights))
    page.get_by_label("side by side with").uncheck()
    expect(panel).to_be_hidden()


def test_no_label_is_drawn_under_10_px_at_the_opening_zoom(mlp):
    page = mlp
    # at step 1 (tensors: the parameters and data), then at the last pass (both views)
    for key, view in (("Home", "tensors"), ("End", "tensors"), ("End", "autograd")):
        page.get_by_role("radio", name=view).check()
        page.locator("grad-player").focus()
        page.keyboard.press(key)
        heights = label_heights(page, f'figure[data-view="{view}"] svg')
        assert heights, f"no label in view in the {view} view after {key}"
        assert min(heights) >= 10, (view, min(heights))


def test_zoom_buttons_keys_wheel_and_fit_change_the_view_box(mlp):
    page = mlp
    start = view_box(page)
    page.get_by_role("button", name="Zoom in").click()
    zoomed_in = view_box(page)
    assert zoomed_in[2] < start[2] and zoomed_in[3] < start[3]
    page.get_by_role("button", name="Zoom out").click()
    page.get_by_role("button", name="Zoom out").click()
    zoomed_out = view_box(page)
    assert zoomed_out[2] > start[2]

    page.get_by_role("button", name="Fit").click()
    fitted = view_box(page)
    frame = page.evaluate(
        "JSON.parse(document.querySelector('[data-player-data]').textContent).views.tensors.frames[0]"
    )
    # the whole of pass 1 inside the view box
    assert fitted[0] <= frame[0] + 0.5 and fitted[1] <= frame[1] + 0.5
    assert fitted[0] + fitted[2] >= frame[0] + frame[2] - 0.5
    assert fitted[1] + fitted[3] >= frame[1] + frame[3] - 0.5

    page.locator("[data-views]").focus()
    page.keyboard.press("+")
    assert view_box(page)[2] < fitted[2]
    page.keyboard.press("0")
    assert view_box(page) == fitted
    page.keyboard.press("ArrowRight")  # arrows still step
    expect(page.locator("[data-counter]")).to_have_text(re.compile(r"Step 2 of"))

    box = page.locator("[data-views]").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -300)
    expect(page.locator(LIVE_SVG)).not_to_have_attribute("viewBox", " ".join(map(str, fitted)))
    assert view_box(page)[2] < fitted[2]
    # dragging pans: the view box moves, its size does not
    before = view_box(page)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 120, box["y"] + box["height"] / 2 + 40, steps=5)
    page.mouse.up()
    after = view_box(page)
    assert after[0] < before[0] and after[2] == pytest.approx(before[2], abs=0.02)
    assert (
        page.evaluate("getComputedStyle(document.querySelector('[data-views]')).touchAction")
        == "none"
    )


def visible_boxes(page, view="tensors"):
    return page.locator(f'figure[data-view="{view}"] g.node.module:not(.hidden)')


def test_the_network_is_one_box_a_pass_that_opens_into_its_layers(mlp):
    """The flagship loop read as a learner reads it: at the last pass the model is one box
    ("model · Sequential") with its data, parameters and loss around it; Fit keeps the labels
    readable; "Open model" draws its layers (the two Linears as boxes, the ReLU as its one
    operation) and "Close model" folds them back."""
    page = mlp
    page.locator("grad-player").focus()
    page.keyboard.press("End")
    boxes = visible_boxes(page)
    expect(boxes).to_have_count(1)
    expect(boxes.locator("text.label")).to_have_text("model · Sequential")
    # Fit frames the graph the pass builds, not the whole drawing down to pass 1's data (which
    # gave 2 px labels)
    page.get_by_role("button", name="Fit").click()
    heights = label_heights(page, LIVE_SVG)
    assert heights and min(heights) >= 9, min(heights or [0])
    # the inspector says what the box stands for and how to open it
    boxes.click()
    inspector = page.locator("[data-inspector]")
    expect(inspector).to_contain_text("model · Sequential")
    expect(inspector).to_contain_text("Open model")
    # the autograd view draws the call as one box of grad_fn nodes too
    page.get_by_role("radio", name="autograd").check()
    expect(visible_boxes(page, "autograd").locator("text.sub")).to_have_text("5 nodes inside")
    page.get_by_role("radio", name="tensors").check()

    page.get_by_role("link", name="Open model").click()
    expect(page).to_have_url(re.compile(r"\?expand=m\d+$"))
    expect(page.locator("[data-counter]")).to_have_text(re.compile(r"Step 1 of \d+"))
    page.locator("grad-player").focus()
    page.keyboard.press("End")
    layers = visible_boxes(page)
    expect(layers).to_have_count(2)
    expect(layers.locator("text.label")).to_have_text(["model[0] · Linear", "model[2] · Linear"])
    # the ReLU did one operation: drawn as that operation, between the two boxes
    ops = page.locator('figure[data-view="tensors"] g.node.op:not(.hidden) > title')
    assert "ReluBackward0" in ops.all_text_contents()

    page.get_by_role("link", name="Close model").click()
    expect(page).not_to_have_url(re.compile(r"expand="))
    page.locator("grad-player").focus()
    page.keyboard.press("End")
    expect(visible_boxes(page)).to_have_count(1)
