"""What an operator watches: `/healthz` (is each part working?) and `/metrics` (how much, how
fast), the second in Prometheus's text format (app/metrics.py).

/metrics says how busy the server is and how large its store: nothing secret, but a map for
someone planning to flood it. So it is answered only to this machine (a loopback client) and to
the networks in GRADTRACE_METRICS_NETWORKS; a request through a trusted reverse proxy counts as
from the client the proxy names (app/client_address.py), so the world does not become loopback
behind a proxy on this machine. Anyone else gets a 404, as if there were no such page.
"""

from __future__ import annotations

import asyncio
import ipaddress

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

import engine
from app import execution
from app.client_address import client_address
from app.dependencies import HealthDep, MetricsDep, SettingsDep
from app.metrics import CONTENT_TYPE

router = APIRouter()


@router.get("/healthz")
async def healthz(health: HealthDep) -> JSONResponse:
    # answered on the event loop, not in the thread pool: under load it then says how soon
    # the server answers, not how soon a thread is free (the report is measured at startup;
    # without a startup, as in some tests, it is measured once, in a thread)
    report = execution.known_layer_report() or await asyncio.to_thread(execution.layer_report)
    sandbox = execution.sandbox()
    health = await health.report()
    return JSONResponse(
        {
            # always answered 200 while the server answers at all: a part that is down is
            # said here, and a load balancer does not take the whole server away for it
            "status": "ok" if health["ok"] else "degraded",
            "engine": engine.__version__,
            "sandbox": {
                "mode": "zygote",
                "strong": report["strong"],
                "layers": report["layers"],
                "limits": sandbox.settings.describe(),
                "load": sandbox.admission.stats(),
            },
            "components": health["components"],
        }
    )


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request, settings: SettingsDep, metrics: MetricsDep) -> Response:
    peer = request.client.host if request.client else None
    forwarded_for = request.headers.getlist("x-forwarded-for")
    address = client_address(peer, forwarded_for, settings.trusted_proxies)
    if not may_read_metrics(address, settings.metrics_networks):
        return PlainTextResponse("Not Found", status_code=404)
    # the scrape reads the store's size, which may wait on its database: not on the event loop
    text = await asyncio.to_thread(metrics.exposition)
    return Response(text, media_type=CONTENT_TYPE, headers={"Cache-Control": "no-store"})


def may_read_metrics(address: str, networks) -> bool:
    """Whether a client at `address` may read /metrics: loopback, or in `networks`."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False  # "unknown", a name: nobody we know
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    return parsed.is_loopback or any(parsed in network for network in networks)
