"""Every request watched: given its id, counted and timed for /metrics, and logged in one line.

Outside every other middleware, so that every answer (a refused Host, a 429, a 304) is counted
and carries X-Request-ID. Requests are labelled by their route's template (`/t/{ident}`), never
their path, which would make a metric of every trace id; a path no route answers is
`unmatched`. The route is only known once the router has run, deep inside: `NoteRoute`, the
innermost middleware, writes it on a note this one put in the scope, which every middleware's
copy of the scope shares.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import request_ids
from app.client_address import Network, client_address
from app.metrics import Metrics

log = logging.getLogger("gradtrace.http")

_NOTE = "gradtrace.watch"
UNMATCHED = "unmatched"
GONE = 499  # the client hung up before its answer (nginx's name for it)
# /metrics labels by method: a client may send any token as one, and each new label value is a
# series kept for good, so the others count as one
METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))
OTHER_METHOD = "other"


class _Note:
    __slots__ = ("route",)

    def __init__(self) -> None:
        self.route = UNMATCHED


class WatchRequests:
    def __init__(
        self, app: ASGIApp, metrics: Metrics, trusted_proxies: Sequence[Network] = ()
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.trusted_proxies = trusted_proxies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        peer = scope["client"][0] if scope.get("client") else None
        sent = _header(scope, b"x-request-id")
        ident = request_ids.request_id(peer, sent, self.trusted_proxies)
        # left set: the 500 answer, made outside every middleware, is logged under it too (each
        # request is a task of its own, so it goes no further)
        request_ids.current.set(ident)
        note = scope[_NOTE] = _Note()
        status = 500  # unless an answer starts
        echoed = (b"x-request-id", ident.encode("latin-1"))

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {**message, "headers": [*message.get("headers", ()), echoed]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except asyncio.CancelledError:
            status = GONE
            raise
        finally:
            seconds = time.perf_counter() - start
            method = scope["method"]
            forwarded = [
                value.decode("latin-1")
                for key, value in scope["headers"]
                if key == b"x-forwarded-for"
            ]
            counted = method if method in METHODS else OTHER_METHOD
            self.metrics.http_requests.labels(counted, note.route, str(status)).inc()
            self.metrics.http_seconds.labels(counted, note.route).observe(seconds)
            log.info(
                "%s %s %d",
                method,
                scope["path"],
                status,
                extra={
                    "method": method,
                    "route": note.route,
                    "status": status,
                    "duration_ms": round(seconds * 1000, 1),
                    "client": client_address(peer, forwarded, self.trusted_proxies),
                },
            )


class NoteRoute:
    """Innermost: once the router has matched (or not), notes the route's template."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        finally:
            note = scope.get(_NOTE)
            route = scope.get("route")
            if note is not None and route is not None:
                note.route = getattr(route, "path", UNMATCHED)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None
