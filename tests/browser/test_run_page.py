"""Running the seed example in a real browser."""


def test_running_the_seed_example_shows_its_output_without_errors(page, server_url, shot):
    page.goto(server_url + "/")
    page.get_by_role("button", name="Run").click()
    output = page.locator(".stdout")
    output.wait_for()
    assert output.inner_text().strip() == "5.0 3.0"
    # htmx swapped the partial in: still one page, one form
    assert page.locator("form[data-run-form]").count() == 1
    shot(page, "run-page-after-run")
