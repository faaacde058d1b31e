"""The playground's pages. htmx requests get the partial, plain requests the whole page.

`/` is the editor with an example loaded; `POST /run` runs the snippet (through the sandbox and
the store) and answers the player; `/t/{id}` shows a stored trace, `#step=N` opening at step N.
`POST /live` runs as the learner types and stores nothing; `POST /live/keep` stores what it ran
(docs/live.md).
"""

from __future__ import annotations

import re
import time
from typing import Annotated

from fastapi import APIRouter, Form, Header, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from app import sharing
from app.busy import show_busy_on
from app.dependencies import PageVersion, RequesterDep, SettingsDep, TracesDep
from app.examples import BY_SLUG, DEFAULT, EXAMPLES
from app.http_cache import REVALIDATE, entity_tag, matches, not_modified

router = APIRouter()

_OPENABLE = re.compile(r"\b[gm]\d{1,6}\b")  # a stack (g3) or a module (m1)
# stacks and modules one link may open: each set of them is a page drawn (and cached) of its own
MAX_EXPANDED = 16


@router.get("/", response_class=HTMLResponse)
def index(request: Request, example: str | None = None):
    chosen = BY_SLUG.get(example or "", DEFAULT)
    return render_page(request, "index.html", {"code": chosen.code, "chosen": chosen.slug})


@router.post("/run", response_class=HTMLResponse)
async def run(
    request: Request,
    settings: SettingsDep,
    traces: TracesDep,
    requester: RequesterDep,
    code: Annotated[str | UploadFile, Form()] = "",
    hx_request: Annotated[str | None, Header()] = None,
):
    page = "_result.html" if hx_request else "index.html"
    refused = _refused(code, settings.sandbox.max_source_bytes)
    if refused is not None:
        status, problem = refused
        kept = code if status == 413 else ""
        return render_page(request, page, {"code": kept, "problem": problem}, status)
    # refused for want of room: the form again, saying why nothing ran, and when to try again
    show_busy_on(request, page, code=code)
    ident, trace = await traces.find_or_run(code, requester)
    context = await traces.page(ident, requester, trace=trace)
    shown = context["trace"] or {}
    unreadable = _unreadable(shown)
    if unreadable is not None:
        # nothing ran: no player, no link to share, and the editor stays open at the spot
        context = {"code": code, "problem": unreadable, "problem_span": shown["outcome"]["span"]}
        return render_page(request, page, context, 422)
    headers = {"HX-Push-Url": f"/t/{ident}"} if hx_request else None
    return render_page(request, page, context, headers=headers)


@router.post("/live", response_class=HTMLResponse)
async def live(
    request: Request,
    settings: SettingsDep,
    traces: TracesDep,
    requester: RequesterDep,
    code: Annotated[str | UploadFile, Form()] = "",
):
    """A live run, as the learner types (static/live.js): the result partial, as `/run`
    answers it, for a run that is not stored (Traces.run_live). `X-Trace-Id` is the id it
    will have once kept (`/live/keep`), `X-Trace-Stored` whether it already is."""
    page = "_result.html"
    refused = _refused(code, settings.sandbox.max_source_bytes)
    if refused is not None:
        status, problem = refused
        return render_page(request, page, {"code": "", "problem": problem}, status)
    show_busy_on(request, page, code=code)
    started = time.perf_counter()
    ident, trace = await traces.run_live(code, requester)
    ran = time.perf_counter()
    context = await traces.page(ident, requester, trace=trace)
    drawn = time.perf_counter()
    # each edit is a different snippet: nothing here is worth a cache's room; where the time
    # went is said for bench/live.py (the browser's Resource Timing reads Server-Timing)
    headers = {"Cache-Control": "no-store", "X-Trace-Id": ident}
    headers["Server-Timing"] = (
        f"run;dur={(ran - started) * 1000:.1f}, draw;dur={(drawn - ran) * 1000:.1f}"
    )
    headers["X-Trace-Stored"] = "1" if trace is None else "0"
    unreadable = _unreadable(context["trace"] or {})
    if unreadable is not None:
        span = context["trace"]["outcome"]["span"]
        context = {"code": code, "problem": unreadable, "problem_span": span}
        return render_page(request, page, context, 422, headers=headers)
    return render_page(request, page, context, headers=headers)


@router.post("/live/keep")
async def keep_live(
    settings: SettingsDep,
    traces: TracesDep,
    requester: RequesterDep,
    code: Annotated[str | UploadFile, Form()] = "",
) -> JSONResponse:
    """Store the snippet of the live run shown, as Run would (its quota applies): before the
    learner shares it or quizzes on it, and when they leave its page (a beacon)."""
    refused = _refused(code, settings.sandbox.max_source_bytes)
    if refused is not None:
        status, problem = refused
        return JSONResponse({"detail": problem}, status_code=status)
    ident, stored = await traces.keep_live(code, requester)
    answer = {"id": ident, "url": f"/t/{ident}", "stored": stored}
    return JSONResponse(answer, status_code=200 if stored else 503)


def _refused(code: str | UploadFile, limit: int) -> tuple[int, str] | None:
    """Why a posted snippet cannot be run at all (its status and the words for it), or None."""
    if not isinstance(code, str):  # a multipart post may send a file in its place
        return 422, "The snippet is sent as text, not as a file."
    try:
        size = len(code.encode("utf-8"))
    except UnicodeEncodeError:
        return 400, "The snippet is not valid text."
    if size > limit:
        return 413, f"The snippet is longer than {limit:,} bytes."
    return None


def _unreadable(shown: dict) -> str | None:
    """What to say of a snippet Python could not read (so none of it ran), or None. `shown` is
    what its page shows of its trace (app.render.page.shown_trace)."""
    outcome = shown.get("outcome") or {}
    if outcome.get("type") not in ("SyntaxError", "IndentationError") or shown["event_count"] > 1:
        return None
    line, column = (outcome.get("span") or [None, None])[:2]
    where = f"Line {line}, column {column + 1}: " if line is not None else ""
    return (
        f"{where}{outcome['type']}: {outcome['message']}. Python could not read the snippet, so "
        "none of it ran: fix it in the editor, whose cursor is at the spot."
    )


@router.get("/t/{ident}", response_class=HTMLResponse)
async def show(
    request: Request,
    ident: str,
    traces: TracesDep,
    requester: RequesterDep,
    version: PageVersion,
    expand: str = "",
    hx_request: Annotated[str | None, Header()] = None,
):
    """A stored trace; `?expand=g1,m2` draws stack g1 of a big graph member by member and opens
    module m2's boxes (openings the trace does not have are dropped).
    Revalidated on every use, against a tag naming all it is drawn from."""
    page = "_result.html" if hx_request else "index.html"
    show_busy_on(request, page, code="")  # a live run's address may be run and stored now
    if await traces.visit_or_keep(ident, requester) is None:
        return render_page(request, "missing.html", {"ident": ident}, 404)
    if await traces.outdated(ident):
        code = await traces.code_of(ident)
        if code is None:
            return render_page(request, "missing.html", {"ident": ident}, 404)
        return await _run_again(request, page, code, traces, requester)
    opened = _OPENABLE.findall(expand)[:MAX_EXPANDED]
    asked = ",".join(sorted(set(opened)))
    # htmx asks the same URL for the partial: caches must keep the two apart
    caching = {"Cache-Control": REVALIDATE, "Vary": "HX-Request"}
    known = traces.known_digest(ident)
    if known is not None and matches(
        request, tag := entity_tag("page", known, asked, page, version)
    ):
        return not_modified(tag, caching)
    show_busy_on(request, page, code="")
    context = await traces.page(ident, requester, opened)
    shown = context.get("opened", ())
    if set(shown) != set(opened):
        # some of the stacks or modules asked for are not the trace's: its page is the one
        # with those it has, at its own address (a flood of made-up ones costs no page each)
        kept = f"?expand={','.join(shown)}" if shown else ""
        return RedirectResponse(f"/t/{ident}{kept}", status_code=307)
    tag = entity_tag("page", context["digest"] or "", asked, page, version)
    if matches(request, tag):
        return not_modified(tag, caching)
    # oEmbed discovery, for consumers that read headers and not the page's <link>
    code = (context["trace"] or {}).get("code") or ""
    found_by = sharing.discovery_header(sharing.origin(request), ident, sharing.title(code))
    headers = {"ETag": tag, **caching, "Link": found_by}
    return render_page(request, page, context, headers=headers)


async def _run_again(request: Request, page: str, code: str, traces, requester):
    """An old link's snippet, run by today's engine: its page at its new address, or, for a run
    that is not stored (the server's fault), the result here."""
    show_busy_on(request, page, code=code)
    ident, trace, stored = await traces.run_again(code, requester)
    if stored:
        return RedirectResponse(f"/t/{ident}", status_code=307)
    context = await traces.page(ident, requester, trace=trace)
    return render_page(request, page, {**context, "trace": trace})


def render_page(request: Request, name: str, context: dict, status_code: int = 200, headers=None):
    """A template with what every page's context holds (the examples, no problem, no trace).
    Not a route: the pages', the lessons' and the busy answer's one way to draw a template,
    with the app's templates (app/templating.py)."""
    context = {"examples": EXAMPLES, "chosen": None, "problem": None, "trace": None, **context}
    if context["trace"] and context.get("ident") and not context["problem"]:
        context["share"] = sharing.dialog(request, context["ident"], context["trace"]["code"])
    return request.app.state.templates.TemplateResponse(
        request, name, context, status_code=status_code, headers=headers
    )
