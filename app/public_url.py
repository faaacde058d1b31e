"""This site's own absolute URLs, as a visitor reaches it: what goes into a snippet someone
pastes elsewhere (an iframe's src, an oEmbed answer, an exported file's link back).

The host is the request's Host, which TrustedHostMiddleware has checked against
Settings.allowed_hosts; the scheme is the client's (a trusted proxy that ends TLS says https).
"""

from __future__ import annotations

from starlette.requests import Request

from app.client_address import client_scheme


def public_url(request: Request, path: str) -> str:
    """`path` (starting with /) on this site, as an absolute URL."""
    settings = request.app.state.settings
    peer = request.client.host if request.client else None
    proto = request.headers.get("x-forwarded-proto")
    scheme = client_scheme(peer, proto, request.url.scheme, settings.trusted_proxies)
    host = request.headers.get("host") or request.url.netloc
    return f"{scheme}://{host}{path}"
