"""The JSON API: run a snippet and store its trace; fetch a stored trace."""

from __future__ import annotations

import asyncio
import json

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, StrictStr, field_validator

from app.dependencies import RequesterDep, SettingsDep, TracesDep
from app.http_cache import IMMUTABLE, entity_tag, matches, not_modified

router = APIRouter(prefix="/api", tags=["traces"])


class TraceRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: StrictStr

    @field_validator("code")
    @classmethod
    def _is_unicode_text(cls, code: str) -> str:
        # JSON can carry a lone surrogate ("\ud800"), which no UTF-8 text (nor the store) holds
        try:
            code.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ValueError(f"code has a lone surrogate at character {error.start}") from None
        return code


class TraceCreated(BaseModel):
    id: str
    url: str
    trace: dict


@router.post(
    "/traces",
    response_model=TraceCreated,
    responses={
        400: {"description": "The body could not be read as JSON"},
        413: {"description": "The code is longer than the limit"},
        429: {
            "description": "This client has too many runs waiting, or has stored too many new "
            "traces lately (see Retry-After)"
        },
        503: {"description": "The server has too many runs waiting (see Retry-After)"},
    },
)
async def create_trace(
    body: TraceRequest, settings: SettingsDep, traces: TracesDep, requester: RequesterDep
) -> Response:
    """Run `code` (or find it already stored) and answer its id, page address and trace.

    A snippet that fails still gets a trace: its failure is in `trace.outcome`.
    """
    size = len(body.code.encode("utf-8"))
    limit = settings.sandbox.max_source_bytes
    if size > limit:
        raise HTTPException(413, f"code is {size:,} bytes; the limit is {limit:,}")
    ident, trace = await traces.find_or_run(body.code, requester)
    if trace is None:  # stored: its text goes out as it is, never parsed here
        text = await asyncio.to_thread(traces.fetch_json, ident, requester)
    else:
        text = json.dumps(trace, separators=(",", ":"), allow_nan=False)
    if text is None:  # evicted this very moment: as good as never stored
        raise HTTPException(503, "the trace was just evicted; run it again")
    head = json.dumps({"id": ident, "url": f"/t/{ident}"}, separators=(",", ":"))[:-1]
    return Response(f'{head},"trace":{text}}}', media_type="application/json")


@router.get(
    "/traces/{ident}",
    responses={
        404: {"description": "No trace has this id"},
        429: {"description": "This client has asked for too many unknown ids lately"},
    },
)
def get_trace(ident: str, request: Request, traces: TracesDep, requester: RequesterDep) -> Response:
    """A stored trace: its bytes never change, so it is cached for good, and revalidated by
    a tag naming those bytes (If-None-Match answers 304)."""
    text = traces.fetch_json(ident, viewer=requester)
    if text is None:
        raise HTTPException(404, f"no trace has the id {ident!r}")
    tag = entity_tag(text)
    headers = {"ETag": tag, "Cache-Control": IMMUTABLE}
    if matches(request, tag):
        return not_modified(tag, {"Cache-Control": IMMUTABLE})
    return Response(text, media_type="application/json", headers=headers)
