"""The step's focus follows into view: the highlighted code inside the code pane (a 100-line
snippet, a very long line), the focused node inside the drawing, the page itself never scrolled
for it; and nodes inspected by keyboard alone."""

import re

from playwright.sync_api import expect

from app.examples import BY_SLUG

# 100 lines: a chain of 96 products, then a line far wider than the pane whose product sits at
# its right end, then backward
CHAIN = 96
LONG_LINE = "q = (" + " + ".join(["0.0"] * 80) + ") + x96 * 2.0"
HUNDRED_LINES = "\n".join(
    ["import torch", "x0 = torch.tensor(1.5, requires_grad=True)"]
    + [f"x{i} = x{i - 1} * 1.01" for i in range(1, CHAIN + 1)]
    + [LONG_LINE, "q.backward()"]
)


def open_trace(page, server_url, code):
    reply = page.request.post(f"{server_url}/api/traces", data={"code": code})
    assert reply.ok, reply.text()
    page.goto(f"{server_url}/t/{reply.json()['id']}")
    expect(page.locator("[data-counter]")).to_have_text(re.compile(r"Step 1 of \d+"))


def inside(inner, outer, slack=1.0):
    return (
        inner["x"] >= outer["x"] - slack
        and inner["y"] >= outer["y"] - slack
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack
    )


def go_to_line(page, line):
    """Step forward until the highlighted code is on `line`."""
    for _ in range(400):
        if page.locator(f'[data-line="{line}"].current').count():
            return
        page.keyboard.press("ArrowRight")
    raise AssertionError(f"no step highlights line {line}")


def test_the_code_line_and_the_focused_node_follow_the_step(page, server_url):
    assert len(HUNDRED_LINES.splitlines()) == 100
    page.set_viewport_size({"width": 1280, "height": 800})
    page.emulate_media(reduced_motion="reduce")
    open_trace(page, server_url, HUNDRED_LINES)
    page.locator("grad-player").scroll_into_view_if_needed()
    page.locator("grad-player").focus()
    page_scroll = page.evaluate("window.scrollY")
    code = page.locator("pre.code")
    views = page.locator("[data-views]")
    for line in (60, 99):
        go_to_line(page, line)
        mark = page.locator(f'[data-line="{line}"] mark')
        expect(mark).to_be_visible()
        assert inside(mark.bounding_box(), code.bounding_box()), f"line {line} not in the pane"
        focused = page.locator('figure[data-view="tensors"] g.node.focus').first
        assert inside(focused.bounding_box(), views.bounding_box()), f"line {line}'s node not shown"
    # the long line's product is at its far end: the pane scrolled sideways, the page did not
    assert page.evaluate("document.querySelector('pre.code').scrollLeft") > 0
    assert page.evaluate("window.scrollY") == page_scroll
    assert page.evaluate("document.documentElement.scrollLeft") == 0


def test_a_node_is_inspected_with_the_keyboard_alone(page, server_url):
    open_trace(page, server_url, BY_SLUG["two-paths"].code)
    page.locator("grad-player").focus()
    page.keyboard.press("End")
    page.locator("[data-views]").focus()
    page.keyboard.press("Tab")  # the first visible node of the drawing
    focused = page.locator("*:focus")
    expect(focused).to_have_attribute("role", "button")
    title = focused.locator("title").text_content()
    assert title
    expect(focused).to_have_accessible_name(title)  # its title names it
    # Tab reaches only nodes that are shown
    hidden_tabbable = page.locator('figure[data-view="tensors"] g.node.hidden[tabindex]').count()
    assert hidden_tabbable == 0
    # tab on to a, the leaf whose .grad is 5
    for _ in range(20):
        if page.evaluate("document.activeElement.id") == "t1":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "t1"
    page.keyboard.press("Enter")
    inspector = page.locator("[data-inspector]")
    expect(inspector).to_be_visible()
    grad = inspector.locator("dt", has_text=re.compile(r"^\.?grad$")).locator(
        "xpath=following-sibling::dd[1]"
    )
    expect(grad).to_contain_text("5")
    # a fact that changes in the run is shown as of the current step, and follows it
    page.keyboard.press("Home")
    expect(grad).not_to_contain_text("5")
    # Space on a node inspects too (it does not play)
    page.keyboard.press("End")  # b is not made yet at step 1
    page.locator('figure[data-view="tensors"] g[id="t2"]').focus()
    page.keyboard.press(" ")
    expect(inspector.locator("h3")).to_contain_text("b")
    expect(page.get_by_role("button", name="Play")).to_be_visible()


def test_the_keyboard_can_skip_past_a_big_graphs_nodes(page, server_url):
    """Every visible node is a Tab stop, so a long chain would take hundreds of presses to get
    past: a skip button, shown when focused, goes straight on to the code."""
    chain = "import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x\n"
    chain += "for _ in range(60):\n    y = y * 1.01\ny.backward()\n"
    open_trace(page, server_url, chain)
    page.locator("grad-player").focus()
    page.keyboard.press("End")
    page.locator("[data-action=last]").focus()
    skip = page.get_by_role("button", name="Skip past the graph's nodes")
    for _ in range(30):  # on through the controls to the skip button
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.dataset.action") == "skip-graph":
            break
    expect(skip).to_be_focused()
    assert skip.bounding_box()["width"] > 20  # seen while focused
    page.keyboard.press("Enter")
    expect(page.locator("pre.code")).to_be_focused()
    assert page.locator('figure[data-view="tensors"] g.node[tabindex="0"]').count() > 60
