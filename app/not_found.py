"""A run of unknown trace addresses (or class join codes) from one client is throttled.

A trace's id proves nothing (app/store), but a trace stored before ids were keyed answers at
its old one, a hash of its code that anyone can work out; and any id can be tried. A class's
join code is short, for typing off a projector (app/classes.py): tried one after another, codes
would find classes to join. So a client may miss only so often: past LIMIT 404s on these paths
within WINDOW seconds, every one of them answers it 429, with Retry-After, until the oldest of
those misses is WINDOW old. A trace that
is there answers 429 as well, or the throttle would tell what it guards. Counted per address
(the per-address limit key: an IPv6 client by its /64), in a table of at most MAX_CLIENTS, the
longest quiet dropped first, so memory is bounded whoever asks.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

GUARDED_PATHS = ("/t/", "/embed/", "/api/traces/", "/join", "/classes/")
LIMIT = 30  # misses per window: a class's mistyped links, not a search
WINDOW = 60.0  # seconds
MAX_CLIENTS = 10_000  # addresses remembered: LIMIT timestamps each, about 3 MB at most


class NotFoundThrottle:
    """Inside name_the_client (app/main.py), whose requester names the address."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int = LIMIT,
        window: float = WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.limit = limit
        self.window = window
        self.clock = clock
        self._misses: OrderedDict[str, deque[float]] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        requester = scope.get("state", {}).get("requester")
        if (
            scope["type"] != "http"
            or requester is None
            or not scope["path"].startswith(GUARDED_PATHS)
        ):
            await self.app(scope, receive, send)
            return
        address = requester.address
        wait = self._wait(address, self.clock())
        if wait:
            await _too_many(scope["path"], wait)(scope, receive, send)
            return
        status = 0

        async def noting_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await self.app(scope, receive, noting_status)
        if status == 404:
            self._missed(address, self.clock())

    def _wait(self, address: str, now: float) -> int:
        """Seconds until this address may ask again: 0 when it may now."""
        misses = self._misses.get(address)
        if misses is None:
            return 0
        while misses and misses[0] <= now - self.window:
            misses.popleft()
        if len(misses) < self.limit:
            return 0
        return max(1, math.ceil(misses[0] + self.window - now))

    def _missed(self, address: str, now: float) -> None:
        misses = self._misses.pop(address, None) or deque(maxlen=self.limit)
        misses.append(now)
        self._misses[address] = misses  # the most recent last
        if len(self._misses) > MAX_CLIENTS:
            self._misses.popitem(last=False)


def _too_many(path: str, wait: int) -> Response:
    message = (
        "Too many addresses of traces, or class codes, that are not here were asked for from "
        f"your address; try again in {wait} seconds."
    )
    headers = {"Retry-After": str(wait)}
    if path.startswith("/api/"):
        return JSONResponse({"detail": message}, 429, headers)
    return PlainTextResponse(message, 429, headers)
