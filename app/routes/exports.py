"""A stored trace as files: `/t/{id}/export.{html,zip,pdf,gif}` and one step as a picture,
`/t/{id}.png` and `/t/{id}.svg` (oEmbed's thumbnail; a slide's still).

The query string chooses `view`, `theme` and a range `from`/`to` (pictures: `step`), checked by
app/export/options.py; a bad one is a 422 saying what to give instead. Files are drawn in a
render worker under the export budget (app/render_pool.py) and kept with the pages; they are
revalidated like pages, against a tag naming all they are drawn from.
"""

from __future__ import annotations

import base64
import json

from fastapi import APIRouter, Depends, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from app.busy import PLAIN_TEXT
from app.dependencies import ExportVersion, MetricsDep, RequesterDep, TracesDep
from app.export.make import PICTURES
from app.export.options import FORMATS, THEMES, VIEWS, BadOption, ExportRequest, choice
from app.http_cache import REVALIDATE, entity_tag, matches, not_modified
from app.public_url import public_url
from app.render_pool import TooLargeToDraw
from app.routes.busy import shown_as
from app.service import content_digest

# a file's refusals for want of room are plain text, as its other failures are
router = APIRouter(dependencies=[Depends(shown_as(PLAIN_TEXT))])


@router.get("/t/{ident}/export.{format}")
async def export_file(
    request: Request,
    ident: str,
    format: str,
    traces: TracesDep,
    requester: RequesterDep,
    version: ExportVersion,
    metrics: MetricsDep,
):
    query = request.query_params
    try:
        wanted = ExportRequest.checked(
            format,
            query.get("view"),
            query.get("theme"),
            _step_number(query, "from"),
            _step_number(query, "to"),
        )
    except BadOption as problem:
        status = 404 if format not in FORMATS else 422
        return PlainTextResponse(str(problem), status_code=status)
    found = await _trace(request, ident, traces, requester)
    if isinstance(found, Response):
        return found
    trace, digest = found
    live_url = public_url(request, f"/t/{ident}")
    caching = {"Cache-Control": REVALIDATE}
    if digest and matches(
        request, tag := entity_tag("export", digest, repr(wanted), live_url, version)
    ):
        return not_modified(tag, caching)
    try:
        made = await traces.export(ident, requester, wanted, live_url, trace=trace)
    except TooLargeToDraw as failure:
        return _not_drawn(failure)
    tag = entity_tag("export", made["digest"] or digest, repr(wanted), live_url, version)
    if matches(request, tag):
        return not_modified(tag, caching)
    headers = {
        "ETag": tag,
        "Cache-Control": REVALIDATE,
        "Content-Disposition": f'attachment; filename="{wanted.filename(ident)}"',
    }
    return _counted(metrics, format, _answer(made["reply"], FORMATS[format][0], headers))


@router.get("/t/{ident}.{kind}")
async def picture(
    request: Request,
    ident: str,
    kind: str,
    traces: TracesDep,
    requester: RequesterDep,
    version: ExportVersion,
    metrics: MetricsDep,
):
    if kind not in PICTURES:
        return PlainTextResponse(f"No picture is called .{kind}: use .png or .svg.", 404)
    query = request.query_params
    try:
        view = choice("view", query.get("view"), VIEWS)
        theme = choice("theme", query.get("theme"), THEMES)
        step = _step_number(query, "step")
    except BadOption as problem:
        return PlainTextResponse(str(problem), status_code=422)
    found = await _trace(request, ident, traces, requester)
    if isinstance(found, Response):
        return found
    trace, digest = found

    def tag_of(digest: str) -> str:
        return entity_tag("picture", digest, kind, view, theme, str(step), version)

    # shared caches may keep it (an oEmbed consumer's thumbnail), so no cookie goes with it
    caching = {"Cache-Control": "public, no-cache"}
    if digest and matches(request, tag_of(digest)):
        return not_modified(tag_of(digest), caching)
    asked = (kind, view, theme, step)
    try:
        made = await traces.picture(ident, requester, asked, trace=trace)
    except TooLargeToDraw as failure:
        return _not_drawn(failure)
    tag = tag_of(made["digest"] or digest)
    if matches(request, tag):
        return not_modified(tag, caching)
    return _counted(metrics, kind, _answer(made["reply"], PICTURES[kind], {"ETag": tag, **caching}))


def _step_number(query, name: str) -> int | None:
    text = query.get(name)
    if text is None or text == "":
        return None
    if not text.isdecimal() or len(text) > 9:
        raise BadOption(f"{name}={text!r} is not a step number: give a whole number from 1.")
    return int(text)


async def _trace(request: Request, ident: str, traces, requester):
    """What to draw: (None, the stored trace's digest if known) for a stored trace, which the
    drawing reads itself; a 404; or, for one recorded by an older engine, a redirect to the same
    export of today's run of its code (or that run in hand, with its digest, if it is not
    stored)."""
    if await traces.visit(ident, requester) is None:
        return PlainTextResponse(f"No trace is stored as {ident!r}.", status_code=404)
    if not await traces.outdated(ident):
        return None, traces.known_digest(ident)
    code = await traces.code_of(ident)
    if code is None:
        return PlainTextResponse(f"No trace is stored as {ident!r}.", status_code=404)
    fresh, trace, stored = await traces.run_again(code, requester)
    if not stored:
        return trace, content_digest(json.dumps(trace, sort_keys=True))
    url = request.url.replace(path=request.url.path.replace(f"/t/{ident}", f"/t/{fresh}", 1))
    return RedirectResponse(str(url), status_code=307)


def _answer(made, media_type: str, headers: dict) -> Response:
    """The worker's reply as an answer. It drew a hostile trace, so its reply is read as one of
    its three shapes with text where text belongs, and anything else is a failure to draw."""
    if not isinstance(made, dict):
        made = {}
    for key, status in (("bad_option", 422), ("unavailable", 503)):
        if isinstance(made.get(key), str):
            return PlainTextResponse(made[key][:1000], status_code=status)
    try:
        body = base64.b64decode(made.get("data"), validate=True)
    except (TypeError, ValueError):  # binascii.Error is a ValueError
        return _not_drawn(TooLargeToDraw("the render worker's reply was unreadable"))
    return Response(body, media_type=media_type, headers=headers)


def _counted(metrics, format: str, answer: Response) -> Response:
    """`answer`, counted in /metrics by its format if it is the file."""
    if answer.status_code == 200:
        metrics.exports.labels(format).inc()
    return answer


def _not_drawn(failure: TooLargeToDraw) -> Response:
    return PlainTextResponse(
        f"This export could not be drawn: {failure.reason}. A shorter range of steps "
        "(from= and to=) draws in less time.",
        status_code=422,
    )
