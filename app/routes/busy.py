"""How every refusal for want of room is answered (app/busy.py): one exception handler.

The status code, Retry-After and the sentence come from the refusal; the form of the answer
from the route: the page it named with `show_busy_on` (the editor again with the code, the
embed, the lesson's busy page), plain text for the file exports, and JSON otherwise (the API).
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from app.busy import PLAIN_TEXT, Busy, busy_page, show_busy_on
from app.routes.pages import render_page


def shown_as(template: str, **context):
    """A FastAPI dependency for a whole router: its refusals are shown on `template`."""

    async def declare(request: Request) -> None:  # async: FastAPI runs a plain one on a thread
        show_busy_on(request, template, **context)

    return declare


async def answer_busy(request: Request, refusal: Busy) -> Response:
    metrics = getattr(request.app.state, "metrics", None)
    if metrics is not None:
        metrics.busy_answers.labels(refusal.reason).inc()
    headers = {"Retry-After": str(refusal.retry_after)}
    page = busy_page(request)
    if page is None:
        return JSONResponse(
            {"detail": refusal.message}, status_code=refusal.status_code, headers=headers
        )
    template, context = page
    if template == PLAIN_TEXT:
        return PlainTextResponse(refusal.message, refusal.status_code, headers)
    context = {**context, "problem": refusal.message, "retry_after": refusal.retry_after}
    return render_page(request, template, context, refusal.status_code, headers)
