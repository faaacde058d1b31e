"""The web app: FastAPI routes over the engine's traces, rendered with Jinja2 and htmx."""

from __future__ import annotations

import pathlib

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

import engine
from app.routes import pages
from app.security import SecurityHeaders

ROOT = pathlib.Path(__file__).resolve().parent.parent


def create_app() -> FastAPI:
    app = FastAPI(title="gradtrace", version="0.1.0")
    app.state.templates = Jinja2Templates(directory=ROOT / "templates")
    app.add_middleware(SecurityHeaders)
    app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
    app.include_router(pages.router)

    @app.get("/healthz")
    def healthz(request: Request) -> JSONResponse:
        return JSONResponse(
            {"status": "ok", "engine": engine.__version__, "sandbox": {"mode": "in-process"}}
        )

    return app


app = create_app()
