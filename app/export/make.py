"""A trace into a file, or one step into a picture (the formats: app/export/__init__.py)."""

from __future__ import annotations

from app.export import cost, encode, raster
from app.export.frames import frames
from app.export.options import BadOption, ExportRequest, StepRange
from app.export.standalone import standalone_html
from app.render import render

PICTURES = {"png": "image/png", "svg": "image/svg+xml"}


def export(
    trace: dict,
    ident: str,
    request: ExportRequest,
    *,
    live_url: str | None = None,
    progress: encode.Progress = encode._quiet,
) -> bytes:
    """The trace stored as `ident` in `request`'s format. `live_url` (the trace's page, when
    there is a server) is written into the HTML file as the way back to the live page."""
    if request.format == "html":
        html = standalone_html(trace, ident, request, live_url)
        progress(1, 1)
        return html.encode("utf-8")
    rendered = render(trace)
    steps = request.steps(len(rendered["steps"]))
    cost.check(rendered, request.view, request.format, steps)  # before any frame is drawn
    drawn = frames(rendered, request.view, steps, request.theme)
    if request.format == "zip":
        words = "".join(
            f"Step {k + 1} ({rendered['steps'][k]['phase']}): {rendered['steps'][k]['text']}\n"
            for k in steps.indices
        )
        return encode.zip_of(drawn, len(steps), words, progress)
    if request.format == "pdf":
        return encode.pdf_of(drawn, len(steps), f"gradtrace trace {ident}", progress)
    return encode.gif_of(drawn, len(steps), progress)


def picture(trace: dict, kind: str, view: str, theme: str, step: int | None) -> bytes:
    """One step (1-based; None: the last) as a picture with its caption: an SVG, or a PNG of
    raster.THUMBNAIL_SIZE (what oEmbed promises its consumers)."""
    rendered = render(trace)
    total = len(rendered["steps"])
    step = total if step is None else step
    if not 1 <= step <= total:
        raise BadOption(f"step={step}: this trace has steps 1 to {total}.")
    (frame,) = frames(rendered, view, StepRange.of(total, step, step), theme)
    if kind == "svg":
        return frame.svg.encode("utf-8")
    return raster.png_fitted(frame.svg, frame.width, raster.THUMBNAIL_SIZE)
