"""Browser tests: a real uvicorn on a free loopback port, driven in Debian's Chromium.

Which Chromium, and how it starts, is tests/chromium.py's (the Makefile installs it). Every
page fails its test on any JavaScript error or console error, and screenshots of key states
are kept under test-artifacts/.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from tests import chromium
from tests.live_server import free_port, serving, uvicorn_command

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# How long an expect() waits for what it expects: a hang guard, not a speed check, as long as
# Playwright's own for actions. Its 5 s failed good changes when xdist workers, their servers'
# sandboxes and renderers share two cores; a page that never gets there still fails.
expect.set_options(timeout=30_000)


@pytest.fixture(scope="session")
def server_url(tmp_path_factory):
    port = free_port()
    env = dict(os.environ, GRADTRACE_STORE_PATH=str(tmp_path_factory.mktemp("db") / "traces.db"))
    with serving(uvicorn_command(port), port, env=env) as (_, url):
        yield url


@pytest.fixture(scope="session")
def browser():
    if why := chromium.missing():
        pytest.fail(why)
    with sync_playwright() as playwright:
        browser = chromium.launch(playwright)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, request):
    """A fresh page that collects every console error and uncaught exception."""
    yield from _watched_page(browser, request)


@pytest.fixture
def a11y_page(browser, request):
    """The same, in a context that bypasses the page's CSP so that tests may inject scripts
    (axe-core). For the accessibility tests only: every other test keeps the real CSP."""
    yield from _watched_page(browser, request, bypass_csp=True)


def _watched_page(browser, request, **options):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, **options)
    page = context.new_page()
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.problems = problems
    yield page
    context.close()
    assert problems == [], f"{request.node.name} saw JavaScript errors: {problems}"


@pytest.fixture
def shot():
    """shot(page, name): keep a screenshot of a key state as a test artifact."""

    def take(page, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    return take
