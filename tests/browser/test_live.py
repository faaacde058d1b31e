"""Live editing (static/live.js): a change in the editor, at a pause, updates the player in place,
at the same step, with no page load and no history entry; errors are marked at their line;
steady typing sends one run, at the pause; live runs are stored only when kept."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from app.examples import BY_SLUG

SEED = BY_SLUG["two-paths"].code
B_LINE = 4  # b = torch.tensor(4.0, requires_grad=True)
B_VALUE_AT = len("b = torch.tensor(")


def editor(page):
    content = page.get_by_role("textbox", name="Your snippet")
    expect(content).to_have_attribute("contenteditable", "true")  # CodeMirror has mounted
    return content


def live_posts(page) -> list[str]:
    """The bodies of the POSTs to /live from now on, as they are sent."""
    sent: list[str] = []
    page.on(
        "request",
        lambda r: sent.append(r.post_data or "") if r.url.endswith("/live") else None,
    )
    return sent


def go_to_line_end(page, line: int) -> None:
    page.keyboard.press("ControlOrMeta+Home")
    for _ in range(line - 1):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("End")


def change_b(page, value: str) -> None:
    """Type `value` over b's number on line 4, the way a learner would."""
    go_to_line_end(page, B_LINE)
    page.keyboard.press("Home")
    for _ in range(B_VALUE_AT):
        page.keyboard.press("ArrowRight")
    for _ in range(3):
        page.keyboard.press("Shift+ArrowRight")
    page.keyboard.insert_text(value)  # one edit, however slow the machine


def shown_ident(page) -> str:
    return re.search(r"/t/([a-z2-7]+)", page.url).group(1)


def stored(server_url: str, ident: str) -> bool:
    answer = httpx.get(f"{server_url}/api/traces/{ident}", timeout=30)
    assert answer.status_code in (200, 404), answer.text
    return answer.status_code == 200


def test_an_edit_updates_the_same_step_in_place_and_is_kept_only_when_shared(page, server_url):
    page.goto(server_url + "/?example=two-paths")
    page.get_by_role("button", name="Run").click()
    counter = page.locator("grad-player [data-counter]")
    expect(counter).to_have_text(re.compile(r"Step 1 of \d+"))
    ran = shown_ident(page)
    page.evaluate("document.querySelector('grad-player').goto(2)")  # step 3: c = a * b
    page.get_by_role("radio", name="tensors").check()
    expect(counter).to_have_text(re.compile(r"Step 3 of"))
    c_value = page.locator('[data-view="tensors"] svg g[id="t3"] text.value')
    expect(c_value).to_contain_text("12")
    page.evaluate("window.sameDocument = true")
    entries = page.evaluate("history.length")
    sent = live_posts(page)

    # with live editing on, Run leaves the editor open beside the player
    expect(page.locator("details.editor")).to_have_attribute("open", "")
    editor(page).click()
    change_b(page, "5.0")
    # the same step, of the new run: c = 3 * 5, in the same document, at a new address
    expect(c_value).to_contain_text("15")
    expect(counter).to_have_text(re.compile(r"Step 3 of"))
    expect(page.locator("[data-narration]")).to_contain_text("MulBackward0")
    assert page.evaluate("window.sameDocument === true")
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    assert page.evaluate("history.length") == entries
    assert re.search(r"/t/[a-z2-7]+#step=3$", page.url)
    live = shown_ident(page)
    assert live != ran
    assert len(sent) == 1 and "5.0" in sent[0]
    expect(editor(page)).to_be_focused()  # the cursor never left the editor
    assert not stored(server_url, live)  # typing stores nothing

    # an error is marked at its line as it is typed, and cleared once fixed
    go_to_line_end(page, 7)  # d.backward()
    page.keyboard.insert_text("\nd.backward()")  # a second backward through a freed graph
    note = page.locator(".cm-problem-note")
    expect(note).to_contain_text("RuntimeError")
    expect(page.locator(".cm-problem-line")).to_have_count(1)
    expect(page.locator("[data-live-status]")).to_contain_text("line 8")
    for _ in range(len("\nd.backward()")):
        page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.press("Backspace")
    expect(page.locator("[data-live-status]")).to_contain_text("Updated")  # the run of the fix
    expect(page.locator(".cm-problem-line")).to_have_count(0)
    expect(note).to_have_count(0)
    assert len(sent) == 3
    assert not stored(server_url, shown_ident(page))

    # Share keeps the run shown: stored, under the address it was shown at
    page.get_by_text("Share, embed or download").click()
    expect(page.locator("details.share")).to_have_attribute("open", "")
    assert stored(server_url, shown_ident(page))
    assert page.evaluate("window.sameDocument === true")

    # and so does leaving the page on a run
    editor(page).click()
    change_b(page, "6.0")
    expect(c_value).to_contain_text("18")
    left = shown_ident(page)
    assert not stored(server_url, left)
    page.goto(server_url + "/lessons")
    assert eventually(lambda: stored(server_url, left), page)  # the beacon, sent as it left


def eventually(check, page, tries: int = 100) -> bool:
    """Whether `check()` comes true within a few seconds (a hang guard, not a speed check)."""
    for _ in range(tries):
        if check():
            return True
        page.wait_for_timeout(100)
    return False


def test_steady_typing_sends_one_run_at_the_pause_and_quiz_me_keeps_it(page, server_url):
    page.goto(server_url + "/?example=two-paths")
    editor(page).click()
    go_to_line_end(page, 8)  # the print
    page.evaluate(
        "document.addEventListener('keydown', () => { window.lastKey = performance.now() })"
    )
    page.keyboard.type("  # typed steadily, a key every 100 ms", delay=100)
    expect(page.locator("grad-player [data-counter]")).to_have_text(re.compile(r"Step 1 of"))
    page.wait_for_timeout(1000)  # well past the pause: no second run came of it
    runs = page.evaluate(
        """() => performance.getEntriesByType("resource")
            .filter((entry) => new URL(entry.name).pathname === "/live")
            .map((entry) => entry.startTime - window.lastKey)"""
    )
    assert len(runs) == 1 and runs[0] > 0  # one run, sent after the last key
    live = shown_ident(page)
    assert not stored(server_url, live)

    # a step is found again by line and operation: in a loop, the same pass's; a step whose
    # line is gone, the nearest line's
    steps = [
        {"kind": "op", "span": [3, 0, 3, 5], "text": "MulBackward0"},
        {"kind": "op", "span": [4, 0, 4, 5], "text": "AddBackward0"},
        {"kind": "op", "span": [3, 0, 3, 5], "text": "MulBackward0"},
        {"kind": "op", "span": [4, 0, 4, 5], "text": "AddBackward0"},
    ]
    fewer = [steps[0], {"kind": "op", "span": [5, 0, 5, 5], "text": "SubBackward0"}, steps[0]]
    found = page.evaluate(
        """async ([steps, fewer]) => {
            const { matchStep } = await import("/static/live.js");
            const cases = [[steps, 2], [steps, 3], [fewer, 3]];
            return cases.map(([after, i]) => matchStep(steps, i, after));
        }""",
        [steps, fewer],
    )
    assert found == [2, 3, 2]  # line 4's nearest: lines 3 and 5, and of those the closest step

    page.get_by_role("link", name="Quiz me").click()
    expect(page).to_have_url(re.compile(rf"/t/{live}/quiz$"))
    expect(page.get_by_role("heading", name="Quiz me on this trace")).to_be_visible()
    assert stored(server_url, live)


def test_a_big_live_run_plays_as_any_player(page, server_url):
    """A 20-pass MLP, run live (its tensors view drawn by a forked child in the render worker,
    its player started with the step list closed and the other view hidden before anything is
    styled): the view toggle, the inspector, the pass picker, the side-by-side pass and the
    step list all work on the player the edit put in place."""
    code = BY_SLUG["mlp-training"].code
    page.goto(server_url + "/?example=mlp-training")
    editor(page).click()
    page.keyboard.press("ControlOrMeta+End")
    page.keyboard.insert_text("\nprint(loss.item())")
    status = page.locator("[data-live-status]")
    expect(status).to_contain_text("Updated", timeout=30_000)
    expect(page.locator(".stdout")).to_be_attached()
    player = page.locator("grad-player")
    expect(player).to_have_count(1)
    assert page.evaluate("document.querySelector('grad-player').ready")
    assert "print(loss.item())" in page.locator("grad-player [data-code]").inner_text()
    assert code.splitlines()[0] in page.locator("grad-player [data-code]").inner_text()

    tensors = page.locator('figure[data-view="tensors"]')
    autograd = page.locator('figure[data-view="autograd"]')
    expect(tensors).to_be_visible()
    expect(autograd).to_be_hidden()
    page.get_by_role("radio", name="autograd").check()
    expect(autograd).to_be_visible()
    expect(tensors).to_be_hidden()
    page.get_by_role("radio", name="tensors").check()
    expect(tensors).to_be_visible()

    page.locator("select[data-pass]").select_option("7")
    expect(page.locator("select[data-pass] option:checked")).to_have_text("Pass 7 of 20")
    expect(page.locator("[data-narration]")).to_contain_text("pass 7")
    tensors.locator("svg g.node.focus").first.click()  # the step's own, framed in view
    expect(page.locator("[data-inspector]")).to_be_visible()
    expect(page.locator("[data-inspector]")).not_to_be_empty()

    page.get_by_label("side by side with").check()
    panel = page.locator("[data-compare-panel]")
    expect(panel).to_be_visible()
    expect(panel.locator("figcaption")).to_contain_text("Pass 6 of 20")

    steps = page.locator("details.all-steps")
    expect(steps).not_to_have_attribute("open", "")
    steps.locator("summary").click()
    expect(steps.locator("li").first).to_be_visible()
    count = page.evaluate("document.querySelector('grad-player').steps.length")
    expect(steps.locator("li")).to_have_count(count)
