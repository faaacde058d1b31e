"""Each client's share of the work a request can start: drawing a page, making an export.

The render pool has a few workers and a short queue for everyone (app/render_pool.py). Without
shares, one client could fill that queue with requests for pages nobody else wants, and every
other visitor would be told the server is busy. So before a request starts new work (a cache
hit starts none), it takes a place from its client's share:
- a session may hold `per_session` places: past that it is told 429 at once (this browser is
  asking for too much at once: no honest page asks for more);
- all the sessions of one address together hold at most `per_address`: past that a request
  waits its turn, in order, for up to `wait_seconds` (thirty students pressing Run together is
  a burst, not an attack), and only then is told 429. Minting cookies buys no more than the
  address's share (and app/sessions.py makes minted sessions count as their address anyway).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator

from app.render_pool import RenderBusy
from app.sandbox import Requester


class ShareUsed(RenderBusy):
    """This client already has as much work going as its share allows."""

    status_code = 429
    reason = "share"

    def __init__(self, retry_after: int, message: str) -> None:
        super().__init__(retry_after)
        self.message = message


class Shares:
    """`async with shares.hold(requester): ...` holds one place for the block, or raises
    ShareUsed."""

    def __init__(
        self,
        per_session: int,
        per_address: int,
        *,
        what: str,
        retry_after: int,
        wait_seconds: float = 10.0,
    ) -> None:
        self.per_session = per_session
        self.per_address = per_address
        self.what = what  # "pages being drawn", said in a session's refusal
        self.retry_after = retry_after
        self.wait_seconds = wait_seconds
        # only clients holding or awaiting places are kept: as small as the work going on
        self._sessions: Counter[str] = Counter()
        self._addresses: Counter[str] = Counter()
        self._turns: dict[str, asyncio.Semaphore] = {}  # an address's places, first come first

    @contextlib.asynccontextmanager
    async def hold(self, requester: Requester) -> AsyncIterator[None]:
        session, address = requester.session, requester.address
        if self._sessions[session] >= self.per_session:
            message = f"You already have {self.what} in progress; try again shortly."
            raise ShareUsed(self.retry_after, message)
        self._sessions[session] += 1
        self._addresses[address] += 1
        turns = self._turns.setdefault(address, asyncio.Semaphore(self.per_address))
        try:
            try:
                await asyncio.wait_for(turns.acquire(), self.wait_seconds)
            except TimeoutError:
                message = "Your network's share of the server is in use; try again shortly."
                raise ShareUsed(self.retry_after, message) from None
            try:
                yield
            finally:
                turns.release()
        finally:
            _release(self._sessions, session)
            if _release(self._addresses, address):
                del self._turns[address]

    def held(self) -> int:
        """Places taken or awaited now, all clients together (tests, /healthz)."""
        return self._sessions.total()


def _release(counts: Counter[str], key: str) -> bool:
    """One less for `key`; whether that was its last."""
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]
        return True
    return False
