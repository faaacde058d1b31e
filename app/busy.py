"""No room now: the one family of refusals that say "try again in N seconds".

A run the sandbox has no place for (SandboxBusy), a client over its storage quota (OverQuota),
a render pool with a full queue (RenderBusy) and a client whose share of it is taken (ShareUsed)
are all answered alike: a status code, Retry-After, and a sentence. So they share this base
class, and one exception handler (app/routes/busy.py) answers every one of them: routes only
say, before starting, which page a refusal is shown on (`show_busy_on`); with none named the
answer is JSON, as the API's is.

This module imports nothing but the standard library: the sandbox's zygote imports the sandbox
package, whose SandboxBusy is one of these, and every child inherits what the zygote holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.requests import Request


class Busy(Exception):
    """No room for this request now: answered `status_code` with Retry-After `retry_after`
    (seconds), saying `message`. `reason` names the kind in /metrics."""

    status_code: int = 503
    retry_after: int = 1
    message: str = "The server is busy; try again shortly."
    reason: str = "busy"


# request.state's key for the page a refusal is shown on: request.state lives in the request's
# scope, so the exception handler sees what the route said
_PAGE = "busy_page"
PLAIN_TEXT = "text/plain"


def show_busy_on(request: Request, template: str, **context: Any) -> None:
    """If this request is refused as busy, answer it with `template` (given `context`, and the
    refusal's `problem` and `retry_after`), or with PLAIN_TEXT."""
    setattr(request.state, _PAGE, (template, context))


def busy_page(request: Request) -> tuple[str, dict] | None:
    """What `show_busy_on` said for this request, if anything."""
    return getattr(request.state, _PAGE, None)
