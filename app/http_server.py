"""How `gradtrace serve` runs the app: uvicorn's options in one place, and an HTTP protocol
that does not let idle or slow connections pile up.

uvicorn 0.54 has no timeout for a request's headers: a connection that never finishes them
(or never sends a byte) is held for ever, and 20,000 of them used up the process's file
descriptors. Its `limit_concurrency` only answers 503 once a request has arrived, so it holds
idle sockets too. So its h11 protocol is extended: a connection past `max_connections` is
answered 503 and closed as it arrives, and one that has not sent complete headers within
`header_timeout_seconds` of opening (or of its previous answer) is closed. h11 handles one
request per connection at a time, so the cap on connections caps concurrent requests as well.

Timeouts alone leave the cap for one client to take: it opens a new connection for each one a
timeout ends (app/body_limit.py ends a trickling body), and with all 500 it shuts everyone else
out. So each address (an IPv6 client by its /64, as for every per-address limit) may hold at
most `max_connections_per_address` of them; past that its next connection gets the same 503.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

import h11
import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.client_address import Network, is_trusted, limit_key
from app.config import LimitsSettings, Settings
from app.security import SECURITY_HEADERS

_BUSY_TEXT = b"The server has too many open connections; try again.\n"
_BUSY_HEADERS = {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": str(len(_BUSY_TEXT)),
    "Retry-After": "1",
    "Connection": "close",
    **SECURITY_HEADERS,
}
# Written raw: h11 cannot answer before it has read a request.
_TOO_MANY_CONNECTIONS = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    + b"".join(f"{name}: {value}\r\n".encode() for name, value in _BUSY_HEADERS.items())
    + b"\r\n"
    + _BUSY_TEXT
)


def server_config(app: ASGIApp, settings: Settings, *, host: str, port: int) -> uvicorn.Config:
    """Every option `gradtrace serve` gives uvicorn."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=GuardedH11Protocol.with_limits(settings),
        timeout_keep_alive=settings.limits.keep_alive_timeout_seconds,
        # uvicorn would believe X-Forwarded-For from 127.0.0.1, i.e. from anyone on this
        # host; app/client_address.py believes only Settings.trusted_proxies
        proxy_headers=False,
        # its loggers write through the root's JSON handler (app/logs.py), not a config of its
        # own; each request's line is app/request_watch.py's, with its id, not uvicorn's
        log_config=None,
        access_log=False,
    )


DEFAULTS = LimitsSettings()


class GuardedH11Protocol(H11Protocol):
    header_timeout_seconds: float = DEFAULTS.header_timeout_seconds
    max_connections: int = DEFAULTS.max_connections
    max_connections_per_address: int = DEFAULTS.max_connections_per_address
    trusted_proxies: Sequence[Network] = ()
    # open connections by limit_key: on the class, because uvicorn makes one instance each
    open_by_address: Counter[str] = Counter()

    @classmethod
    def with_limits(cls, settings: Settings) -> type[GuardedH11Protocol]:
        """The protocol class with these settings' limits (uvicorn makes one per connection),
        and counts of its own."""
        limits = {
            "header_timeout_seconds": settings.limits.header_timeout_seconds,
            "max_connections": settings.limits.max_connections,
            "max_connections_per_address": settings.limits.max_connections_per_address,
            "trusted_proxies": settings.trusted_proxies,
            "open_by_address": Counter(),
        }
        return type(cls.__name__, (cls,), limits)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._headers_due: asyncio.TimerHandle | None = None
        self._counted_as: str | None = None
        super().connection_made(transport)
        # counted even when refused below: connection_lost takes it off again
        peer = self.client[0] if self.client else None
        # a trusted proxy carries every client's connections: it must cap them per client
        # itself (nginx's limit_conn), since their addresses are not known until the headers
        if peer is not None and not is_trusted(peer, self.trusted_proxies):
            self._counted_as = limit_key(peer)
            self.open_by_address[self._counted_as] += 1
        if len(self.connections) > self.max_connections or self._over_address_cap():
            transport.write(_TOO_MANY_CONNECTIONS)
            transport.close()
            return
        self._expect_headers()

    def handle_events(self) -> None:
        super().handle_events()
        # h11 leaves IDLE only once a request's headers are complete
        if self.conn.their_state is not h11.IDLE:
            self._cancel_header_timer()

    def on_response_complete(self) -> None:
        # armed first: the pipelined request the parent may handle now cancels it at once
        self._expect_headers()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        if self._counted_as is not None:
            self.open_by_address[self._counted_as] -= 1
            if self.open_by_address[self._counted_as] <= 0:
                del self.open_by_address[self._counted_as]  # or every address ever seen stays
            self._counted_as = None  # once per connection, whatever calls this again
        super().connection_lost(exc)

    def _over_address_cap(self) -> bool:
        if self._counted_as is None:
            return False
        return self.open_by_address[self._counted_as] > self.max_connections_per_address

    def _expect_headers(self) -> None:
        self._cancel_header_timer()
        self._headers_due = self.loop.call_later(
            self.header_timeout_seconds, self._headers_too_slow
        )

    def _cancel_header_timer(self) -> None:
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None

    def _headers_too_slow(self) -> None:
        self._headers_due = None
        if not self.transport.is_closing():
            self.transport.close()
