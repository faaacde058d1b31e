"""What a route is handed: the app's services, as FastAPI dependencies.

create_app (app/main.py) builds each service once and keeps it on the app. A route names the
ones it uses as parameters, `traces: TracesDep`, rather than reaching into request.app.state:
what a route depends on is in its signature, and a test can put another in its place
(`app.dependency_overrides[get_traces] = ...`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.templating import Jinja2Templates

from app.class_events import ClassEvents
from app.classes import Classes
from app.config import Settings
from app.health import Health
from app.lessons.library import Shelf
from app.metrics import Metrics
from app.sandbox import Requester
from app.service import Traces


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_traces(request: Request) -> Traces:
    return request.app.state.traces


def get_lessons(request: Request) -> Shelf:
    return request.app.state.lessons


def get_metrics(request: Request) -> Metrics:
    return request.app.state.metrics


def get_health(request: Request) -> Health:
    return request.app.state.health


def get_classes(request: Request) -> Classes:
    return request.app.state.classes


def get_class_events(request: Request) -> ClassEvents:
    return request.app.state.class_events


def get_templates(request: Request) -> Jinja2Templates:
    return request.app.state.templates


def get_page_version(request: Request) -> str:
    """What a page is made from besides its trace (its tag names it: app/http_cache.py)."""
    return request.app.state.page_version


def get_export_version(request: Request) -> str:
    """A page's, and the player's script and styles, which an export inlines."""
    return request.app.state.export_version


def get_requester(request: Request) -> Requester:
    """Who asks: the session and address the middleware named (app/main.py)."""
    return request.state.requester


SettingsDep = Annotated[Settings, Depends(get_settings)]
TracesDep = Annotated[Traces, Depends(get_traces)]
LessonsDep = Annotated[Shelf, Depends(get_lessons)]
MetricsDep = Annotated[Metrics, Depends(get_metrics)]
HealthDep = Annotated[Health, Depends(get_health)]
ClassesDep = Annotated[Classes, Depends(get_classes)]
ClassEventsDep = Annotated[ClassEvents, Depends(get_class_events)]
TemplatesDep = Annotated[Jinja2Templates, Depends(get_templates)]
PageVersion = Annotated[str, Depends(get_page_version)]
ExportVersion = Annotated[str, Depends(get_export_version)]
RequesterDep = Annotated[Requester, Depends(get_requester)]
