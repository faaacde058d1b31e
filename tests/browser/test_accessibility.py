"""axe-core on every page the app has: no serious or critical accessibility violations.

axe-core is vendored for the tests only (tests/browser/vendor/, never served by the app) and
injected into each page as it stands, after whatever the test did to it. The page's CSP
(`script-src 'self'`) refuses inline scripts, so these pages come from a context that bypasses
CSP (conftest's a11y_page); every other browser test keeps the real CSP.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from app.examples import BY_SLUG, EXAMPLES

AXE_VERSION = "4.14.1"
AXE = Path(__file__).parent / "vendor" / f"axe-core-{AXE_VERSION}.min.js"
BLOCKING = {"serious", "critical"}
if os.environ.get("A11Y_ALL"):  # for a look at moderate and minor violations too, not for CI
    BLOCKING |= {"moderate", "minor"}


def audit(page, state: str) -> None:
    """Run axe on the page as it is now; fail on any serious or critical violation, naming each
    rule, what it asks for and the elements that break it."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    assert page.evaluate("() => window.axe.version") == AXE_VERSION
    results = page.evaluate("() => window.axe.run(document, {resultTypes: ['violations']})")
    blocking = [v for v in results["violations"] if v["impact"] in BLOCKING]
    report = "\n".join(
        f"[{v['impact']}] {v['id']}: {v['help']} ({v['helpUrl']})\n"
        + "\n".join(f"    {node['target']}: {node['failureSummary']}" for node in v["nodes"])
        for v in blocking
    )
    assert not blocking, f"axe found on {state}:\n{report}"
    # axe no longer checks this by default, but labels and ARIA refer to elements by id, and
    # both graph views (and their no-JavaScript stills) share one page
    repeated = page.evaluate(
        """() => {
            const seen = new Map();
            for (const el of document.querySelectorAll("[id]")) {
                seen.set(el.id, (seen.get(el.id) || 0) + 1);
            }
            return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
        }"""
    )
    assert repeated == [], f"ids used more than once on {state}: {repeated}"


def run(page) -> None:
    """Press Run and wait for the player to show its first step."""
    page.get_by_role("button", name="Run").click()
    expect(page.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 1 of"))


def phase(page):
    return page.locator("grad-player .phase")


@pytest.fixture(scope="module")
def stored_trace(server_url) -> str:
    answer = httpx.post(
        f"{server_url}/api/traces", json={"code": BY_SLUG["two-paths"].code}, timeout=60
    )
    answer.raise_for_status()
    return answer.json()["id"]


def test_the_editor(a11y_page, server_url, shot):
    a11y_page.goto(server_url + "/")
    audit(a11y_page, "the editor")
    shot(a11y_page, "a11y-editor")


def test_the_player_at_its_first_step_a_backward_step_and_the_inspector(
    a11y_page, server_url, shot
):
    a11y_page.goto(server_url + "/")
    run(a11y_page)
    audit(a11y_page, "the player at its first step")
    shot(a11y_page, "a11y-player-first-step")

    a11y_page.locator("grad-player").focus()
    a11y_page.keyboard.press("End")
    a11y_page.get_by_role("button", name="Jump to backward").click()
    expect(phase(a11y_page)).to_have_text("backward")
    audit(a11y_page, "the player at a backward step")
    shot(a11y_page, "a11y-player-backward-step")

    a11y_page.locator('figure[data-view="tensors"] svg g.node:not(.hidden)').first.click()
    expect(a11y_page.locator("grad-player [data-inspector] dl")).to_be_visible()
    audit(a11y_page, "the player with the node inspector open")

    a11y_page.get_by_role("radio", name="autograd").check()
    expect(a11y_page.locator('figure[data-view="autograd"]')).to_be_visible()
    audit(a11y_page, "the player's autograd view")
    shot(a11y_page, "a11y-player-autograd-view")


@pytest.mark.parametrize("slug", [example.slug for example in EXAMPLES])
def test_each_example_run_to_its_last_step(a11y_page, server_url, slug):
    # (the editor holding every example's code is audited once, in both schemes, below)
    a11y_page.goto(f"{server_url}/?example={slug}")
    run(a11y_page)
    a11y_page.locator("grad-player").focus()
    a11y_page.keyboard.press("End")
    expect(a11y_page.locator("grad-player [data-counter]")).to_have_text(
        re.compile(r"Step (\d+) of \1$")
    )
    audit(a11y_page, f"example {slug} at its last step")


def test_a_snippet_too_wide_and_tall_for_its_boxes(a11y_page, server_url):
    # the code box scrolls and the graph zooms and pans (its viewBox): a keyboard reaches both
    code = BY_SLUG["variable-loop"].code + "\n# " + "a long comment, " * 20 + "\n"
    # the player's own code box: with live editing on, the editor beside it shows the code
    a11y_page.add_init_script("localStorage.setItem('gradtrace-live', 'off')")
    a11y_page.goto(server_url + "/")
    editor_ready(a11y_page)  # typed before CodeMirror mounts, the code would go to a hidden box
    a11y_page.get_by_role("textbox", name="Your snippet").click()
    a11y_page.keyboard.press("ControlOrMeta+a")
    a11y_page.keyboard.insert_text(code)
    run(a11y_page)
    scrolls = a11y_page.evaluate(
        """() => {
            const el = document.querySelector("pre.code");
            return el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight;
        }"""
    )
    assert scrolls
    expect(a11y_page.locator("[data-views]")).to_have_attribute("tabindex", "0")
    audit(a11y_page, "a snippet whose code and graph overflow their boxes")


def test_the_error_example(a11y_page, server_url, shot):
    a11y_page.goto(server_url + "/?example=inplace-error")
    run(a11y_page)
    expect(a11y_page.locator(".output .problem")).to_be_visible()
    audit(a11y_page, "the in-place error example after Run")
    a11y_page.locator("grad-player").focus()
    a11y_page.keyboard.press("End")
    expect(phase(a11y_page)).to_have_text("error")
    audit(a11y_page, "the in-place error example at its error step")
    shot(a11y_page, "a11y-error-example")


def test_a_stored_trace(a11y_page, server_url, stored_trace, shot):
    a11y_page.goto(f"{server_url}/t/{stored_trace}#step=3")
    expect(a11y_page.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 3 of"))
    audit(a11y_page, f"/t/{stored_trace}")
    shot(a11y_page, "a11y-stored-trace")


def test_a_stored_trace_without_javascript(a11y_page, server_url, stored_trace, shot):
    # A context without JavaScript stops timers too, and axe.run needs them; so the page is
    # served as such a browser reads it instead: no scripts, the <noscript> content shown.
    def as_without_scripts(route):
        response = route.fetch()
        html = re.sub(r"<script\b[^>]*\bsrc=[^>]*></script>", "", response.text())
        html = html.replace("<noscript>", "").replace("</noscript>", "")
        route.fulfill(response=response, body=html)

    url = f"{server_url}/t/{stored_trace}"
    a11y_page.route(url, as_without_scripts)
    a11y_page.goto(url)
    expect(a11y_page.locator("figure.view svg")).to_have_count(2)  # each view drawn once
    expect(a11y_page.locator("grad-player [data-controls]").first).to_be_hidden()
    audit(a11y_page, f"/t/{stored_trace} without JavaScript")
    shot(a11y_page, "a11y-stored-trace-no-js")


def test_the_missing_trace_page(a11y_page, server_url, shot):
    response = a11y_page.goto(server_url + "/t/nosuchid")
    assert response.status == 404
    expect(a11y_page.get_by_role("heading", level=1)).to_have_text("No such trace")
    audit(a11y_page, "the 404 page")
    shot(a11y_page, "a11y-missing-trace")
    # Chromium reports the 404 answer itself as a console error: that one is expected here
    a11y_page.problems[:] = [p for p in a11y_page.problems if "404 (Not Found)" not in p]


# ***** the dark scheme (prefers-color-scheme: dark), and the page around the player *****


def editor_ready(page) -> None:
    """CodeMirror is mounted over the textarea (it loads after the page)."""
    expect(page.get_by_role("textbox", name="Your snippet")).to_have_attribute(
        "contenteditable", "true"
    )


def is_dark(page) -> bool:
    """Whether the page's background is dark: the scheme really switched."""
    return page.evaluate(
        """() => {
            const [r, g, b] = getComputedStyle(document.body).backgroundColor
                .match(/\\d+/g).map(Number);
            return 0.2126 * r + 0.7152 * g + 0.0722 * b < 60;
        }"""
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_editor_with_codemirror(a11y_page, server_url, shot, scheme):
    # holding the code of every example, so that every kind of token they highlight is checked
    a11y_page.emulate_media(color_scheme=scheme)
    a11y_page.goto(server_url + "/")
    editor_ready(a11y_page)
    assert is_dark(a11y_page) == (scheme == "dark")
    a11y_page.get_by_role("textbox", name="Your snippet").click()
    a11y_page.keyboard.press("ControlOrMeta+a")
    a11y_page.keyboard.insert_text("\n".join(example.code for example in EXAMPLES))
    expect(a11y_page.locator(".cm-content")).to_contain_text(EXAMPLES[-1].code.splitlines()[-1])
    audit(a11y_page, f"the editor holding every example, {scheme} scheme")
    shot(a11y_page, f"a11y-editor-{scheme}")


def test_the_page_after_run_in_the_dark_scheme(a11y_page, server_url, shot):
    a11y_page.emulate_media(color_scheme="dark")
    a11y_page.goto(server_url + "/")
    editor_ready(a11y_page)
    run(a11y_page)
    assert is_dark(a11y_page)
    audit(a11y_page, "the page after Run, dark scheme, first step")
    shot(a11y_page, "a11y-dark-after-run")
    a11y_page.locator("grad-player").focus()
    a11y_page.keyboard.press("End")
    expect(phase(a11y_page)).not_to_have_text("forward")
    audit(a11y_page, "the page after Run, dark scheme, last step")
    # live editing keeps the editor open beside the player; folded, it is one bar
    a11y_page.get_by_text("Fold the editor away").click()
    audit(a11y_page, "the editor folded after Run, dark scheme")
    a11y_page.get_by_text("Edit the snippet").click()
    editor_ready(a11y_page)
    audit(a11y_page, "the editor opened again after Run, dark scheme")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_refusal_and_the_running_status(a11y_page, server_url, shot, scheme):
    a11y_page.emulate_media(color_scheme=scheme)
    a11y_page.goto(server_url + "/")
    editor_ready(a11y_page)
    held = []
    a11y_page.route("**/run", lambda route: held.append(route))
    a11y_page.get_by_role("button", name="Run").click()
    expect(a11y_page.get_by_role("status").filter(has_text="Running")).to_be_visible()
    audit(a11y_page, f"a run in flight, {scheme} scheme")
    held[0].fulfill(status=503, headers={"Retry-After": "5"}, body="")
    expect(a11y_page.locator("#result [role=alert]")).to_contain_text("Try again in 5 seconds.")
    audit(a11y_page, f"a 503 answer, {scheme} scheme")
    shot(a11y_page, f"a11y-refusal-{scheme}")
    a11y_page.problems[:] = [p for p in a11y_page.problems if "status of 503" not in p]
