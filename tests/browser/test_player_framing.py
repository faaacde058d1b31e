"""Framing that a learner can trust: a graph that fits its pane is shown whole at every step
(the pan that gives a focused node breathing room must not push the far edge out of sight),
and on a phone the narration sits right under the graph, before the code."""

from app.examples import BY_SLUG
from tests.browser.test_player_page import open_trace, started

# every drawn node's box, against the graph pane's box
NODES_OUTSIDE = """() => {
  const pane = document.querySelector('[data-views]').getBoundingClientRect();
  const svg = document.querySelector('[data-views] figure:not([hidden]) svg');
  return [...svg.querySelectorAll('g.node:not(.hidden)')]
    .map((g) => [g.id, g.getBoundingClientRect()])
    .filter(([, r]) => r.top < pane.top - 0.5 || r.bottom > pane.bottom + 0.5
                    || r.left < pane.left - 0.5 || r.right > pane.right + 0.5)
    .map(([id]) => id);
}"""


def test_a_graph_that_fits_is_whole_at_every_step(page, server_url):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_trace(page, server_url, BY_SLUG["retain-grad"].code)
    started(page)
    total = int(page.locator("[data-scrubber]").get_attribute("max"))
    for _ in range(total):
        assert page.evaluate(NODES_OUTSIDE) == [], page.locator("[data-counter]").text_content()
        page.keyboard.press("ArrowRight")
    page.keyboard.press("End")
    page.wait_for_timeout(700)  # a smooth pan, if any, has ended
    assert page.evaluate(NODES_OUTSIDE) == []


def test_on_a_phone_the_narration_comes_between_graph_and_code(page, server_url):
    page.set_viewport_size({"width": 390, "height": 844})
    open_trace(page, server_url, BY_SLUG["two-paths"].code)
    started(page)
    graph = page.locator("[data-views]").bounding_box()
    narration = page.locator("[data-narration]").bounding_box()
    code = page.locator("pre.code").bounding_box()
    assert graph["y"] + graph["height"] <= narration["y"] < code["y"]
    assert narration["y"] + narration["height"] <= 844  # the graph and its sentence on one screen


# the visible nodes that the zoom buttons lie over
NODES_UNDER_ZOOM = """() => {
  const zoom = document.querySelector('.zoom').getBoundingClientRect();
  const svg = document.querySelector('[data-views] figure:not([hidden]) svg');
  return [...svg.querySelectorAll('g.node:not(.hidden)')]
    .map((g) => [g.id, g.getBoundingClientRect()])
    .filter(([, r]) => r.left < zoom.right && r.right > zoom.left
                    && r.top < zoom.bottom && r.bottom > zoom.top)
    .map(([id]) => id);
}"""


def test_on_a_phone_the_zoom_buttons_cover_no_node(page, server_url):
    """The zoom buttons sit over the drawing's top right corner: the opening zoom and Fit leave
    them room, in both views, at every step of a graph that fits."""
    page.set_viewport_size({"width": 390, "height": 844})
    open_trace(page, server_url, BY_SLUG["two-paths"].code)
    started(page)
    page.locator("grad-player").scroll_into_view_if_needed()
    for view in ("tensors", "autograd"):
        page.get_by_role("radio", name=view).check()
        page.locator("grad-player").focus()
        page.keyboard.press("Home")
        total = int(page.locator("[data-scrubber]").get_attribute("max"))
        for _ in range(total):
            where = (view, page.locator("[data-counter]").text_content())
            assert page.evaluate(NODES_UNDER_ZOOM) == [], where
            page.keyboard.press("ArrowRight")
        page.get_by_role("button", name="Fit").click()
        assert page.evaluate(NODES_UNDER_ZOOM) == [], (view, "Fit")
