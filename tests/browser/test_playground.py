"""The playground's whole flow in a real browser: pick the seed example, run it, step through
the graph being built, play the gradient flowing back, and open a link at a step."""

import re

from playwright.sync_api import expect


def run_seed_example(page, server_url):
    page.goto(server_url + "/")
    page.get_by_role("link", name="Two paths into a: d = a*b + a").click()
    page.get_by_role("button", name="Run").click()
    counter = page.locator("[data-counter]")
    expect(counter).to_have_text(re.compile(r"Step 1 of \d+"))
    return counter


def element(page, view, ident):
    return page.locator(f'[data-view="{view}"] svg g[id="{ident}"]')


def test_stepping_with_the_keyboard_builds_the_graph_node_by_node(page, server_url, shot):
    counter = run_seed_example(page, server_url)
    page.get_by_role("radio", name="autograd").check()
    page.locator("grad-player").focus()  # arrows in the radio group would change the view
    mul = element(page, "autograd", "n1")  # the MulBackward0 node
    expect(mul).to_have_class(re.compile(r"\bhidden\b"))  # not recorded yet at step 1

    page.keyboard.press("ArrowRight")
    expect(counter).to_have_text(re.compile(r"Step 2 of"))
    expect(mul).to_have_class(re.compile(r"\bhidden\b"))

    page.keyboard.press("ArrowRight")  # line 5: c = a * b
    expect(counter).to_have_text(re.compile(r"Step 3 of"))
    expect(mul).not_to_have_class(re.compile(r"\bhidden\b"))
    expect(mul).to_have_class(re.compile(r"\bfocus\b"))
    expect(mul.locator("text").first).to_have_text("MulBackward0")
    expect(page.locator("[data-code] mark")).to_have_text("a * b")
    expect(page.locator("[data-narration]")).to_contain_text("MulBackward0")
    assert page.url.endswith("#step=3")  # the hash is 1-based, as the counter
    shot(page, "playground-mul-recorded")

    page.keyboard.press("ArrowLeft")
    expect(counter).to_have_text(re.compile(r"Step 2 of"))
    expect(mul).to_have_class(re.compile(r"\bhidden\b"))


def test_playing_the_backward_phase_adds_both_paths_into_a_grad(page, server_url, shot):
    counter = run_seed_example(page, server_url)
    a = element(page, "tensors", "t1")
    expect(a.locator("text.grad")).to_have_text("")

    page.get_by_role("button", name="Jump to backward").click()
    expect(page.locator("[data-phase-label]")).to_have_text("backward")
    page.get_by_label("Speed").select_option("4")
    page.get_by_role("button", name="Play").click()
    expect(a.locator("text.grad")).to_have_text("grad 5", timeout=15_000)
    shot(page, "playground-a-grad-5")
    # play runs on to the end and stops there
    expect(page.get_by_role("button", name="Play")).to_be_visible(timeout=15_000)
    expect(counter).to_have_text(re.compile(r"Step (\d+) of \1$"))
    # the step where a's two contributions meet says so, with the numbers
    page.evaluate("window.location.hash = '#step=8'")
    expect(page.locator("[data-narration]")).to_contain_text("1 (through AddBackward0)")
    expect(page.locator("[data-narration]")).to_contain_text("= 5")


def test_a_step_link_opens_at_that_step(page, server_url, shot):
    run_seed_example(page, server_url)
    address = page.locator(".permalink a").get_attribute("href")
    page.goto(f"{server_url}{address}#step=7")
    expect(page.locator("[data-counter]")).to_have_text(re.compile(r"Step 7 of \d+"))
    expect(page.locator("[data-phase-label]")).to_have_text("backward")
    expect(page.locator("[data-narration]")).to_contain_text("MulBackward0")
    shot(page, "playground-step-link")
    # changing the hash moves the player too
    page.evaluate("window.location.hash = '#step=1'")
    expect(page.locator("[data-counter]")).to_have_text(re.compile(r"Step 1 of"))


def test_clicking_a_node_opens_the_inspector(page, server_url):
    run_seed_example(page, server_url)
    page.keyboard.press("End")
    element(page, "tensors", "t1").click()
    inspector = page.locator("[data-inspector]")
    expect(inspector).to_be_visible()
    expect(inspector).to_contain_text("requires_grad")
    expect(inspector).to_contain_text("line 3")


def test_an_error_is_a_red_step_with_the_pytorch_message(page, server_url, shot):
    page.goto(server_url + "/?example=inplace-error")
    page.get_by_role("button", name="Run").click()
    page.locator("[data-counter]").wait_for()
    page.keyboard.press("End")
    expect(page.locator("[data-phase-label]")).to_have_text("error")
    expect(page.locator("[data-code] .line.failing mark")).to_have_text("b.sum().backward()")
    expect(page.locator(".output .problem")).to_contain_text("modified by an inplace operation")
    shot(page, "playground-inplace-error")
