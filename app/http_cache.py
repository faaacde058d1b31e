"""Caching: entity tags, 304s, Cache-Control, and tags that stay strong under compression.

A stored trace's JSON never changes once stored, so `/api/traces/{id}` is cached for good
(IMMUTABLE). A page also depends on the templates and the drawing code, which change when the
app does, so it is revalidated on every use (REVALIDATE) against a tag that names all of them;
a 304 then costs a store read and no render. See docs/caching.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"  # store, but ask every time (a 304 is cheap)
STATIC = "public, no-cache"  # our files' URLs carry no version: always revalidated
GZIP_SUFFIX = "-gzip"


def entity_tag(*parts: str) -> str:
    """A strong tag naming `parts` (bytes served, or everything a page is drawn from)."""
    digest = hashlib.blake2b("\0".join(parts).encode("utf-8", "surrogatepass"), digest_size=16)
    return f'"{digest.hexdigest()}"'


def fingerprint(paths: Iterable[Path]) -> str:
    """What a set of files holds, as one digest: a page's tag changes when its templates or
    drawing code do, even if nobody bumped a version number."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(paths):
        digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def matches(request: Request, tag: str) -> bool:
    """Whether If-None-Match names `tag` (weak comparison, as RFC 9110 asks for it)."""
    header = request.headers.get("if-none-match")
    if not header:
        return False
    if header.strip() == "*":
        return True
    return any(t.strip().removeprefix("W/") == tag for t in header.split(","))


def not_modified(tag: str, headers: dict[str, str]) -> Response:
    """The 304: no body, and the headers a 200 would have given that describe the cache (its
    Vary too: compression adds Accept-Encoding to a 200, never to an empty 304)."""
    vary = ", ".join(filter(None, (headers.get("Vary"), "Accept-Encoding")))
    return Response(status_code=304, headers={"ETag": tag, **headers, "Vary": vary})


class CachedStaticFiles(StaticFiles):
    """Starlette's StaticFiles (ETag, Last-Modified, 304s) with a Cache-Control that makes
    browsers revalidate: without it they guess a freshness and may run an old player.js."""

    def file_response(self, *args, **kwargs) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = STATIC
        if response.status_code == 304:
            response.headers["Vary"] = "Accept-Encoding"  # as its 200 has, from compression
        return response


class EncodedTags:
    """Keeps entity tags strong under compression (goes outside GZipMiddleware).

    A strong tag names exact bytes, and gzip changes them while GZipMiddleware keeps the tag.
    So a compressed answer's tag gets "-gzip" (`"abc"` → `"abc-gzip"`), and a tag a client sends
    back with it is read without it, so that the routes and StaticFiles, which know only the
    plain tag, still answer 304."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = Headers(scope=scope).get("if-none-match", "")
        asked_encoded = f'{GZIP_SUFFIX}"' in sent
        if asked_encoded:
            plain = sent.replace(f'{GZIP_SUFFIX}"', '"')
            raw = [(k, v) for k, v in scope["headers"] if k != b"if-none-match"]
            scope = {**scope, "headers": [*raw, (b"if-none-match", plain.encode("latin-1"))]}

        async def send_tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                tag = headers.get("etag", "")
                encoded = headers.get("content-encoding") == "gzip"
                # a 304 describes the copy the client holds: the compressed one, if it sent that
                revalidated = message["status"] == 304 and asked_encoded
                if tag.startswith('"') and (encoded or revalidated):
                    headers["etag"] = f'{tag[:-1]}{GZIP_SUFFIX}"'
            await send(message)

        await self.app(scope, receive, send_tagged)
