"""The notebook API (gradtrace/): trace() through the sandbox, show() and its widget, the
%%gradtrace magic, and the widget's stylesheet confined to the widget. The widget's front end is
driven in Chromium by tests/browser/test_notebook_widget.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import tinycss2
import traitlets
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import gradtrace
import gradtrace.magic
import gradtrace.notebook
from app.examples import BY_SLUG
from app.render import narrate, render
from tests.trace_schema import VALIDATOR

ROOT = Path(__file__).resolve().parents[2]
SEED = BY_SLUG["two-paths"].code
HOSTILE = """import torch
# </script><img src=x onerror=alert(1)>
x = torch.tensor(2.0, requires_grad=True)
y = x * len("<b onmouseover=alert(2)>")
print("<script>alert(3)</script>")
y.backward()
"""
FAILING = "import torch\na = torch.ones(2, requires_grad=True)\nb = a.sin_()\n"


@pytest.fixture(scope="module")
def seed_trace():
    return gradtrace.trace(SEED)


def test_trace_is_a_valid_trace_of_the_snippet(seed_trace):
    VALIDATOR.validate(seed_trace)
    assert seed_trace["code"] == SEED
    assert seed_trace["stdout"] == "5.0 3.0\n"
    assert seed_trace["outcome"] == {"status": "ok"}


def test_trace_wants_the_snippet_as_text():
    with pytest.raises(TypeError, match="str"):
        gradtrace.trace(b"import torch")


def test_show_builds_the_player_of_the_run(seed_trace):
    widget = gradtrace.show(SEED, step=3, view="autograd", theme="dark")
    assert isinstance(widget, gradtrace.Player)
    tag = re.search(r"<grad-player\b[^>]*>", widget.html)
    assert tag, "no player in the widget's markup"
    assert 'data-hash="off"' in tag[0] and 'data-keys="focus"' in tag[0]
    assert widget.steps == len(render(seed_trace)["steps"]) > 3
    assert (widget.step, widget.view, widget.theme) == (3, "autograd", "dark")
    assert "5.0 3.0" in widget.html  # what it printed, under the player


def test_a_step_outside_the_trace_is_refused(seed_trace):
    widget = gradtrace.Player(seed_trace)
    assert widget.step == 1
    with pytest.raises(traitlets.TraitError, match=f"steps 1 to {widget.steps}"):
        widget.step = widget.steps + 1
    with pytest.raises(traitlets.TraitError):
        widget.step = 0
    with pytest.raises(traitlets.TraitError):
        gradtrace.Player(seed_trace, view="sideways")
    widget.step = widget.steps
    assert widget.step == widget.steps


def test_a_new_trace_redraws_the_player(seed_trace):
    widget = gradtrace.Player(seed_trace, step=4)
    other = gradtrace.trace(FAILING)
    widget.trace = other
    assert widget.step == 1
    assert widget.steps == len(render(other)["steps"])
    assert "sin_" in widget.html and "5.0 3.0" not in widget.html


def test_a_failing_snippet_shows_its_trace_up_to_the_error():
    widget = gradtrace.show(FAILING)
    assert "<grad-player" in widget.html
    assert 'data-phase="error"' in widget.html
    assert 'class="problem"' in widget.html  # the error, under the player


def test_hostile_text_in_the_snippet_stays_escaped():
    widget = gradtrace.show(HOSTILE)
    html = widget.html
    for raw in ("<img", "<b onmouseover", "<script>alert(3)", "</script><img"):
        assert raw not in html
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in html  # printed, escaped
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # the code's line, escaped
    # the only script is the player's data block, which is JSON
    assert re.findall(r"<script\b[^>]*>", html) == [
        '<script type="application/json" data-player-data>'
    ]


def test_a_run_too_big_to_draw_is_shown_in_words(seed_trace, monkeypatch):
    monkeypatch.setattr(gradtrace.notebook, "DRAW_AT_MOST_EVENTS", len(seed_trace["events"]) - 1)
    widget = gradtrace.Player(seed_trace)
    assert "<grad-player" not in widget.html
    words = narrate(seed_trace)
    assert widget.steps == len(words)
    assert widget.html.count("<li>") == len(words)
    assert f"{len(seed_trace['events']):,} events" in widget.html


# ***** the magic *****


@pytest.fixture(scope="module")
def shell():
    ipython = InteractiveShell.instance()
    ipython.run_line_magic("load_ext", "gradtrace")
    return ipython


@pytest.fixture
def shown(monkeypatch):
    displayed = []
    monkeypatch.setattr(gradtrace.magic, "display", displayed.append)
    return displayed


def test_the_magic_shows_the_cell_and_keeps_its_trace(shell, shown):
    shell.user_ns.pop("t", None)
    options = "--trace t --step 2 --view autograd --theme dark"
    assert shell.run_cell_magic("gradtrace", options, SEED) is None
    assert shell.user_ns["t"]["code"] == SEED
    assert shell.user_ns["t"]["stdout"] == "5.0 3.0\n"
    [widget] = shown
    assert isinstance(widget, gradtrace.Player)
    assert (widget.step, widget.view, widget.theme) == (2, "autograd", "dark")
    assert widget.trace is shell.user_ns["t"]


def test_the_magic_is_displayed_as_a_widget(shell):
    from IPython.utils.capture import capture_output

    with capture_output() as captured:
        shell.run_cell_magic("gradtrace", "", SEED)
    [output] = captured.outputs
    assert "application/vnd.jupyter.widget-view+json" in output.data


@pytest.mark.parametrize(
    "options", ["--trace 1x", "--trace class", "--view sideways", "--theme blue", "--step two"]
)
def test_the_magic_refuses_bad_options(shell, shown, options):
    with pytest.raises(UsageError):
        shell.run_cell_magic("gradtrace", options, SEED)
    assert shown == []


# ***** what the widget brings into the notebook's page *****


def _selectors(css: str) -> list[str]:
    found = []
    for rule in tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True):
        if rule.type == "qualified-rule":
            # split at the list's own commas: a function token (`:is(a, b)`) holds its own
            parts = [[]]
            for token in rule.prelude:
                if token.type == "literal" and token.value == ",":
                    parts.append([])
                else:
                    parts[-1].append(token)
            found.extend(tinycss2.serialize(part).strip() for part in parts)
        elif rule.type == "at-rule" and rule.lower_at_keyword != "keyframes":
            found.extend(_selectors(tinycss2.serialize(rule.content)))
    return found


def test_the_widget_styles_only_itself():
    css = gradtrace.Player._css
    selectors = _selectors(css)
    assert len(selectors) > 100
    strays = [s for s in selectors if not s.startswith(".gradtrace-widget")]
    assert strays == []
    assert "prefers-color-scheme" not in css  # the theme is the reader's pick, not the OS's
    names = re.findall(r"@keyframes\s+([\w-]+)", css)
    assert names and all(name.startswith("gradtrace-") for name in names)
    used = set(re.findall(r"animation:\s*([\w-]+)", css)) - {"none"}
    assert used and used <= set(names)


def test_the_widget_module_is_self_contained():
    esm = gradtrace.Player._esm
    assert re.search(r"^export default \{", esm, re.M)
    assert not re.search(r"^\s*import\b", esm, re.M)  # nothing fetched: no imports at all
    assert 'customElements.define("grad-player"' in esm


def test_trace_needs_no_anywidget():
    probe = (
        "import sys; sys.modules['anywidget'] = None\n"
        "import gradtrace\n"
        "assert callable(gradtrace.trace) and callable(gradtrace.show)\n"
        "try:\n    gradtrace.Player\nexcept ImportError as e:\n    print(e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "pip install 'gradtrace[notebook]'" in result.stdout


def test_outside_jupyter_the_output_is_the_player_as_it_reads_without_javascript():
    # nbconvert's HTML or a notebook viewer has no widget manager: it once got only a repr
    widget = gradtrace.show(HOSTILE)
    data, _ = widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data  # Jupyter still gets the widget
    static = data["text/html"]
    assert static.startswith("<style>") and 'class="gradtrace-widget theme-light"' in static
    assert static.count("<svg") == 2  # both views, drawn at the last step
    assert "Every step as text" in static
    for raw in ("<img", "<b onmouseover", "<script>alert(3)"):
        assert raw not in static
