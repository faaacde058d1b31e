"""Each request's id: in its answer's X-Request-ID, and in every log line written for it.

The id is the one a trusted reverse proxy sent (so one id follows a request through the proxy's
logs and ours), else a new one: a client's own X-Request-ID is not believed, or anyone could
write lines into our logs under someone else's id. It is held in a context variable, which
asyncio tasks and `asyncio.to_thread` carry; where work moves to a thread that does not (the
sandbox's reader thread), the id travels with the work and is `bound` there again.
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Iterator, Sequence
from contextvars import ContextVar

from app.client_address import Network, is_trusted

HEADER = "X-Request-ID"
# what a proxy's id may look like: nginx's $request_id (32 hex digits), a UUID, and the like;
# anything else (too long, spaces, control characters) is replaced, never logged
_ACCEPTED = re.compile(r"[A-Za-z0-9._:+/=-]{1,128}")

current: ContextVar[str | None] = ContextVar("request_id", default=None)


def new_id() -> str:
    return secrets.token_hex(16)


def request_id(peer: str | None, sent: str | None, trusted_proxies: Sequence[Network]) -> str:
    """The id of a request from `peer` that sent `sent` as its X-Request-ID (or nothing)."""
    believed = peer is not None and is_trusted(peer, trusted_proxies)
    if believed and sent and _ACCEPTED.fullmatch(sent):
        return sent
    return new_id()


@contextlib.contextmanager
def bound(ident: str | None) -> Iterator[None]:
    """Log lines written inside the block carry `ident` (on a thread the id did not follow)."""
    token = current.set(ident)
    try:
        yield
    finally:
        current.reset(token)
