"""Anonymous browser sessions: a random id in a cookie signed with itsdangerous.

The id means nothing and names nobody; it only lets admission and the quotas tell thirty
learners behind one classroom address apart. A request without a valid cookie has no session
(it is counted by its address) and is given one for next time, so a client that drops cookies
gains nothing over its address's share. New sessions are not free either: each address is given
at most `burst` of them at once, and `per_hour` more an hour after that (MintBudget). A classroom
of thirty opening the site together is well inside it; a script minting cookies by the hundred
to look like a classroom is not, and its requests past the budget count as its address's.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path

from itsdangerous import BadSignature, Signer

COOKIE = "gradtrace_session"
MAX_AGE = 400 * 24 * 3600  # the longest browsers keep a cookie
SALT = "gradtrace.session"


class Sessions:
    def __init__(self, secret: str | bytes) -> None:
        self._signer = Signer(secret, salt=SALT)

    def session_of(self, cookie: str | None) -> str | None:
        """The session id a cookie carries, or None for a missing, forged or altered one."""
        if not cookie or len(cookie) > 200:
            return None
        try:
            return self._signer.unsign(cookie).decode("ascii")
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


class MintBudget:
    """`budget.take(address)`: whether this address may be given one more new session now. A
    bucket per address of `burst` sessions, refilled at `per_hour`."""

    KEPT = 10_000  # addresses remembered; past it, those whose buckets are full again go (or,
    # if that is not enough, the longest untouched: forgetting one only gives it a full bucket)

    def __init__(
        self, burst: int, per_hour: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.burst = burst
        self.per_second = per_hour / 3600
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # address: (sessions left, as of)

    def take(self, address: str) -> bool:
        now = self._clock()
        left = self._left(address, now)
        if left < 1:
            return False
        self._buckets[address] = (left - 1, now)
        if len(self._buckets) > self.KEPT:
            self._forget(now)
        return True

    def __len__(self) -> int:
        """Addresses remembered (their memory is bounded: tests)."""
        return len(self._buckets)

    def _left(self, address: str, now: float) -> float:
        left, when = self._buckets.get(address, (self.burst, now))
        return min(self.burst, left + (now - when) * self.per_second)

    def _forget(self, now: float) -> None:
        for address in [a for a in self._buckets if self._left(a, now) >= self.burst]:
            del self._buckets[address]
        excess = len(self._buckets) - self.KEPT // 2
        if excess > 0:
            for address in sorted(self._buckets, key=lambda a: self._buckets[a][1])[:excess]:
                del self._buckets[address]


def secret_for(configured: str, db_path: Path) -> str:
    """The configured secret, or a random one kept (0600) beside the database, so sessions
    survive a restart without anyone having to set one."""
    if configured:
        return configured
    path = db_path.parent / "session.key"
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
