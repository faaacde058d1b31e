"""The page around the player: after Run, and on a trace's own page, the code, the graph, the
narration and the controls share one laptop screen (with live editing on, the editor stays open
beside the player; off, it folds into a bar that re-opens it); before any run the editor is
open; on a phone nothing is wider than the screen."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from app.examples import BY_SLUG

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# the learner's choice of live editing, as static/live.js remembers it
LIVE_SETTING = "localStorage.setItem('gradtrace-live', '{}')"
SUBPIXEL = 1  # a box scrolled to the top may start a fraction of a pixel above it
# what must be on screen together to follow a step
ONE_SCREEN = {
    "the controls": "grad-player .controls",
    "the graph": "grad-player .views",
    "the code": "grad-player pre.code",
    "the narration": "grad-player [data-narration]",
}


@pytest.fixture
def sized_page(browser, request):
    """A page at a given viewport: request.param is LAPTOP or PHONE."""
    phone = request.param is PHONE
    context = browser.new_context(viewport=request.param, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    page.live = lambda on: page.add_init_script(LIVE_SETTING.format("on" if on else "off"))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.problems = errors
    yield page
    context.close()
    assert errors == []


@pytest.fixture(scope="module")
def stored_trace(server_url) -> str:
    answer = httpx.post(
        f"{server_url}/api/traces", json={"code": BY_SLUG["two-paths"].code}, timeout=60
    )
    answer.raise_for_status()
    return answer.json()["id"]


def run(page) -> None:
    page.get_by_role("button", name="Run").click()
    expect(page.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 1 of"))


def off_screen(page, parts: dict[str, str] = ONE_SCREEN) -> dict[str, dict]:
    """Each of `parts` (ONE_SCREEN's) not wholly inside the viewport, with its box."""
    boxes = page.evaluate(
        """(parts) => Object.fromEntries(Object.entries(parts).map(([name, selector]) => {
            const el = document.querySelector(selector);
            return [name, el && el.getBoundingClientRect().toJSON()];
        }))""",
        parts,
    )
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    return {
        name: box
        for name, box in boxes.items()
        if box is None
        or box["width"] == 0
        or box["top"] < -SUBPIXEL
        or box["left"] < -SUBPIXEL
        or box["bottom"] > height + SUBPIXEL
        or box["right"] > width + SUBPIXEL
    }


def overflow(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth")


def editor(page):
    return page.locator("details.editor")


@pytest.mark.parametrize("sized_page", [LAPTOP], indirect=True)
def test_before_any_run_the_editor_is_open(sized_page, server_url):
    sized_page.goto(server_url + "/")
    expect(editor(sized_page)).to_have_attribute("open", "")
    expect(sized_page.get_by_role("textbox", name="Your snippet")).to_be_visible()
    expect(sized_page.get_by_role("button", name="Run")).to_be_in_viewport()


@pytest.mark.parametrize("sized_page", [LAPTOP], indirect=True)
@pytest.mark.parametrize("slug", ["two-paths", "mlp-training"])
def test_after_run_one_screen_holds_code_graph_narration_and_controls(
    sized_page, server_url, shot, slug
):
    sized_page.live(False)
    sized_page.goto(f"{server_url}/?example={slug}")
    run(sized_page)
    expect(editor(sized_page)).not_to_have_attribute("open", "")
    assert off_screen(sized_page) == {}
    shot(sized_page, f"layout-after-run-1280-{slug}")
    # the folded editor opens again, with the code that ran
    sized_page.get_by_text("Edit the snippet").click()
    expect(sized_page.get_by_role("textbox", name="Your snippet")).to_contain_text(".backward()")


@pytest.mark.parametrize("sized_page", [LAPTOP], indirect=True)
@pytest.mark.parametrize("slug", ["two-paths", "mlp-training"])
def test_with_live_editing_the_editor_stays_open_beside_the_player(
    sized_page, server_url, shot, slug
):
    sized_page.goto(f"{server_url}/?example={slug}")
    snippet = sized_page.get_by_role("textbox", name="Your snippet")
    expect(snippet).to_have_attribute("contenteditable", "true")  # CodeMirror has mounted
    snippet.click()
    sized_page.keyboard.press("Control+Enter")
    expect(sized_page.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 1 of"))
    expect(editor(sized_page)).to_have_attribute("open", "")
    expect(snippet).to_be_focused()  # Run left the learner where they were typing
    # the editor marks the step in place of the player's own listing of the code
    on_screen = {**ONE_SCREEN, "the code": "details.editor .code-editor"}
    assert off_screen(sized_page, on_screen) == {}
    expect(sized_page.locator("grad-player pre.code")).to_be_hidden()
    marked = sized_page.locator(".code-editor .cm-step-line")
    listed = sized_page.locator("grad-player pre.code .line.current")  # the player's own mark
    for button in ("Next ›", "Last »"):
        expect(marked).to_have_count(1)
        expect(marked).to_have_text(listed.text_content())
        sized_page.locator("grad-player").get_by_role("button", name=button).click()
    expect(marked).to_have_text(listed.text_content())
    shot(sized_page, f"layout-live-after-run-1280-{slug}")
    left_of_player = sized_page.evaluate(
        """() => document.querySelector('details.editor').getBoundingClientRect().right
            <= document.querySelector('grad-player').getBoundingClientRect().left"""
    )
    assert left_of_player, "the editor is not beside the player"
    shot(sized_page, f"layout-live-after-run-1280-{slug}")


@pytest.mark.parametrize("sized_page", [LAPTOP], indirect=True)
def test_a_trace_page_opens_on_one_screen_with_the_editor_folded(
    sized_page, server_url, stored_trace
):
    sized_page.goto(f"{server_url}/t/{stored_trace}")
    expect(sized_page.locator("grad-player [data-counter]")).to_have_text(re.compile("Step 1"))
    expect(editor(sized_page)).not_to_have_attribute("open", "")
    assert off_screen(sized_page) == {}


@pytest.mark.parametrize("sized_page", [LAPTOP], indirect=True)
def test_after_run_the_keys_step_the_player(sized_page, server_url):
    # Run took the focus with it as the editor folded: it lands on the player, not the page
    sized_page.live(False)
    sized_page.goto(server_url + "/")
    content = sized_page.get_by_role("textbox", name="Your snippet")
    expect(content).to_have_attribute("contenteditable", "true")  # CodeMirror has mounted
    content.click()
    sized_page.keyboard.press("Control+Enter")
    expect(sized_page.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 1 of"))
    expect(sized_page.locator("grad-player")).to_be_focused()
    sized_page.keyboard.press("ArrowRight")
    expect(sized_page.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 2 of"))


@pytest.mark.parametrize("sized_page", [PHONE], indirect=True)
def test_on_a_phone_the_editor_page_fits_its_width(sized_page, server_url, shot):
    sized_page.goto(server_url + "/?example=mlp-training")
    content = sized_page.get_by_role("textbox", name="Your snippet")
    expect(content).to_have_attribute("contenteditable", "true")  # CodeMirror, long lines and all
    assert overflow(sized_page) <= PHONE["width"]
    shot(sized_page, "layout-phone-editor")


@pytest.mark.parametrize("sized_page", [PHONE], indirect=True)
def test_on_a_phone_a_long_problem_fits_its_width(sized_page, server_url):
    sized_page.goto(server_url + "/")
    sized_page.route(
        "**/run",
        lambda route: route.fulfill(
            status=503, content_type="text/plain", body="busy_" * 40, headers={"Retry-After": "3"}
        ),
    )
    sized_page.get_by_role("button", name="Run").click()
    expect(sized_page.locator("#result [role=alert]")).to_contain_text("Try again in 3 seconds.")
    assert overflow(sized_page) <= PHONE["width"]
    # Chromium logs the 503 the test made as a console error
    sized_page.problems[:] = [p for p in sized_page.problems if "status of 503" not in p]


@pytest.mark.parametrize("sized_page", [PHONE], indirect=True)
def test_on_a_phone_the_page_after_run_fits_its_width(sized_page, server_url, shot):
    sized_page.goto(server_url + "/")
    run(sized_page)
    shot(sized_page, "layout-phone-after-run")
    assert overflow(sized_page) <= PHONE["width"]


@pytest.mark.parametrize("sized_page", [PHONE], indirect=True)
def test_on_a_phone_a_trace_page_fits_its_width(sized_page, server_url, stored_trace):
    sized_page.goto(f"{server_url}/t/{stored_trace}")
    expect(sized_page.locator("grad-player [data-counter]")).to_have_text(re.compile("Step 1"))
    assert overflow(sized_page) <= PHONE["width"]
