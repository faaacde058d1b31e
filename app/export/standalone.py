"""A trace as one HTML file that plays offline: the page's player, with its styles and its
script inlined (app/export/bundle.py joins the modules), opened from `file://` with no server.

The file's own Content-Security-Policy (templates/standalone.html) allows no request of any
kind, so whatever it shows it holds; tests/browser/test_standalone.py plays it in Chromium with
the network cut off.
"""

from __future__ import annotations

import re

from app import templating
from app.export.bundle import bundle, styles
from app.export.options import ExportRequest
from app.render.page import drawn_page
from app.render.visible import visible

STYLESHEETS = ("style.css", "player.css", "embed.css")
# inlined, a script ends at the first `</script` and a stylesheet at `</style`, whatever
# JavaScript or CSS make of them: `<\/` means the same in a JavaScript string or regex
_END_SCRIPT = re.compile(r"</(script)", re.I)


def standalone_html(
    trace: dict, ident: str, request: ExportRequest, live_url: str | None = None
) -> str:
    context = drawn_page(_visibly(trace), ident)
    steps = request.steps(context["rendered"]["step_count"])
    attributes = {"data-view": request.view, "data-from": steps.first, "data-to": steps.last}
    script = _END_SCRIPT.sub(r"<\\/\1", bundle("player.js"))
    css = styles(*STYLESHEETS)
    if "</style" in css.lower():
        raise ValueError("a stylesheet holds `</style`: it cannot be inlined")
    return (
        templating.environment()
        .get_template("standalone.html")
        .render(
            **context,
            theme=request.theme,
            live_url=live_url,
            player_attributes=attributes,
            styles=css,
            script=script,
        )
    )


def _visibly(value):
    """`value` (the trace, or any part of it) with each of its texts made visible
    (app/render/visible.py). The file shows what the snippet named, printed and raised, in its
    drawings, its steps' words and its output; and the player counts how much of the output
    each step printed in the text the file holds, so the trace is made visible, not the page."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {key: _visibly(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_visibly(item) for item in value]
    return value
