"""Each client's share of the work a request can start: drawing a page, making an export.

The render pool has a few workers and a short queue for everyone (app/render_pool.py). Without
shares, one client could fill that queue with requests for pages nobody else wants, and every
other visitor would be told the server is busy. So before a request starts new work (a cache
hit starts none), it takes a place from its client's share: a session may hold `per_session`
places, and all the sessions of one address together `per_address`, so minting cookies buys no
more than the address's share. Past either, the answer is 429 with Retry-After: this client is
asking for too much at once, not the server is full.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator

from app.render_pool import RenderBusy
from app.sandbox import Requester


class ShareUsed(RenderBusy):
    """This client already has as much work going as its share allows."""

    status_code = 429

    def __init__(self, retry_after: int, what: str) -> None:
        super().__init__(retry_after)
        self.message = f"You already have {what} in progress; try again shortly."


class Shares:
    """`with shares.hold(requester): ...` takes one place for the block, or raises ShareUsed."""

    def __init__(self, per_session: int, per_address: int, *, what: str, retry_after: int) -> None:
        self.per_session = per_session
        self.per_address = per_address
        self.what = what  # "pages being drawn", said in the refusal
        self.retry_after = retry_after
        # only clients holding places are kept, so these stay as small as the work going on
        self._sessions: Counter[str] = Counter()
        self._addresses: Counter[str] = Counter()

    @contextlib.contextmanager
    def hold(self, requester: Requester) -> Iterator[None]:
        session, address = requester.session, requester.address
        if (
            self._sessions[session] >= self.per_session
            or self._addresses[address] >= self.per_address
        ):
            raise ShareUsed(self.retry_after, self.what)
        self._sessions[session] += 1
        self._addresses[address] += 1
        try:
            yield
        finally:
            _release(self._sessions, session)
            _release(self._addresses, address)

    def held(self) -> int:
        """Places taken now, all clients together (tests, /healthz)."""
        return self._sessions.total()


def _release(counts: Counter[str], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]
