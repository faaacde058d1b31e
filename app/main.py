"""The web app: FastAPI routes over the engine's traces, rendered with Jinja2 and htmx.

`create_app()` builds it; importing this module opens nothing. uvicorn runs it as a factory:
`uvicorn --factory app.main:create_app` (what `gradtrace serve` does).
"""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.templating import Jinja2Templates
from starlette.middleware.gzip import GZipMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware

import engine
from app import execution, logs, sessions, templating
from app.body_limit import BodyLimit
from app.busy import Busy
from app.class_events import ClassEvents
from app.classes import ClassError, Classes
from app.client_address import client_address, client_scheme, limit_key
from app.config import MIB, Settings
from app.disconnect import CancelOnDisconnect
from app.files import APP, STATIC, TEMPLATES
from app.head import HeadAsGet
from app.health import Health
from app.http_cache import CachedStaticFiles, EncodedTags, fingerprint
from app.lessons.library import Shelf
from app.metrics import Metrics
from app.not_found import NotFoundThrottle
from app.page_cache import PageCache
from app.render import RENDER_VERSION
from app.render_pool import RenderPool
from app.request_watch import NoteRoute, WatchRequests
from app.routes import api, classes, embed, exports, lessons, oembed, pages, watching
from app.routes.busy import answer_busy
from app.routes.classes import answer_class_error
from app.sandbox import Requester
from app.security import CrossSiteGuard, SecurityHeaders, frameable, internal_error
from app.service import Traces
from app.store import open_store
from app.timed_store import TimedStore

log = logging.getLogger("gradtrace")


class WeakSandbox(RuntimeError):
    """A public server was asked for, and some sandbox layer does not hold on this machine."""


def create_app(
    settings: Settings | None = None, *, require_strong_sandbox: bool = False
) -> FastAPI:
    """The app. Its startup warms the sandbox and checks its layers; with
    `require_strong_sandbox` (what `gradtrace serve` asks for on a public address) it refuses
    to start unless every layer holds."""
    settings = settings or Settings.from_environment()
    logs.stamp_request_ids()  # whoever handles the log, its records name their request

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await asyncio.to_thread(execution.sandbox, settings.sandbox)  # the process's, if started
        report = await asyncio.to_thread(execution.layer_report)
        if not report["strong"]:
            weak = [
                name
                for name, layer in report["layers"].items()
                if layer["state"] not in ("active", "not-needed")
            ]
            if require_strong_sandbox:
                raise WeakSandbox(f"sandbox layers missing: {', '.join(weak)}")
            log.warning(
                "the sandbox is WEAK here (%s): keep this server to yourself", ", ".join(weak)
            )
        await app.state.render_pool.start()
        await asyncio.to_thread(app.state.classes.sweep)  # classes past their time: deleted
        app.state.class_events.end_streams_on_shutdown()
        yield
        await app.state.class_events.close()
        await app.state.render_pool.close()

    # /docs and /redoc would load Swagger UI from a CDN, which offline pages and the CSP rule
    # out; the API's description is served at /openapi.json
    app = FastAPI(
        title="gradtrace", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None
    )
    app.state.settings = settings
    app.state.metrics = metrics = Metrics()
    store = open_store(settings.store.database_url or settings.db_path, settings.store.limits())
    secret = sessions.secret_for(settings.session_secret, settings.data_dir, store)
    store.set_owner_key(secret.encode())
    app.state.store = TimedStore(store, metrics.store_seconds)
    app.state.sessions = sessions.Sessions(secret)
    app.state.classes = Classes(store, secret)
    app.state.class_events = ClassEvents(store.classes, store.url)
    standing = sessions.Standing(
        settings.limits.session_settle_seconds,
        settings.limits.earned_sessions_burst,
        settings.limits.earned_sessions_per_hour,
        ledger=store,  # in the store: every server sharing it counts the same sessions
    )
    app.state.render_pool = RenderPool(settings.render, observe=metrics.rendered)
    cache = PageCache(settings.page_cache_mib * MIB)
    app.state.traces = Traces(app.state.store, settings, app.state.render_pool, cache, metrics)
    metrics.watch(
        store=app.state.store,
        pool=app.state.render_pool,
        cache=cache,
        sandbox=execution.running_sandbox,
        class_events=app.state.class_events,
    )
    app.state.health = Health(app.state.store, app.state.render_pool)
    app.state.lessons = Shelf(settings.lessons_dir)
    app.state.templates = Jinja2Templates(env=templating.environment())
    # what a page is made from besides its trace: its /t/{id} tag names this (app/http_cache.py)
    app.state.page_version = "\0".join(
        (
            str(RENDER_VERSION),
            engine.__version__,
            fingerprint([*TEMPLATES.rglob("*.html"), *APP.rglob("*.py")]),
        )
    )
    # an export also holds the player's script and styles (the standalone HTML inlines them)
    static_files = [*STATIC.glob("*.js"), *STATIC.glob("*.css")]
    app.state.export_version = app.state.page_version + "\0" + fingerprint(static_files)
    # added innermost first: each add_middleware wraps what is there
    app.add_middleware(NoteRoute)  # the route's template, for WatchRequests
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.max_body_bytes,
        idle_seconds=settings.limits.body_idle_seconds,
        deadline_seconds=settings.limits.body_deadline_seconds,
    )
    app.add_middleware(CrossSiteGuard, trusted_proxies=settings.trusted_proxies)
    # answers over 1 KB compressed (level 6: nearly 9's size in a fraction of its time);
    # inside name_the_client, which streams what it passes on: compressed whole, an answer
    # keeps its Content-Length
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=6)
    # inside name_the_client, whose requester it counts by: a run of unknown traces is a 429
    app.add_middleware(NotFoundThrottle)
    app.mount("/static", CachedStaticFiles(directory=STATIC), name="static")
    # before the pages: `/t/{id}` would take `/t/{id}.png` for an id
    app.include_router(exports.router)
    app.include_router(pages.router)
    app.include_router(lessons.router)
    app.include_router(classes.router)
    app.include_router(api.router)
    app.include_router(embed.router)
    app.include_router(oembed.router)
    app.include_router(watching.router)

    @app.middleware("http")
    async def name_the_client(request: Request, call_next):
        # runs are queued fairly per session, and capped per address (app/sandbox/admission.py)
        peer = request.client.host if request.client else None
        forwarded_for = request.headers.getlist("x-forwarded-for")
        # every per-address limit counts an IPv6 client by its /64
        address = limit_key(client_address(peer, forwarded_for, settings.trusted_proxies))
        proto = request.headers.get("x-forwarded-proto")
        scheme = client_scheme(peer, proto, request.url.scheme, settings.trusted_proxies)
        known = app.state.sessions.session_of(request.cookies.get(sessions.COOKIE))
        # a session counts as its address until it has earned its place (app/sessions.py)
        own = known is not None and await standing.earned_without_blocking(address, *known)
        session = f"session:{known[0]}" if own else f"address:{address}"
        request.state.requester = Requester(session, address)
        response = await call_next(request)
        # an answer any cache may keep and hand to anyone must not carry someone's cookie
        shared = "public" in response.headers.get("cache-control", "")
        # nor an embed: it only reads, and framed by another site its cookie is third-party,
        # which browsers block (or keep apart per site); it must work, and does, without one
        if known is None and not shared and not frameable(request.url.path):
            _, cookie = app.state.sessions.mint()
            app.state.sessions.set_cookie(response, cookie, secure=scheme == "https")
        return response

    # outside the compression, so that a HEAD repeats its headers and tags stay strong
    app.add_middleware(EncodedTags)
    app.add_middleware(HeadAsGet)
    # outside the rest: no session is minted for a foreign Host, and every answer, the
    # refusals included, carries the security headers
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.allowed_hosts)
    app.add_middleware(SecurityHeaders)
    # outside all but WatchRequests: a request stops once its body is in and its client has
    # gone, and the whole of it stops (cancelled inside name_the_client, the answer it awaits
    # would never come, and Starlette would log that as an error: a flood of hang-ups, a flood
    # of tracebacks)
    app.add_middleware(CancelOnDisconnect)
    # outside all: every answer is counted, timed, logged and given its request's id
    app.add_middleware(WatchRequests, metrics=metrics, trusted_proxies=settings.trusted_proxies)
    # a 500 is answered outside every middleware (Starlette's ServerErrorMiddleware)
    app.add_exception_handler(Exception, internal_error)

    # no room now (the sandbox, a quota, the render pool, a client's share): one answer
    app.add_exception_handler(Busy, answer_busy)
    # a class that cannot be started, paced or shown (app/classes.py): a page saying why
    app.add_exception_handler(ClassError, answer_class_error)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        # FastAPI's own handler echoes the input as UTF-8, and fails (a 500) on a lone surrogate
        # such as {"x": "\ud800"}; ASCII escapes keep any input representable.
        body = json.dumps({"detail": jsonable_encoder(error.errors())}, ensure_ascii=True)
        return Response(body, status_code=422, media_type="application/json")

    return app
