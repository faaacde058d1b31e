"""The web app: FastAPI routes over the engine's traces, rendered with Jinja2 and htmx."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

import engine
from app.config import ROOT, Settings
from app.routes import api, pages
from app.security import SecurityHeaders
from app.store import Store


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings.from_environment()
    app = FastAPI(title="gradtrace", version="0.1.0")
    app.state.settings = settings
    app.state.store = Store(settings.db_path)
    app.state.templates = Jinja2Templates(directory=ROOT / "templates")
    app.add_middleware(SecurityHeaders)
    app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
    app.include_router(pages.router)
    app.include_router(api.router)

    @app.get("/healthz")
    def healthz(request: Request) -> JSONResponse:
        return JSONResponse(
            {"status": "ok", "engine": engine.__version__, "sandbox": {"mode": "in-process"}}
        )

    return app


app = create_app()
