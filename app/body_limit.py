"""Caps on request bodies, enforced while they arrive: their size and their pace.

FastAPI reads a body whole before any route can look at its size, so a 400 MB post once took
the server to 1.3 GB. This middleware answers 413 at once when Content-Length is over the cap,
and otherwise counts the bytes as they stream in (a chunked body declares no length) and
answers 413 as soon as the count passes the cap, holding at most the cap plus one chunk. The
answer closes the connection, so the rest of the body is never read. Starlette has no such
middleware; uvicorn has none either (its h11_max_incomplete_event_size bounds headers only).

A body that stops arriving would hold its request (and a connection slot) for ever: the header
timeout (app/http_server.py) ends once the headers are in. So while a body is incomplete, each
next piece must come within `idle_seconds`, or the answer is 408 and the connection is closed.
A body that trickles (a byte every idle_seconds - 1) would keep to that pace for days, so the
whole body must also be in within `deadline_seconds` of the app first asking for it, or the
answer is the same 408. The largest body allowed is about 240 KB, two seconds at 1 Mbit/s, so an
honest client is far inside the deadline; only one that means to hold the connection meets it.
"""

from __future__ import annotations

import asyncio

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyRefused(Exception):
    """Raised into the app by `receive` once the body has passed the cap or stalled."""


class BodyLimit:
    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        idle_seconds: float = 30.0,
        deadline_seconds: float = 20.0,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.idle_seconds = idle_seconds
        self.deadline_seconds = deadline_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        # h11 has already refused a Content-Length that is not a number
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refusal(scope)(scope, receive, send)
            return

        received = 0
        refusal: Response | None = None  # set once the body is refused: the answer instead
        complete = False
        response_started = False
        clock = asyncio.get_running_loop().time
        deadline: float | None = None  # set when the app first asks for the body

        async def counting_receive() -> Message:
            nonlocal received, refusal, complete, deadline
            if complete:  # later receives wait for a disconnect: no pace to keep
                return await receive()
            if deadline is None:
                deadline = clock() + self.deadline_seconds
            left = deadline - clock()
            if left <= 0:  # even if a piece is waiting: its pace is what is refused
                refusal = self._too_slow()
                raise BodyRefused
            try:
                message = await asyncio.wait_for(receive(), min(self.idle_seconds, left))
            except TimeoutError:
                refusal = self._too_slow() if left < self.idle_seconds else self._stalled()
                raise BodyRefused from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                complete = not message.get("more_body", False)
                if received > self.max_bytes:
                    refusal = self._refusal(scope)
                    raise BodyRefused
            return message

        async def send_unless_refused(message: Message) -> None:
            nonlocal response_started
            # whatever the app makes of the exception (FastAPI turns a failed body read into
            # a 400) is replaced by the 413 below
            if refusal is not None and not response_started:
                return
            response_started = response_started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, send_unless_refused)
        except Exception:
            if refusal is None or response_started:
                raise
        if refusal is not None and not response_started:
            await refusal(scope, receive, send)

    def _stalled(self) -> Response:
        sentence = (
            f"The request body stopped arriving: nothing came for {self.idle_seconds:g} seconds."
        )
        return PlainTextResponse(sentence, status_code=408, headers={"Connection": "close"})

    def _too_slow(self) -> Response:
        sentence = (
            "The request body took too long to arrive:"
            f" more than {self.deadline_seconds:g} seconds in total."
        )
        return PlainTextResponse(sentence, status_code=408, headers={"Connection": "close"})

    def _refusal(self, scope: Scope) -> Response:
        message = f"the request body is larger than the limit of {self.max_bytes:,} bytes"
        # the client may still be sending: closing the connection is how we stop reading
        headers = {"Connection": "close"}
        if scope["path"].startswith("/api/"):
            return JSONResponse({"detail": message}, status_code=413, headers=headers)
        # a page's only body is a snippet: say so, in words the result area can show as they are
        sentence = f"The snippet is too long: {message}."
        return PlainTextResponse(sentence, status_code=413, headers=headers)
