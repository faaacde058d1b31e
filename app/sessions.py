"""Anonymous browser sessions: a random id in a cookie signed with itsdangerous.

The id means nothing and names nobody; it only lets admission and the quotas tell thirty
learners behind one classroom address apart. A request without a valid cookie has no session
(it is counted by its address) and is given one for next time, so a client that drops cookies
gains nothing over its address's share.

Cookies cost nothing to mint, so a session earns its place before it counts as a client of its
own (`Standing`): until then its requests count as its address's, as a cookieless one's do.
It earns it by waiting: its cookie must be `settle_seconds` old (the cookie says when it was
signed), as a learner's is by the time they have read a page and pressed Run; and each address
may have only so many sessions earn their place (`burst` at once, `per_hour` more an hour
after), which a classroom of thirty is well inside. So cookies minted by the hundred, and used
at once, are one client, their address; and a stock of them minted ahead and kept is a few
dozen clients at most, each of which the admission then serves by what it has used.
"""

from __future__ import annotations

import asyncio
import math
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from itsdangerous import BadSignature, Signer, TimestampSigner

COOKIE = "gradtrace_session"
MAX_AGE = 400 * 24 * 3600  # the longest browsers keep a cookie
FORGET_EVERY = 3600.0  # seconds between clearing the ledger of what no longer matters
SALT = "gradtrace.session"


class Sessions:
    def __init__(self, secret: str | bytes) -> None:
        self._signer = TimestampSigner(secret, salt=SALT)
        # cookies signed before they said when: as good as old
        self._untimed = Signer(secret, salt=SALT)

    def session_of(self, cookie: str | None) -> tuple[str, float] | None:
        """The session id a cookie carries and its age in seconds (an older cookie, signed
        without a time, is of any age), or None for a missing, forged or altered one."""
        if not cookie or len(cookie) > 200:
            return None
        try:
            value, signed = self._signer.unsign(cookie, return_timestamp=True)
            return value.decode("ascii"), time.time() - signed.timestamp()
        except (BadSignature, UnicodeDecodeError):
            pass
        try:
            return self._untimed.unsign(cookie).decode("ascii"), float("inf")
        except (BadSignature, UnicodeDecodeError):
            return None

    def mint(self) -> tuple[str, str]:
        """A new session: its id and the cookie value that carries it."""
        session = secrets.token_urlsafe(16)
        return session, self._signer.sign(session).decode("ascii")

    def set_cookie(self, response, value: str, secure: bool) -> None:
        response.set_cookie(
            COOKIE, value, max_age=MAX_AGE, path="/", httponly=True, samesite="lax", secure=secure
        )


class Ledger(Protocol):
    """Where standing is kept when it is shared between servers: the store (app/store)."""

    def earn_place(
        self, address: str, session: str, burst: int, per_second: float, now: float
    ) -> float: ...

    def has_earned(self, session: str) -> bool: ...

    def forget_standing(self, budgets_before: float, sessions_before: float) -> None: ...


class Standing:
    """`standing.earned(address, session, age)`: whether a session counts as a client of its
    own, not as its address. Once earned, kept (the `KEPT` most recent sessions).

    With a `ledger` (the store: Store.earn_place) the budgets and the sessions that earned
    their place are kept there, so every server sharing the store counts them alike; this
    process remembers only what it learned from it: a session that earned its place (that
    never changes), and an address that has none left until when it gets one, so a flood of
    new cookies from one address is a read of the store each, not a write.

    The event loop asks `earned_without_blocking`: what this process knows is answered at once,
    what only the ledger knows is asked from a thread, since it is a database round trip (and
    a write when a place is taken). Its state is kept under a lock, never held across one."""

    KEPT = 100_000  # sessions that have earned their place, remembered
    KEPT_ADDRESSES = 10_000  # addresses' budgets; past it, those full again are forgotten (or,
    # if that is not enough, the longest untouched: forgetting one only gives it a full bucket)

    def __init__(
        self,
        settle_seconds: float,
        burst: int,
        per_hour: float,
        clock: Callable[[], float] | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        self.settle_seconds = settle_seconds
        self.burst = burst
        self.per_second = per_hour / 3600
        # the ledger's times are shared between machines: the wall clock's
        self._clock = clock or (time.monotonic if ledger is None else time.time)
        self._ledger = ledger
        self._refused: OrderedDict[str, float] = OrderedDict()  # address: no place until
        self._next_forget = 0.0
        self._earned: OrderedDict[str, None] = OrderedDict()
        self._buckets: dict[str, tuple[float, float]] = {}  # address: (places left, as of)
        self._lock = threading.Lock()

    def earned(self, address: str, session: str, age: float) -> bool:
        with self._lock:
            known = self._known(session, age)
            if known is not None:
                return known
            if self._ledger is None:
                if not self._take(address):
                    return False
                self._remember(session)
                return True
        if not self._take_from_ledger(address, session):
            return False
        with self._lock:
            self._remember(session)
        return True

    async def earned_without_blocking(self, address: str, session: str, age: float) -> bool:
        """`earned`, for the event loop (app/main.py's middleware)."""
        with self._lock:
            known = self._known(session, age)
        if known is not None:
            return known
        if self._ledger is None:  # a bucket in memory: nothing to wait for
            return self.earned(address, session, age)
        return await asyncio.to_thread(self.earned, address, session, age)

    def _known(self, session: str, age: float) -> bool | None:
        """What this process can say without a budget: earned (remembered), or too young."""
        if session in self._earned:
            self._earned.move_to_end(session)
            return True
        if age < self.settle_seconds:
            return False
        return None

    def _remember(self, session: str) -> None:
        self._earned[session] = None
        if len(self._earned) > self.KEPT:
            self._earned.popitem(last=False)

    def __len__(self) -> int:
        """Addresses whose budgets are remembered (their memory is bounded: tests)."""
        return len(self._buckets)

    def _take(self, address: str) -> bool:
        now = self._clock()
        left = self._left(address, now)
        if left < 1:
            return False
        self._buckets[address] = (left - 1, now)
        if len(self._buckets) > self.KEPT_ADDRESSES:
            self._forget(now)
        return True

    def _take_from_ledger(self, address: str, session: str) -> bool:
        """A place from the ledger: the ledger is asked outside the lock, the rest under it."""
        now = self._clock()
        with self._lock:
            refused = self._refused.get(address, 0.0) > now
            if not refused:
                self._refused.pop(address, None)
        if refused:
            # no place to take, but another server may have given this session one: a read
            return self._ledger.has_earned(session)
        wait = self._ledger.earn_place(address, session, self.burst, self.per_second, now)
        with self._lock:
            if wait > 0:
                self._refused[address] = now + wait
                if len(self._refused) > self.KEPT_ADDRESSES:
                    self._refused.popitem(last=False)  # forgetting one asks the ledger again
                return False
            forget = now >= self._next_forget
            if forget:
                self._next_forget = now + FORGET_EVERY
        if forget:
            # a budget untouched this long is full again; a session this old has no cookie
            full_after = self.burst / self.per_second if self.per_second > 0 else math.inf
            self._ledger.forget_standing(now - full_after, now - MAX_AGE)
        return True

    def _left(self, address: str, now: float) -> float:
        left, when = self._buckets.get(address, (self.burst, now))
        return min(self.burst, left + (now - when) * self.per_second)

    def _forget(self, now: float) -> None:
        for address in [a for a in self._buckets if self._left(a, now) >= self.burst]:
            del self._buckets[address]
        excess = len(self._buckets) - self.KEPT_ADDRESSES // 2
        if excess > 0:
            for address in sorted(self._buckets, key=lambda a: self._buckets[a][1])[:excess]:
                del self._buckets[address]


def secret_for(configured: str, data_dir: Path, store=None) -> str:
    """The configured secret, or a random one kept (0600) in session.key in the data folder,
    so sessions survive a restart without anyone having to set one. A store shared by many
    servers (PostgreSQL) keeps it itself, so that they all sign and key with one."""
    if configured:
        return configured
    if store is not None and store.shared:
        return store.session_secret()
    path = data_dir / "session.key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return path.read_text().strip()
    with os.fdopen(fd, "w") as file:
        file.write(key)
    return key
