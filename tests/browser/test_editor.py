"""The snippet editor: CodeMirror over the form's textarea, under the page's real CSP.

The `page` fixture fails a test on any console error, and a style or script the CSP refused is
one, so every test here also checks that the editor works without loosening the CSP.
"""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from app.examples import BY_SLUG

SNIPPET_LABEL = "Your snippet"


def editor(page):
    """The editable code area (CodeMirror's, inside the editor's shadow root)."""
    content = page.get_by_role("textbox", name=SNIPPET_LABEL)
    expect(content).to_have_attribute("contenteditable", "true")
    return content


def output(page):
    return page.locator(".output pre.stdout")


def replace_code(page, code: str) -> None:
    content = editor(page)
    content.click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(code)


def test_the_editor_numbers_lines_and_highlights_python(page, server_url, shot):
    page.goto(server_url + "/")
    content = editor(page)
    expect(page.locator("textarea#code")).to_be_hidden()
    lines = BY_SLUG["two-paths"].code.rstrip("\n").count("\n") + 1
    gutter = page.locator(".cm-lineNumbers .cm-gutterElement:not([style*='hidden'])")
    expect(gutter.filter(has_text=re.compile(rf"^{lines}$"))).to_have_count(1)
    # a keyword is drawn in another colour than a plain name on the same line
    colours = page.evaluate(
        """() => {
            const root = document.querySelector(".code-editor").shadowRoot;
            const line = [...root.querySelectorAll(".cm-line")].find(
                (l) => l.textContent.startsWith("import"));
            const keyword = [...line.querySelectorAll("span")].find(
                (s) => s.textContent === "import");
            return [getComputedStyle(keyword).color, getComputedStyle(line).color];
        }"""
    )
    assert colours[0] != colours[1]
    # the page added no <style> of its own: CodeMirror's styles are a constructed stylesheet
    assert page.evaluate("() => document.querySelectorAll('style').length") == 0
    expect(content).to_contain_text("d.backward()")
    shot(page, "editor-open")


def test_what_is_typed_is_what_runs(page, server_url):
    page.goto(server_url + "/")
    replace_code(page, "print('edited', 6 * 7)\n")
    assert page.locator("textarea#code").input_value() == "print('edited', 6 * 7)\n"
    page.get_by_role("button", name="Run").click()
    expect(output(page)).to_have_text("edited 42")


def test_ctrl_enter_runs_without_adding_a_line(page, server_url):
    page.goto(server_url + "/")
    replace_code(page, "print(40 + 2)")
    page.keyboard.press("Control+Enter")
    expect(output(page)).to_have_text("42")
    assert page.locator("textarea#code").input_value() == "print(40 + 2)"


def test_tab_indents_and_escape_then_tab_leaves(page, server_url):
    page.goto(server_url + "/")
    replace_code(page, "for i in range(2):\n")
    page.keyboard.press("Tab")
    page.keyboard.insert_text("print(i)")
    assert page.locator("textarea#code").input_value() == "for i in range(2):\n    print(i)"
    expect(editor(page)).to_be_focused()
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Run")).to_be_focused()


def test_undo_takes_back_an_edit(page, server_url):
    page.goto(server_url + "/")
    before = page.locator("textarea#code").input_value()
    editor(page).click()
    page.keyboard.press("ControlOrMeta+End")
    page.keyboard.insert_text("print('extra')")
    assert page.locator("textarea#code").input_value() == before + "print('extra')"
    page.keyboard.press("ControlOrMeta+z")
    expect(page.locator("textarea#code")).to_have_value(before)


def test_clicking_the_label_puts_the_cursor_in_the_editor(page, server_url):
    page.goto(server_url + "/")
    content = editor(page)
    page.locator("form label").first.click()
    expect(content).to_be_focused()


def test_without_javascript_the_textarea_is_the_editor(browser, server_url):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(server_url + "/")
        textarea = page.get_by_label(SNIPPET_LABEL)
        expect(textarea).to_be_visible()
        textarea.fill("print('no scripts here')\n")
        page.get_by_role("button", name="Run").click()
        expect(output(page)).to_have_text("no scripts here")
        assert page.locator(".cm-editor").count() == 0
    finally:
        context.close()


def test_a_trace_page_loads_the_editor_only_when_asked(page, server_url):
    answer = httpx.post(f"{server_url}/api/traces", json={"code": "print('stored')\n"}, timeout=60)
    answer.raise_for_status()
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if "codemirror" in r.url else None)
    page.goto(f"{server_url}/t/{answer.json()['id']}")
    expect(page.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 1 of"))
    assert fetched == []
    page.get_by_text("Edit the snippet").click()
    expect(editor(page)).to_contain_text("print('stored')")
    assert len(fetched) == 1
