"""The notebook widget's front end in Chromium, without Jupyter: a host page that keeps
anywidget's front-end contract (a model with get, set, on, off and save_changes; the widget's
module imported and its `render({ model, el })` called; its CSS added to the page) renders the
widget gradtrace.show() builds, from the module and stylesheet it would send a notebook.

The host page is served from a temporary directory by a small loopback HTTP server.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading

import pytest
from playwright.sync_api import expect

import gradtrace
from app.examples import BY_SLUG

SEED = BY_SLUG["two-paths"].code

HOST = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>a notebook, as far as the widget can tell</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="widget.css">
  <script type="module" src="harness.js"></script>
</head>
<body>
  <button id="outside">a notebook's own button</button>
  <div id="cell-1"></div>
  <div id="cell-2"></div>
  <div id="cell-3"></div>
</body>
</html>
"""

# A fake model as anywidget hands one to `render`: set() fires change:NAME for a new value
# (as Backbone does, for the widget's own sets too); save_changes() is what reaches Python.
HARNESS = """
const state = await (await fetch("state.json")).json();
window.models = [];

function fakeModel(values) {
  const listeners = {};
  const model = {
    saved: [],
    get: (name) => values[name],
    set(name, value) {
      if (values[name] === value) return;
      values[name] = value;
      for (const fn of listeners[`change:${name}`] || []) fn();
    },
    on(event, fn) {
      (listeners[event] ||= []).push(fn);
    },
    off(event, fn) {
      listeners[event] = (listeners[event] || []).filter((other) => other !== fn);
    },
    save_changes() {
      model.saved.push({ ...values });
    },
    listening: () => Object.values(listeners).flat().length,
  };
  return model;
}

// a cell re-run loads the module again: `again` gives it a new URL, so it runs again;
// `later` renders into an element that joins the page only afterwards, as some hosts do
window.renderWidget = async (cell, changes = {}, again = false, later = false) => {
  const widget = (await import(again ? "./widget.js?again" : "./widget.js")).default;
  const model = fakeModel({ ...state, ...changes });
  window.models.push(model);
  const el = later ? document.createElement("div") : document.getElementById(cell);
  model.cleanup = widget.render({ model, el });
  if (later) document.getElementById(cell).append(el);
  return window.models.length - 1;
};
window.harnessReady = true;
"""


@pytest.fixture(scope="module")
def widget():
    return gradtrace.show(SEED)


@pytest.fixture(scope="module")
def host_url(widget, tmp_path_factory):
    root = tmp_path_factory.mktemp("notebook")
    (root / "index.html").write_text(HOST)
    (root / "harness.js").write_text(HARNESS)
    (root / "widget.js").write_text(widget._esm)
    (root / "widget.css").write_text(widget._css)
    state = {name: getattr(widget, name) for name in ("html", "steps", "step", "view", "theme")}
    (root / "state.json").write_text(json.dumps(state))
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def open_host(page, host_url):
    page.emulate_media(reduced_motion="reduce")
    page.goto(host_url)
    page.wait_for_function("window.harnessReady === true")


def render(page, cell, changes=None, again=False, later=False):
    index = page.evaluate(
        "([cell, changes, again, later]) => renderWidget(cell, changes, again, later)",
        [cell, changes or {}, again, later],
    )
    player = page.locator(f"#{cell} grad-player")
    expect(player).to_have_class(re.compile(r"\blive\b"))
    return index, player


def model_value(page, index, name):
    return page.evaluate("([i, name]) => models[i].get(name)", [index, name])


def test_the_widget_plays_and_its_step_goes_both_ways(page, host_url, widget, shot):
    open_host(page, host_url)
    url = page.url
    index, player = render(page, "cell-1")
    counter = player.locator("[data-counter]")
    expect(counter).to_have_text(f"Step 1 of {widget.steps}")

    player.locator("[data-action=next]").click()
    expect(counter).to_have_text(f"Step 2 of {widget.steps}")
    assert model_value(page, index, "step") == 2
    saved = page.evaluate("(i) => models[i].saved.map((values) => values.step)", index)
    assert saved == [2]  # what Python is told: the player's step, 1-based

    page.evaluate("(i) => models[i].set('step', 5)", index)  # Python moved it
    expect(counter).to_have_text(f"Step 5 of {widget.steps}")
    expect(player.locator("[data-scrubber]")).to_have_value("5")
    shot(page, "notebook-widget-step-5")

    player.locator("[data-action=last]").click()
    expect(counter).to_have_text(f"Step {widget.steps} of {widget.steps}")
    assert model_value(page, index, "step") == widget.steps
    assert page.url == url  # the notebook's URL is its own: no #step=N
    assert page.evaluate("location.hash") == ""


@pytest.mark.parametrize("later", [False, True], ids=["in-the-page", "put-in-the-page-later"])
def test_it_opens_where_python_asked(page, host_url, widget, shot, later):
    open_host(page, host_url)
    changes = {"step": 4, "view": "autograd", "theme": "dark"}
    _, player = render(page, "cell-1", changes, later=later)
    expect(player.locator("[data-counter]")).to_have_text(f"Step 4 of {widget.steps}")
    expect(player.locator("figure[data-view=autograd]")).to_be_visible()
    expect(player.locator("figure[data-view=tensors]")).to_be_hidden()
    wrapper = page.locator("#cell-1 .gradtrace-widget")
    expect(wrapper).to_have_class(re.compile(r"\btheme-dark\b"))
    assert _luminance(wrapper.evaluate("(el) => getComputedStyle(el).backgroundColor")) < 0.1
    shot(page, "notebook-widget-dark-autograd")


def test_view_and_theme_follow_the_model(page, host_url):
    open_host(page, host_url)
    index, player = render(page, "cell-1")
    wrapper = page.locator("#cell-1 .gradtrace-widget")
    assert _luminance(wrapper.evaluate("(el) => getComputedStyle(el).backgroundColor")) > 0.9
    page.evaluate("(i) => models[i].set('view', 'autograd')", index)
    expect(player.locator("figure[data-view=autograd]")).to_be_visible()
    page.evaluate("(i) => models[i].set('theme', 'dark')", index)
    expect(wrapper).to_have_class(re.compile(r"\btheme-dark\b"))
    assert _luminance(wrapper.evaluate("(el) => getComputedStyle(el).backgroundColor")) < 0.1
    # the reader picking a view in the player tells the model
    player.get_by_label("tensors", exact=True).check()
    assert model_value(page, index, "view") == "tensors"


def test_keys_move_only_the_player_that_has_focus(page, host_url, widget):
    open_host(page, host_url)
    _, player = render(page, "cell-1")
    counter = player.locator("[data-counter]")
    page.locator("#outside").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("End")
    expect(counter).to_have_text(f"Step 1 of {widget.steps}")
    player.focus()
    page.keyboard.press("ArrowRight")
    expect(counter).to_have_text(f"Step 2 of {widget.steps}")


def test_a_second_render_and_a_reloaded_module_both_work(page, host_url, widget):
    open_host(page, host_url)
    _, first = render(page, "cell-1")
    _, second = render(page, "cell-2", again=True)  # a re-run cell: the module runs again
    second.locator("[data-action=next]").click()
    expect(second.locator("[data-counter]")).to_have_text(f"Step 2 of {widget.steps}")
    expect(first.locator("[data-counter]")).to_have_text(f"Step 1 of {widget.steps}")
    _, third = render(page, "cell-3", {"step": 3})  # and the same module, once more
    expect(third.locator("[data-counter]")).to_have_text(f"Step 3 of {widget.steps}")
    assert page.problems == []


def test_new_markup_redraws_and_cleanup_lets_go(page, host_url, widget):
    open_host(page, host_url)
    index, player = render(page, "cell-1", {"step": 3})
    html = page.evaluate("(i) => models[i].get('html')", index)
    page.evaluate(
        "([i, html]) => models[i].set('html', html.replace('Step-by-step', 'Again, step'))",
        [index, html],
    )
    redrawn = page.locator("#cell-1 grad-player[aria-label^='Again']")
    expect(redrawn).to_have_class(re.compile(r"\blive\b"))
    expect(redrawn.locator("[data-counter]")).to_have_text(f"Step 3 of {widget.steps}")
    page.evaluate("(i) => models[i].cleanup()", index)
    expect(page.locator("#cell-1 .gradtrace-widget")).to_have_count(0)
    assert page.evaluate("(i) => models[i].listening()", index) == 0


def _luminance(css_colour: str) -> float:
    """WCAG relative luminance of an `rgb(...)` colour."""
    red, green, blue = (int(part) / 255 for part in re.findall(r"\d+", css_colour)[:3])

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
