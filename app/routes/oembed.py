"""`GET /oembed?url=...`: what a blog, a forum or a slide tool needs to embed a trace it was
given a link to (oEmbed 1.0, https://oembed.com): a `rich` answer whose `html` is the iframe
of `/embed/{id}`.

The URL must be this site's (the request's own host, or one of settings.allowed_hosts), name
`/t/{id}` or `/embed/{id}` of a stored trace, and may carry a step (`?step=3` or `#step=3`) and,
for an embed, its other options; those are checked as the embed page checks them and carried
into the iframe's address. As the spec asks: no URL or a bad size is a 400, a URL that is not
one of ours or not a trace a 404, any format but JSON a 501. Every answer says `public`, so
name_the_client (app/main.py) sets no cookie on it: consumers fetch this server to server, and
caches may share it.
"""

from __future__ import annotations

import json
import math
import re
from urllib.parse import parse_qsl, urlencode, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.datastructures import QueryParams

from app import sharing
from app.dependencies import SettingsDep, TracesDep
from app.export.options import BadOption
from app.export.raster import THUMBNAIL_SIZE
from app.routes.embed import EmbedOptions

router = APIRouter()

# a trace never changes under its id (the id is its code's digest), but it may be evicted
CACHE_AGE = 24 * 3600
ANSWER_CACHING = f"public, max-age={CACHE_AGE}"
REFUSAL_CACHING = "public, max-age=60"
_TRACE_PATH = re.compile(r"/(t|embed)/([a-z2-7]{16})/?")
_SIZE = re.compile(r"[1-9][0-9]{0,8}")
# the embed's options an oEmbed URL may carry into the iframe it answers with
CARRIED = ("step", "autoplay", "loop", "speed", "view", "theme", "controls", "code", "from", "to")


class Refusal(Exception):
    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message


@router.get("/oembed")
async def oembed(request: Request, settings: SettingsDep, traces: TracesDep) -> Response:
    try:
        answer = await _answer(request, settings.allowed_hosts, traces)
    except Refusal as refusal:
        body = json.dumps({"detail": refusal.message})
        headers = {"Cache-Control": REFUSAL_CACHING}
        return Response(body, refusal.status_code, headers, media_type="application/json")
    # ASCII escapes: a stored trace's words may hold anything (a lone surrogate, say)
    body = json.dumps(answer, ensure_ascii=True)
    headers = {"Cache-Control": ANSWER_CACHING}
    return Response(body, 200, headers, media_type="application/json")


async def _answer(request: Request, allowed_hosts, traces) -> dict:
    query = request.query_params
    if (query.get("format") or "json") != "json":
        raise Refusal(501, "Only format=json is served.")
    url = query.get("url")
    if not url:
        raise Refusal(400, "Give the trace's address: /oembed?url=https://…/t/ID")
    max_width = _size(query, "maxwidth")
    max_height = _size(query, "maxheight")
    ident, options = _trace_of(request, url, allowed_hosts)
    code = await traces.code_of(ident)
    if code is None:
        raise Refusal(404, f"No trace has the id {ident}.")
    site = sharing.origin(request)
    title = sharing.title(code)
    width, height = _fitted(sharing.EMBED_SIZE, max_width, max_height)
    src = f"{site}/embed/{ident}" + (f"?{urlencode(options)}" if options else "")
    answer = {
        "version": "1.0",
        "type": "rich",
        "provider_name": "gradtrace",
        "provider_url": f"{site}/",
        "title": title,
        "html": sharing.iframe(src, title, width, height),
        "width": width,
        "height": height,
        "cache_age": CACHE_AGE,
    }
    # the spec: a thumbnail must respect maxwidth and maxheight; ours has one size
    thumb_width, thumb_height = THUMBNAIL_SIZE
    if thumb_width <= (max_width or thumb_width) and thumb_height <= (max_height or thumb_height):
        step = f"?step={options['step']}" if "step" in options else ""
        answer["thumbnail_url"] = f"{site}/t/{ident}.png{step}"
        answer["thumbnail_width"] = thumb_width
        answer["thumbnail_height"] = thumb_height
    return answer


def _size(query: QueryParams, name: str) -> int | None:
    value = query.get(name)
    if value is None or value == "":
        return None
    if not _SIZE.fullmatch(value):
        raise Refusal(400, f"{name}={value!r} is not a size: give a whole number of pixels.")
    return int(value)


def _trace_of(request: Request, url: str, allowed_hosts) -> tuple[str, dict[str, str]]:
    """The trace id a URL of this site names, and the embed options it carries."""
    try:
        parts = urlsplit(url)
        host, _port = parts.hostname, parts.port  # reading a bad port raises
    except ValueError:
        raise Refusal(404, "That is not an address of a trace here.") from None
    ours = parts.scheme in ("http", "https") and not parts.username and host is not None
    if not ours or not _our_host(request, host, parts.netloc, allowed_hosts):
        raise Refusal(404, "That is not an address of this site.")
    found = _TRACE_PATH.fullmatch(parts.path)
    if found is None:
        raise Refusal(404, "That address is not a trace's: give /t/ID or /embed/ID.")
    given = dict(parse_qsl(parts.query))
    # a page's own step is in its fragment (#step=3): the player opens there
    given.update((k, v) for k, v in parse_qsl(parts.fragment) if k == "step")
    if found.group(1) == "t":
        given = {k: v for k, v in given.items() if k == "step"}
    carried = {name: given[name] for name in CARRIED if given.get(name)}
    try:
        EmbedOptions.parse(QueryParams(carried))
    except BadOption as bad:
        raise Refusal(400, str(bad)) from None
    return found.group(2), carried


def _our_host(request: Request, host: str, netloc: str, allowed_hosts) -> bool:
    """Whether a URL's host is this site: the request's own, or a name it answers to (any
    port). A wildcard in allowed_hosts cannot tell ours from anyone's, so only names count."""
    if netloc.lower() == request.url.netloc.lower():
        return True
    names = {name.lower().strip("[]") for name in allowed_hosts if "*" not in name}
    return host.lower() in names


def _fitted(size: tuple[int, int], max_width: int | None, max_height: int | None):
    """`size` scaled down, keeping its ratio, to fit within the maxima given."""
    width, height = size
    scale = min(1, (max_width or width) / width, (max_height or height) / height)
    return max(1, math.floor(width * scale)), max(1, math.floor(height * scale))
