"""Errors and waiting: every answer that is not a result says so where the result would be,
busy answers say when to try again, and a run in flight shows that it is running.

Busy and broken answers are made by intercepting `POST /run` (the server is not busy on
demand); the too-long snippets are real posts, refused by the real server.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import expect

from app.config import Settings, StoreSettings
from app.main import create_app
from app.sandbox import SandboxBusy

LIMITS = Settings(
    store=StoreSettings(path=Path("unused.db"))
)  # the limits the test server runs with


def result_problem(page):
    return page.locator("#result [role=alert]")


def forgive_refused_loads(page, status: int | str) -> None:
    """Chromium logs each failed load as a console error; the test made that one on purpose."""
    page.problems[:] = [
        p for p in page.problems if f"{status}" not in p or "Failed to load" not in p
    ]


def put_code(page, code: str) -> None:
    content = page.get_by_role("textbox", name="Your snippet")
    # CodeMirror mounts after the page loads; until then that textbox is the plain textarea
    expect(content).to_have_attribute("contenteditable", "true")
    content.click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(code)


def test_a_snippet_over_the_apps_limit_says_how_long_it_may_be(page, server_url, shot):
    page.goto(server_url + "/")
    put_code(page, "# " + "x" * LIMITS.sandbox.max_source_bytes + "\n")
    page.get_by_role("button", name="Run").click()
    expect(result_problem(page)).to_have_text(
        f"The snippet is longer than {LIMITS.sandbox.max_source_bytes:,} bytes."
    )
    expect(page.locator("details.editor")).to_have_attribute("open", "")  # to shorten it
    shot(page, "error-413-app")
    forgive_refused_loads(page, 413)


def test_a_body_over_the_servers_limit_says_so_too(page, server_url):
    # "€" is 3 bytes of UTF-8 and 9 once form-encoded: the body-size limit refuses the post
    # before the app sees it, with a plain-text answer
    count = LIMITS.max_body_bytes // 9 + 100
    page.goto(server_url + "/")
    put_code(page, "€" * count)
    page.get_by_role("button", name="Run").click()
    expect(result_problem(page)).to_have_text(
        f"The snippet is too long: the request body is larger than the limit of "
        f"{LIMITS.max_body_bytes:,} bytes."
    )
    forgive_refused_loads(page, 413)


@pytest.mark.parametrize(
    ("status", "headers", "body", "said"),
    [
        # a proxy's own page: no words of ours, so the status is put in words
        (503, {"Retry-After": "5"}, "<html><body><h1>503</h1></body></html>",
         "The server is busy. Try again in 5 seconds."),
        (429, {"Retry-After": "1"}, "", "Too many runs from you just now. Try again in 1 second."),
        (502, {}, "<html><body>nginx</body></html>",
         re.compile(r"^The server could not answer \(502\b.*\)\.$")),
    ],
)  # fmt: skip
def test_a_refusal_that_is_not_our_page_is_put_in_words(
    page, server_url, status, headers, body, said
):
    page.goto(server_url + "/")
    page.route(
        "**/run",
        lambda route: route.fulfill(
            status=status, headers=headers, content_type="text/html", body=body
        ),
    )
    page.get_by_role("button", name="Run").click()
    expect(result_problem(page)).to_have_text(said)
    expect(page.get_by_role("button", name="Run")).to_be_enabled()
    forgive_refused_loads(page, status)


def test_our_own_busy_answer_is_shown_as_the_server_wrote_it(page, server_url, shot, tmp_path):
    # what pages.py answers when the sandbox is busy, to an htmx post
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db")))
    busy = SandboxBusy(503, 7, "Every sandbox is busy running other snippets.")
    with TestClient(app, base_url="http://localhost") as client:
        client.app.state.traces.find_or_run = _raises(busy)
        answer = client.post("/run", data={"code": "print(1)"}, headers={"HX-Request": "true"})
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "7"
    page.goto(server_url + "/")
    page.route(
        "**/run",
        lambda route: route.fulfill(status=503, headers=dict(answer.headers), body=answer.content),
    )
    page.get_by_role("button", name="Run").click()
    expect(result_problem(page)).to_have_text(
        "Every sandbox is busy running other snippets. Try again in 7 seconds."
    )
    shot(page, "error-503-busy")
    forgive_refused_loads(page, 503)


def test_a_failed_connection_says_so(page, server_url):
    page.goto(server_url + "/")
    page.route("**/run", lambda route: route.abort("internetdisconnected"))
    page.get_by_role("button", name="Run").click()
    expect(result_problem(page)).to_contain_text("Could not reach the server")
    expect(page.get_by_role("button", name="Run")).to_be_enabled()
    forgive_refused_loads(page, "ERR_INTERNET_DISCONNECTED")
    # htmx logs the failed request itself, naming its events
    page.problems[:] = [p for p in page.problems if not re.match(r"console: htmx:\w+, ", p)]


def test_a_run_in_flight_shows_running_and_disables_run(page, server_url, shot):
    page.goto(server_url + "/")
    held = []
    page.route("**/run", lambda route: held.append(route))  # waits until the test lets it go
    run = page.get_by_role("button", name="Run")
    run.click()
    status = page.get_by_role("status").filter(has_text="Running")
    expect(status).to_have_text("Running…")
    expect(run).to_be_disabled()
    expect(page.locator("form.htmx-request")).to_have_count(1)  # the spinner's hook
    shot(page, "run-in-flight")
    held[0].continue_()
    expect(page.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 1 of"))
    expect(page.locator("form[data-run-form] [data-running]")).to_have_text("")
    expect(
        page.locator("form[data-run-form] button[type=submit]")
    ).to_be_enabled()  # folded away, not dead


def test_retry_after_as_a_date(page, server_url):
    page.goto(server_url + "/")
    seconds = page.evaluate(
        """async () => {
            const { retrySeconds } = await import("/static/run.js");
            const now = Date.parse("Wed, 21 Oct 2026 07:28:00 GMT");
            return [retrySeconds("Wed, 21 Oct 2026 07:28:30 GMT", now), retrySeconds("12", now),
                    retrySeconds("soon", now), retrySeconds(null, now)];
        }"""
    )
    assert seconds == [30, 12, None, None]


def _raises(error):
    async def find_or_run(*args, **kwargs):
        raise error

    return find_or_run


def test_a_snippet_python_cannot_read_keeps_the_editor_open_at_the_spot(page, server_url):
    """A syntax error ran nothing: no player to play, nothing to share or quiz, and the
    editor stays open with its cursor where Python stopped reading (it once folded away and
    pointed into the read-only code of an empty player)."""
    page.goto(server_url + "/")
    box = page.get_by_role("textbox", name="Your snippet")
    expect(box).to_have_attribute("contenteditable", "true")  # CodeMirror is mounted
    box.click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text("import torch\nx = torch.ones(2)\ny = (x +\nprint(y)\n")
    page.get_by_role("button", name="Run").click()
    problem = page.locator("#result [data-problem]")
    expect(problem).to_contain_text("SyntaxError")
    expect(problem).to_contain_text("none of it ran")
    expect(page.locator("grad-player")).to_have_count(0)
    expect(page.get_by_role("link", name="Quiz me")).to_have_count(0)
    expect(page.locator("details[data-editor]")).to_have_attribute("open", "")
    line = problem.get_attribute("data-line")
    expect(box).to_be_focused()
    cursor_line = page.evaluate(
        """() => {
            const root = document.querySelector(".code-editor").shadowRoot;
            const line = root.getSelection().anchorNode.parentElement.closest(".cm-line");
            return [...root.querySelectorAll(".cm-line")].indexOf(line) + 1;
        }"""
    )
    assert cursor_line == int(line)
    assert page.url == server_url + "/"  # nothing stored to link to
    # Chromium reports the 422 answer itself as a console error: that one is expected here
    page.problems[:] = [p for p in page.problems if "422 (Unprocessable Entity)" not in p]
