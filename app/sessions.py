"""Anonymous browser sessions: a random id in a cookie signed with itsdangerous.

The id means nothing and names nobody; it only lets admission and the quotas tell thirty
learners behind one classroom address apart. A request without a valid cookie has no session
(it is counted by its address) and is given one for next time, so a client that drops cookies,
or mints new ones, gains nothing over its address's share.
"""

from __future__ import annotations

import os
import secrets
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
