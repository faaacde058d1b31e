"""Touch on a phone: two fingers spreading apart zoom the graph in, pinching zooms it out, with
real touch input (Chromium's DevTools protocol), not synthetic DOM events."""

from app.examples import BY_SLUG
from tests.browser.test_player_page import open_trace, started


def view_width(page) -> float:
    box = page.locator("[data-views] figure:not([hidden]) svg").get_attribute("viewBox")
    return float(box.split()[2])


def pinch(page, centre, start_gap, end_gap, moves=8):
    """Two touch points on `centre`, `start_gap` px apart, moved to `end_gap` apart."""
    cdp = page.context.new_cdp_session(page)
    x, y = centre

    def points(gap):
        return [{"x": x - gap / 2, "y": y, "id": 1}, {"x": x + gap / 2, "y": y, "id": 2}]

    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": points(start_gap)})
    for i in range(1, moves + 1):
        gap = start_gap + (end_gap - start_gap) * i / moves
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": points(gap)})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def test_spreading_two_fingers_zooms_in_and_pinching_zooms_out(browser, server_url):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    page = context.new_page()
    try:
        open_trace(page, server_url, BY_SLUG["two-paths"].code)
        started(page)
        pane = page.locator("[data-views]").bounding_box()
        centre = (pane["x"] + pane["width"] / 2, pane["y"] + pane["height"] / 2)
        before = view_width(page)
        pinch(page, centre, 60, 240)
        spread = view_width(page)
        assert spread < before * 0.6, (before, spread)  # 4x the gap: well zoomed in
        pinch(page, centre, 240, 60)
        assert view_width(page) > spread * 2, (spread, view_width(page))
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()
