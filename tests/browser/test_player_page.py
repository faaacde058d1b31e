"""The player as a whole page: one screen at 1280x800, no sideways scroll on a phone, a legend,
the dark scheme, the page without JavaScript (each graph drawn once), and the viewport maths
(static/viewport.js) as Chromium runs it."""

import re

import pytest
from playwright.sync_api import expect

from app.examples import BY_SLUG


def open_trace(page, server_url, code):
    reply = page.request.post(f"{server_url}/api/traces", data={"code": code})
    assert reply.ok, reply.text()
    page.goto(f"{server_url}/t/{reply.json()['id']}")
    return reply.json()["id"]


def started(page):
    expect(page.locator("[data-counter]")).to_have_text(re.compile(r"Step \d+ of \d+"))


def luminance(css_colour: str) -> float:
    """Relative luminance (WCAG) of an `rgb(...)`/`rgba(...)` colour."""
    r, g, b = (int(n) / 255 for n in re.findall(r"[\d.]+", css_colour)[:3])

    def channel(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_the_player_fits_one_1280x800_screen(page, server_url):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_trace(page, server_url, BY_SLUG["mlp-training"].code)
    started(page)
    # the page's header takes about 60 px; the player below it fits the rest
    page.evaluate("window.scrollTo(0, document.querySelector('grad-player').offsetTop - 60)")
    bottom = page.evaluate(
        """Math.max(...['.controls', '[data-views]', 'pre.code', '[data-narration]']
             .map((s) => document.querySelector(s).getBoundingClientRect().bottom))"""
    )
    top = page.evaluate("document.querySelector('.controls').getBoundingClientRect().top")
    assert top >= 59 and bottom <= 800, (top, bottom)
    # the graph is most of it
    assert page.locator("[data-views]").bounding_box()["height"] >= 400


def test_a_phone_has_no_sideways_scroll_and_one_column(page, server_url):
    page.set_viewport_size({"width": 390, "height": 844})
    open_trace(page, server_url, BY_SLUG["mlp-training"].code)
    started(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    graph = page.locator("[data-views]").bounding_box()
    code = page.locator("pre.code").bounding_box()
    assert code["y"] >= graph["y"] + graph["height"] - 1  # stacked, not side by side
    assert graph["width"] <= 390


def test_the_legend_names_every_colour_and_shape(page, server_url):
    open_trace(page, server_url, BY_SLUG["two-paths"].code)
    started(page)
    legend = page.locator("details.legend")
    expect(legend).to_be_visible()
    expect(legend.locator("ul")).to_be_hidden()  # compact: closed until asked
    legend.locator("summary").click()
    for words in (
        "leaf tensor",
        "non-leaf",
        "parameter",
        "operation",
        "grad_fn",
        "AccumulateGrad",
        "saved for backward",
        "root",
        ".grad",
        "focus",
        "freed",
    ):
        expect(legend).to_contain_text(words)
    swatches = legend.locator(".swatch")
    assert swatches.count() >= 11


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_both_schemes_keep_text_readable(page, server_url, scheme, shot):
    page.emulate_media(color_scheme=scheme)
    open_trace(page, server_url, BY_SLUG["two-paths"].code)
    started(page)
    page.locator("grad-player").focus()
    page.keyboard.press("End")
    colours = page.evaluate(
        """() => {
          const style = (s, p) => getComputedStyle(document.querySelector(s))[p];
          const tensors = document.querySelector('figure[data-view="tensors"]');
          const text = tensors.querySelector('g.node:not(.hidden) text.label');
          const shape = text.parentNode.querySelector('path, polygon, ellipse');
          const grad = document.querySelector('figure[data-view="tensors"] text.grad:not(:empty)');
          return {
            page: style('body', 'backgroundColor'),
            ink: style('[data-narration]', 'color'),
            code: style('pre.code', 'color'),
            codeBg: style('pre.code', 'backgroundColor'),
            label: getComputedStyle(text).fill,
            node: getComputedStyle(shape).fill,
            grad: getComputedStyle(grad).fill,
          };
        }"""
    )
    dark = scheme == "dark"
    assert (luminance(colours["page"]) < 0.05) == dark, colours
    assert (luminance(colours["ink"]) > 0.6) == dark, colours
    assert (luminance(colours["label"]) > 0.6) == dark, colours
    assert contrast(colours["ink"], colours["page"]) >= 4.5
    assert contrast(colours["code"], colours["codeBg"]) >= 4.5
    assert contrast(colours["label"], colours["node"]) >= 4.5
    if dark:  # in light the drawing's own colours are layout.py's
        assert contrast(colours["grad"], colours["page"]) >= 4.5
    shot(page, f"player-{scheme}")


def test_without_javascript_each_graph_is_drawn_once_with_every_step(browser, server_url):
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    try:
        page = context.new_page()
        ident = open_trace(page, server_url, BY_SLUG["two-paths"].code)
        assert ident
        graphs = page.locator("svg.gradtrace-graph")
        expect(graphs).to_have_count(2)
        for view in ("tensors", "autograd"):
            expect(page.locator(f'figure[data-view="{view}"] svg')).to_be_visible()
        assert page.locator("noscript").count() == 0
        # as the run ends: a's gradient is drawn
        expect(page.locator('figure[data-view="tensors"] g[id="t1"] text.grad')).to_have_text(
            "grad 5"
        )
        expect(page.locator("details.all-steps li").first).to_be_visible()
        assert page.locator("details.all-steps li").count() == 11
        expect(page.locator(".controls")).to_be_hidden()  # no dead controls
    finally:
        context.close()


def test_the_viewport_maths(page, server_url):
    page.goto(server_url + "/")
    results = page.evaluate(
        """async () => {
          const vp = await import('/static/viewport.js');
          const box = { width: 800, height: 600 };
          const out = {};
          // fit a 1600x600 drawing: half size; a label of 10 units then needs scale 1
          out.fit = vp.fitScale(box, [0, 0, 1600, 600]);
          out.initial = vp.initialScale(box, [0, 0, 1600, 600], 10);
          out.initialSmall = vp.initialScale(box, [0, 0, 100, 100], 10);
          // the point under the pointer stays under it
          const v = { x: 100, y: 50, scale: 1 };
          const z = vp.zoomedAt(v, 2, 200, 100);
          out.fixed = [
            v.x + 200 / v.scale, z.x + 200 / z.scale, v.y + 100 / v.scale, z.y + 100 / z.scale,
          ];
          out.viewBox = vp.viewBoxOf({ x: 10, y: 20, scale: 2 }, box);
          out.panned = vp.pannedBy({ x: 0, y: 0, scale: 2 }, 100, -50);
          // a rect out of view is brought in; one in view leaves the viewport as it is
          const far = [2000, 900, 50, 30];
          const moved = vp.revealing({ x: 0, y: 0, scale: 1 }, box, far, 24);
          out.revealed = vp.shows(moved, box, far, 0);
          out.before = vp.shows({ x: 0, y: 0, scale: 1 }, box, far, 0);
          const near = [10, 10, 50, 30];
          const still = { x: -100, y: -100, scale: 1 };
          out.same = vp.revealing(still, box, near) === still;
          out.union = vp.union([[0, 0, 10, 10], [20, 5, 10, 10]]);
          out.framed = vp.framed([0, 0, 400, 300], box, 1);
          out.framedTall = vp.framed([0, 0, 400, 3000], box, 1);
          return out;
        }"""
    )
    assert results["fit"] == 0.5
    assert results["initial"] == 1  # 10 px labels beat the fit
    assert results["initialSmall"] == 2  # a tiny graph is not blown up past 2x
    a, b, c, d = results["fixed"]
    assert a == pytest.approx(b) and c == pytest.approx(d)
    assert results["viewBox"] == [10, 20, 400, 300]
    assert results["panned"] == {"x": -50, "y": 25, "scale": 2}
    assert results["revealed"] and not results["before"]
    assert results["same"]
    assert results["union"] == [0, 0, 30, 15]
    assert results["framed"] == {"x": -200, "y": -150, "scale": 1}  # centred: it fits
    assert results["framedTall"] == {"x": -200, "y": 0, "scale": 1}  # too tall: its top
