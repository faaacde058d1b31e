"""The player's steps as a person sees them: numbered from 1 (counter, link, scrubber, step
list), quoted source as code, the empty-graph note, a backward button only when there is a
backward, and the chosen speed kept under reduced motion."""

import re

from playwright.sync_api import expect

from app.examples import BY_SLUG

TWO_PATHS = BY_SLUG["two-paths"].code


def open_trace(page, server_url, code, hash_=""):
    """Store `code`'s trace through the API and open its page (faster than typing it)."""
    reply = page.request.post(f"{server_url}/api/traces", data={"code": code})
    assert reply.ok, reply.text()
    page.goto(f"{server_url}/t/{reply.json()['id']}{hash_}")
    expect(page.locator("[data-counter]")).to_have_text(re.compile(r"Step \d+ of \d+"))


def step_count(page):
    return int(re.search(r"of (\d+)", page.locator("[data-counter]").inner_text()).group(1))


def test_a_step_link_is_the_step_a_person_counts(page, server_url):
    open_trace(page, server_url, BY_SLUG["control-flow"].code, "#step=12")
    n = step_count(page)
    assert n >= 12
    expect(page.locator("[data-counter]")).to_have_text(f"Step 12 of {n}")
    scrubber = page.locator("[data-scrubber]")
    assert scrubber.input_value() == "12"
    phase = page.locator("[data-phase-label]").inner_text()
    expect(scrubber).to_have_attribute("aria-valuetext", re.compile(rf"^Step 12 of {n}, {phase}: "))
    # the 12th entry of the step list says what the narration says
    narration = page.locator("[data-narration]").inner_text()
    page.locator("details.all-steps summary").click()
    assert page.locator("details.all-steps li").nth(11).inner_text() == narration
    # stepping writes the hash 1-based too
    page.locator("grad-player").focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator("[data-counter]")).to_have_text(f"Step 13 of {n}")
    assert page.url.endswith("#step=13")
    page.keyboard.press("Home")
    assert page.url.endswith("#step=1")
    expect(scrubber).to_have_attribute("aria-valuetext", re.compile(rf"^Step 1 of {n}, forward: "))


def test_quoted_source_is_code_in_the_narration_and_the_step_list(page, server_url):
    open_trace(page, server_url, TWO_PATHS, "#step=3")  # line 5: `a * b` multiplies a and b
    narration = page.locator("[data-narration]")
    expect(narration.locator("code").first).to_have_text("a * b")
    assert "`" not in narration.inner_text()
    step_list = page.locator("details.all-steps li").nth(2)
    expect(step_list.locator("code").first).to_have_text("a * b")


def test_a_run_without_backward_has_no_backward_to_jump_to(page, server_url):
    open_trace(
        page, server_url, "import torch\na = torch.tensor(2.0, requires_grad=True)\nb = a * 3\n"
    )
    expect(page.get_by_role("button", name="Jump to backward")).to_be_disabled()
    open_trace(page, server_url, TWO_PATHS)
    expect(page.get_by_role("button", name="Jump to backward")).to_be_enabled()


def test_a_view_with_nothing_yet_says_so(page, server_url):
    open_trace(page, server_url, TWO_PATHS)
    note = page.locator("[data-empty]")
    expect(note).to_be_hidden()  # the tensors view has a at step 1
    page.get_by_role("radio", name="autograd").check()
    expect(note).to_have_text(re.compile("Nothing recorded yet: the graph grows as operations run"))
    page.locator("grad-player").focus()
    page.keyboard.press("End")
    expect(note).to_be_hidden()


def test_a_view_with_no_graph_at_all_shows_its_notice(page, server_url):
    open_trace(page, server_url, "print('no tensors here')\n")
    notice = page.evaluate(
        "JSON.parse(document.querySelector('[data-player-data]').textContent).views.tensors.notice"
    )
    assert notice
    expect(page.locator("[data-empty]")).to_have_text(notice)


def test_reduced_motion_keeps_the_chosen_speed(page, server_url):
    # record the player's step delays instead of waiting for them
    page.add_init_script(
        """
        window.stepDelays = [];
        const realSetTimeout = window.setTimeout;
        window.setTimeout = (fn, ms, ...args) => {
          if (ms >= 100) window.stepDelays.push(ms);
          return realSetTimeout(fn, ms, ...args);
        };
        """
    )
    page.emulate_media(reduced_motion="reduce")
    open_trace(page, server_url, TWO_PATHS)
    page.get_by_label("Speed").select_option("4")
    page.get_by_role("button", name="Play").click()
    expect(page.get_by_role("button", name="Pause")).to_be_visible()
    delays = page.evaluate("window.stepDelays")
    assert delays and set(delays) == {300}, delays


def test_the_marked_span_shows_its_underscores(page, server_url):
    # The step's span is marked in the code; its outline once covered the underscores, which
    # sit at the bottom of the line box ("requires grad=True", "b.add (1)"). Each underscore
    # drawn must change the picture: the mark as shown, then with them turned to spaces.
    open_trace(
        page, server_url, "import torch\nb = torch.zeros(2, requires_grad=False)\nb.add_(1)\n"
    )
    for step in (1, 2):
        page.locator("grad-player").focus()
        page.keyboard.press("Home" if step == 1 else "ArrowRight")
        mark = page.locator("pre.code mark")
        expect(mark).to_contain_text("_")
        box = mark.bounding_box()  # and a few pixels around it: a glyph may pass its box
        around = {
            "x": box["x"] - 4,
            "y": box["y"] - 4,
            "width": box["width"] + 8,
            "height": box["height"] + 8,
        }
        shown = page.screenshot(clip=around)
        mark.evaluate("(el) => { el.textContent = el.textContent.replaceAll('_', ' '); }")
        assert page.screenshot(clip=around) != shown, f"step {step}: {mark.text_content()!r}"


def test_a_run_that_prints_nothing_says_so_and_shows_no_empty_box(page, server_url):
    open_trace(page, server_url, "import torch\nx = torch.ones(2)\n")
    expect(page.locator(".output pre.stdout")).to_be_hidden()
    expect(page.locator("[data-no-output]")).to_have_text("The snippet printed nothing.")
    open_trace(page, server_url, TWO_PATHS)  # prints on its last line
    expect(page.locator(".output pre.stdout")).to_be_visible()
    expect(page.locator("[data-no-output]")).to_be_hidden()


def test_the_runs_warnings_are_shown_with_its_ending(page, server_url):
    # the retain-grad example reads a non-leaf's .grad: PyTorch's UserWarning says why it is
    # None, and it is what the example teaches
    open_trace(page, server_url, BY_SLUG["retain-grad"].code)
    warnings = page.locator("[data-stderr]")
    expect(warnings).to_contain_text(
        "UserWarning: The .grad attribute of a Tensor that is not a leaf"
    )
    expect(warnings).to_be_visible()


def test_the_address_follows_the_step_while_playing(page, server_url):
    # after Run on the editor's page, whose address htmx has just pushed
    page.goto(server_url + "/")
    page.get_by_role("button", name="Run").click()
    expect(page.locator("[data-counter]")).to_have_text(re.compile(r"^Step 1 of"))
    page.get_by_role("button", name="Play").click()
    expect(page.locator("[data-counter]")).to_have_text(re.compile(r"^Step 3 of"))
    expect(page).to_have_url(re.compile(r"#step=(3|4)$"))
    page.get_by_role("button", name="Pause").click()
    step = re.match(r"Step (\d+)", page.locator("[data-counter]").inner_text()).group(1)
    expect(page).to_have_url(re.compile(rf"#step={step}$"))
