"""`/embed/{id}`: a stored trace's player alone, for other sites to frame (slides, course pages).

The query string chooses how it plays (docs/embedding.md): `step`, `autoplay`, `loop`, `speed`,
`view`, `theme`, `controls`, `code`, and `from`/`to`, a range of steps the player never leaves.
Each option is checked here and written on the page for static/player.js to read; a bad one is
a 422 page that says which option and what to give instead. Only these pages may be framed
(app/security.py), and they never set a cookie (app/main.py): framed by another site they are
third-party, and they only read.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from app.busy import show_busy_on
from app.dependencies import PageVersion, RequesterDep, TracesDep
from app.export.options import THEMES, VIEWS, BadOption, StepRange, choice
from app.http_cache import REVALIDATE, entity_tag, matches, not_modified
from app.routes.pages import render_page

router = APIRouter()

# the first of each is what an option left out means
YES_NO = ("0", "1", "false", "true")
SPEEDS = ("1", "0.5", "2", "4")  # the speeds the player's own menu offers
CONTROLS = ("full", "minimal", "none")
CODE = ("show", "hide")


@dataclass(frozen=True)
class EmbedOptions:
    """The choices of an embed's query string that need no trace to check."""

    autoplay: bool
    loop: bool
    speed: str
    view: str
    theme: str
    controls: str
    code: str
    step: int | None
    first: int | None
    last: int | None

    @classmethod
    def parse(cls, query) -> EmbedOptions:
        """The options in `query` (Starlette's QueryParams); raises BadOption. Parameters of
        other names are left alone: a host may add its own, a cache-buster say."""
        return cls(
            autoplay=choice("autoplay", query.get("autoplay"), YES_NO) in ("1", "true"),
            loop=choice("loop", query.get("loop"), YES_NO) in ("1", "true"),
            speed=choice("speed", query.get("speed"), SPEEDS),
            view=choice("view", query.get("view"), VIEWS),
            theme=choice("theme", query.get("theme"), THEMES),
            controls=choice("controls", query.get("controls"), CONTROLS),
            code=choice("code", query.get("code"), CODE),
            step=_step_number("step", query.get("step")),
            first=_step_number("from", query.get("from")),
            last=_step_number("to", query.get("to")),
        )

    def steps(self, total: int) -> tuple[StepRange, int]:
        """The range shown of a trace of `total` steps, and the step it opens at (1-based)."""
        shown = StepRange.of(total, self.first, self.last)
        start = shown.first if self.step is None else self.step
        if not shown.first <= start <= shown.last:
            raise BadOption(
                f"step={start} is outside the steps shown: give one from {shown.first} "
                f"to {shown.last}."
            )
        return shown, start


def _step_number(name: str, value: str | None) -> int | None:
    if value is None or value == "":
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 9:
        raise BadOption(f"{name}={value!r} is not a step number: give a whole number, like 3.")
    return int(value)


@router.get("/embed/{ident}", response_class=HTMLResponse)
async def embed(
    request: Request, ident: str, traces: TracesDep, requester: RequesterDep, version: PageVersion
):
    try:
        options = EmbedOptions.parse(request.query_params)
    except BadOption as bad:
        return _bad_option(request, ident, bad)
    # nothing could be drawn now: the embed says why, and when to try again
    show_busy_on(request, "embed.html", ident=ident, embed=None)
    if await traces.visit(ident, requester) is None:
        return render_page(request, "missing.html", {"ident": ident}, 404)
    if await traces.outdated(ident):
        code = await traces.code_of(ident)
        if code is None:
            return render_page(request, "missing.html", {"ident": ident}, 404)
        return await _run_again(request, code, options, traces, requester)
    # the query string's every byte makes a different page, so it is named in the tag whole
    query = str(request.query_params)
    caching = {"Cache-Control": REVALIDATE}
    known = traces.known_digest(ident)
    if known is not None and matches(request, tag := entity_tag("embed", known, query, version)):
        return not_modified(tag, caching)
    context = await traces.page(ident, requester)
    tag = entity_tag("embed", context["digest"] or "", query, version)
    if matches(request, tag):
        return not_modified(tag, caching)
    return _page(request, context, options, {"ETag": tag, **caching})


async def _run_again(request: Request, code: str, options: EmbedOptions, traces, requester):
    """An old link's snippet, run by today's engine (as pages.show does): its embed at its new
    address with the same options, or, for a run that is not stored, the embed right here."""
    show_busy_on(request, "embed.html", ident="", embed=None)
    ident, trace, stored = await traces.run_again(code, requester)
    if stored:
        query = f"?{request.url.query}" if request.url.query else ""
        return RedirectResponse(f"/embed/{ident}{query}", status_code=307)
    show_busy_on(request, "embed.html", ident=ident, embed=None)
    context = await traces.page(ident, requester, trace=trace)
    return _page(request, context, options)


def _page(request: Request, context: dict, options: EmbedOptions, headers=None):
    """The embed of a drawn trace (or of its steps in words, when it was too large to draw)."""
    if "rendered" in context:
        total = context["rendered"]["step_count"]
    else:
        total = len(context["undrawn"]["steps"])
    try:
        shown, start = options.steps(total) if total else (None, None)
    except BadOption as bad:
        return _bad_option(request, context["ident"], bad)
    # what static/player.js reads; the embed's step is its query string's, never its URL's hash
    player = {
        "data-hash": "off",
        "data-speed": options.speed,
        "data-view": options.view,
        "data-controls": options.controls,
    }
    if shown is not None:
        player |= {"data-start": start, "data-from": shown.first, "data-to": shown.last}
    player |= {f"data-{name}": "true" for name in ("autoplay", "loop") if getattr(options, name)}
    embed = {**asdict(options), "start": start or 1}
    context = {**context, "embed": embed, "player_attributes": player}
    return render_page(request, "embed.html", context, headers=headers)


def _bad_option(request: Request, ident: str, bad: BadOption):
    context = {"ident": ident, "embed": None, "problem": str(bad)}
    return render_page(request, "embed.html", context, 422)
