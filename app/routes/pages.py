"""The page where a snippet is typed and run. htmx requests get the partial, others the page."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Header, Request
from fastapi.responses import HTMLResponse

from app.execution import run_snippet_async
from app.sandbox import SandboxBusy

router = APIRouter()

MAX_SOURCE_BYTES = 20_000

SEED_EXAMPLE = """import torch

a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
c = a * b
d = c + a
d.backward()
print(a.grad.item(), b.grad.item())
"""


@router.get("/", response_class=HTMLResponse)
def index(request: Request):
    return _render(request, "index.html", {"code": SEED_EXAMPLE, "trace": None})


@router.post("/run", response_class=HTMLResponse)
async def run(
    request: Request,
    code: Annotated[str, Form()] = "",
    hx_request: Annotated[str | None, Header()] = None,
):
    page = "_result.html" if hx_request else "index.html"
    if len(code.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES:
        context = {"code": code, "trace": None,
                   "problem": f"The snippet is longer than {MAX_SOURCE_BYTES:,} bytes."}
        return _render(request, page, context, 413)
    try:
        trace = await run_snippet_async(code)
    except SandboxBusy as busy:
        context = {"code": code, "trace": None, "problem": busy.message}
        return _render(request, page, context, busy.status_code,
                       headers={"Retry-After": str(busy.retry_after)})
    context = {"code": code, "trace": trace}
    return _render(request, page, context)


def _render(
    request: Request, name: str, context: dict, status_code: int = 200, headers=None
):
    templates = request.app.state.templates
    return templates.TemplateResponse(
        request, name, context, status_code=status_code, headers=headers
    )
