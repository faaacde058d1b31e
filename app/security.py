"""Headers every answer carries, 500s included, and a guard against cross-site posts.

The headers are chosen in one place, `headers_for(path)`, used by the middleware and by the 500
handler: Starlette answers an unhandled exception from ServerErrorMiddleware, which sits outside
every user middleware, so a 500 would otherwise go out without them. No page may be framed by
another site (clickjacking), except the embeds under /embed/, which exist to be framed.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.client_address import Network, client_scheme

# style-src 'self' holds for the code editor too: CodeMirror's styles go into a constructed
# stylesheet of the editor's shadow root (static/editor.js), not into <style> elements
_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; "
)
CSP = _POLICY + "frame-ancestors 'none'"
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
# an embed only reads (a trace is public to anyone with its link), so any page may frame it;
# without X-Frame-Options, which has no way to say "anyone". `*` matches only network schemes:
# `file:` lets a slide deck opened from a local file frame it too
FRAMEABLE_PREFIX = "/embed/"
EMBED_HEADERS = {
    **{name: value for name, value in SECURITY_HEADERS.items() if name != "X-Frame-Options"},
    "Content-Security-Policy": _POLICY + "frame-ancestors * file:",
}


def frameable(path: str) -> bool:
    """Whether the answer at `path` is an embed, meant to be framed by other sites."""
    return path.startswith(FRAMEABLE_PREFIX)


def headers_for(path: str) -> dict[str, str]:
    """The security headers of the answer at `path`."""
    return EMBED_HEADERS if frameable(path) else SECURITY_HEADERS


DEFAULT_PORTS = {"http": 80, "https": 443}


class SecurityHeaders:
    """Adds the security headers (`headers_for` its path) to every answer that does not set its
    own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in headers_for(scope["path"]).items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def internal_error(request: Request, error: Exception) -> PlainTextResponse:
    """The 500 answer: the headers, and nothing of the exception (the server logs it)."""
    headers = headers_for(request.url.path)
    return PlainTextResponse("Internal Server Error", status_code=500, headers=headers)


class CrossSiteGuard:
    """Refuses a request that may change something (not GET, HEAD or OPTIONS) unless it comes
    from this very origin: another site's page must not make a visitor's browser run code here.
    Requests without an Origin (curl, scripts) pass unless the browser says they are cross-site."""

    def __init__(self, app: ASGIApp, trusted_proxies: Sequence[Network] = ()) -> None:
        self.app = app
        self.trusted_proxies = trusted_proxies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        changes = scope["type"] == "http" and scope["method"] not in ("GET", "HEAD", "OPTIONS")
        if changes and self._cross_site(scope):
            refusal = PlainTextResponse("cross-site requests are refused", status_code=403)
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _cross_site(self, scope: Scope) -> bool:
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is None:
            return headers.get("sec-fetch-site") in ("cross-site", "same-site")
        peer = scope["client"][0] if scope.get("client") else None
        scheme = client_scheme(
            peer, headers.get("x-forwarded-proto"), scope["scheme"], self.trusted_proxies
        )
        own = _origin(f"{scheme}://{headers.get('host', '')}")
        # "null" (sandboxed frames, some redirects) and anything unparsable never match
        return own is None or _origin(origin) != own


def _origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin, the port filled in from the scheme, or None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname, port or DEFAULT_PORTS[parts.scheme]
