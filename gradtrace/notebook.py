"""The player in a notebook: an anywidget whose front end is the site's own player.

The kernel draws the player's markup (templates/_notebook.html, with the same context the
server's pages get) and hands it over as the `html` trait; the front end (gradtrace/widget.js,
after the player's modules joined into one module) puts it in the output and keeps the
`step`, `view` and `theme` traits and the player in step both ways. Everything travels in the
widget's own module and stylesheet: no server, no CDN, no request at all.
"""

from __future__ import annotations

from functools import cache

try:
    import anywidget
except ImportError as missing:  # the notebook display is an extra
    raise ImportError(
        "gradtrace's notebook display needs anywidget: pip install 'gradtrace[notebook]'"
    ) from missing
import traitlets

from app.export.bundle import bundle, styles
from app.export.options import THEMES, VIEWS
from app.files import package_folder
from app.render import narrate
from app.render.page import drawn_page, shown_trace
from app.store import trace_id
from app.templating import environment
from gradtrace.styles import scoped

HERE = package_folder("gradtrace")  # widget.js and widget.css

# Past this many events a run is shown in words, as the server shows a trace it could not draw
# within its budget: the kernel draws in-process, with no worker to give up on. The sandbox's
# default cap (max_events) is this same number, so only a raised cap meets it.
DRAW_AT_MOST_EVENTS = 20_000

# The player's options for a page it does not own: it leaves the notebook's URL alone, and its
# keys work only while focus is inside it (static/player.js's header).
PLAYER_ATTRIBUTES = {"data-hash": "off", "data-keys": "focus"}

# What the widget needs of the site's page sheet: its colours, its font, and the printed output.
PAGE_RULES = (":root", "body", "pre.stdout", ".problem", ".notice")


def widget_module() -> str:
    """The widget's front end: the player's modules, then the widget's default export."""
    return bundle("player.js") + "\n" + (HERE / "widget.js").read_text(encoding="utf-8")


def widget_styles() -> str:
    """The player's sheet and the little of the page's it needs, confined to the widget."""
    page = scoped(styles("style.css"), only=PAGE_RULES)
    player = scoped(styles("player.css"))
    return "\n".join([page, player, (HERE / "widget.css").read_text(encoding="utf-8")])


def markup(trace: dict) -> tuple[str, int]:
    """The widget's HTML for a trace, and how many steps it shows."""
    events = len(trace["events"])
    if events > DRAW_AT_MOST_EVENTS:
        steps = narrate(trace)
        reason = (
            f"This run recorded {events:,} events; the notebook draws at most "
            f"{DRAW_AT_MOST_EVENTS:,}, so that drawing it does not hold up the kernel."
        )
        context = {"undrawn": {"reason": reason, "steps": steps}, "trace": shown_trace(trace)}
        count = len(steps)
    else:
        context = drawn_page(trace, trace_id(trace["code"]))
        context["player_attributes"] = PLAYER_ATTRIBUTES
        count = context["rendered"]["step_count"]
    html = _template().render(**context)
    return html, count


@cache
def _template():
    return environment().get_template("_notebook.html")


class Player(anywidget.AnyWidget):
    """A trace's player, shown inline by the notebook. `step` (1-based) follows the player
    both ways; `view` ("tensors" or "autograd") and `theme` ("light" or "dark") move it."""

    _esm = widget_module()
    _css = widget_styles()

    html = traitlets.Unicode(read_only=True).tag(sync=True)
    steps = traitlets.Int(0, read_only=True).tag(sync=True)
    step = traitlets.Int(1).tag(sync=True)
    view = traitlets.Enum(VIEWS, default_value=VIEWS[0]).tag(sync=True)
    theme = traitlets.Enum(THEMES, default_value=THEMES[0]).tag(sync=True)

    def __init__(
        self,
        trace: dict,
        *,
        step: int | None = None,
        view: str = VIEWS[0],
        theme: str = THEMES[0],
    ) -> None:
        super().__init__(view=view, theme=theme)
        self.trace = trace
        if step is not None:
            self.step = step

    @property
    def trace(self) -> dict:
        """The trace shown; setting another redraws the player, from its first step."""
        return self._trace

    @trace.setter
    def trace(self, trace: dict) -> None:
        html, steps = markup(trace)
        self._trace = trace
        with self.hold_sync():
            self.set_trait("steps", steps)
            self.step = 1
            self.set_trait("html", html)

    def _repr_mimebundle_(self, **kwargs):
        """The widget, and for a reader with no widget manager (nbconvert's HTML, a notebook
        viewer, an output saved without its widget state) the player as it reads without
        JavaScript: the run as it ends, both views drawn, every step in words, with the
        widget's own styles. Not an object's repr."""
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = {
            **data,
            "text/html": (
                f"<style>{self._css}</style>"
                f'<div class="gradtrace-widget theme-{self.theme}">{self.html}</div>'
            ),
        }
        return data, metadata

    @traitlets.validate("step")
    def _step_in_range(self, proposal):
        step = proposal["value"]
        if not 1 <= step <= max(self.steps, 1):
            raise traitlets.TraitError(f"step={step}: this trace has steps 1 to {self.steps}.")
        return step
