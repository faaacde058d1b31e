"""The playground's pages. htmx requests get the partial, plain requests the whole page.

`/` is the editor with an example loaded; `POST /run` runs the snippet (through the sandbox and
the store) and answers the player; `/t/{id}` shows a stored trace, `#step=N` opening at step N.
"""

from __future__ import annotations

import json
import re
from typing import Annotated

from fastapi import APIRouter, Form, Header, Request
from fastapi.responses import HTMLResponse

from app.examples import BY_SLUG, DEFAULT, EXAMPLES
from app.render import render
from app.render.inspector import facts
from app.render.playback import still
from app.sandbox import SandboxBusy
from app.service import OverQuota

router = APIRouter()

_ELEMENT_ID = re.compile(r'<g id="([^"]+)"')
_STACK_ID = re.compile(r"\bg\d{1,6}\b")


@router.get("/", response_class=HTMLResponse)
def index(request: Request, example: str | None = None):
    chosen = BY_SLUG.get(example or "", DEFAULT)
    return _page(request, "index.html", {"code": chosen.code, "chosen": chosen.slug})


@router.post("/run", response_class=HTMLResponse)
async def run(
    request: Request,
    code: Annotated[str, Form()] = "",
    hx_request: Annotated[str | None, Header()] = None,
):
    page = "_result.html" if hx_request else "index.html"
    limit = request.app.state.settings.max_source_bytes
    try:
        code.encode("utf-8")
    except UnicodeEncodeError:
        return _page(request, page, {"code": "", "problem": "The snippet is not valid text."}, 400)
    if len(code.encode("utf-8")) > limit:
        problem = f"The snippet is longer than {limit:,} bytes."
        return _page(request, page, {"code": code, "problem": problem}, 413)
    try:
        ident, trace = await request.app.state.traces.find_or_run(code, request.state.requester)
    except (SandboxBusy, OverQuota) as busy:
        return _page(request, page, {"code": code, "problem": busy.message}, busy.status_code,
                     headers={"Retry-After": str(busy.retry_after)})
    headers = {"HX-Push-Url": f"/t/{ident}"} if hx_request else None
    return _page(request, page, _player(code, ident, trace), headers=headers)


@router.get("/t/{ident}", response_class=HTMLResponse)
def show(
    request: Request,
    ident: str,
    expand: str = "",
    hx_request: Annotated[str | None, Header()] = None,
):
    """A stored trace; `?expand=g1,g2` draws those stacks of a big graph member by member."""
    text = request.app.state.traces.fetch_json(ident)
    if text is None:
        return _page(request, "missing.html", {"ident": ident}, 404)
    trace = json.loads(text)
    page = "_result.html" if hx_request else "index.html"
    stacks = _STACK_ID.findall(expand)
    return _page(request, page, _player(trace["code"], ident, trace, stacks))


def _player(code: str, ident: str, trace: dict, expand: list[str] = ()) -> dict:
    """Everything the player partial needs: the drawn views, the steps, and the final stills."""
    rendered = render(trace, expand=expand)
    last = max(len(rendered["steps"]) - 1, 0)
    views = rendered["views"]
    element_ids = [i for view in views.values() for i in _ELEMENT_ID.findall(view["svg"])]
    return {
        "code": code,
        "ident": ident,
        "trace": trace,
        "rendered": rendered,
        "finals": {name: still(rendered, name, last, standalone=False) for name in views},
        "player_data": {
            "steps": rendered["steps"],
            "views": {name: {"nodes": view["nodes"]} for name, view in views.items()},
            "inspect": facts(trace, element_ids),
        },
        "lines": code.splitlines(),
    }


def _page(request: Request, name: str, context: dict, status_code: int = 200, headers=None):
    context = {"examples": EXAMPLES, "chosen": None, "problem": None, "trace": None, **context}
    return request.app.state.templates.TemplateResponse(
        request, name, context, status_code=status_code, headers=headers
    )
