"""The app's settings, read once from the environment."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class Names(tuple):
    """A comma-separated setting (GRADTRACE_ALLOWED_HOSTS=a,b), as a tuple of its entries."""

    def __new__(cls, entries: str | Iterable[str] = ()):
        if isinstance(entries, str):
            entries = (entry.strip() for entry in entries.split(","))
        return super().__new__(cls, (entry for entry in entries if entry))


class Networks(tuple):
    """Comma-separated IP addresses or CIDR blocks, parsed: a bad one stops the server at start."""

    def __new__(cls, entries: str | Iterable[str] = ()):
        return super().__new__(
            cls, (ipaddress.ip_network(entry, strict=False) for entry in Names(entries))
        )


@dataclass(frozen=True)
class Settings:
    db_path: Path
    max_source_bytes: int = 20_000
    # ***** HTTP hygiene *****
    # Host headers answered (Starlette's TrustedHostMiddleware): any other name that points
    # here, as a DNS-rebinding page's does, is refused. IPv6 literals keep their brackets.
    allowed_hosts: Names = Names("localhost,127.0.0.1,::1,[::1]")
    # reverse proxies whose X-Forwarded-For and -Proto are believed (app/client_address.py)
    trusted_proxies: Networks = Networks()
    # `gradtrace serve` (app/http_server.py): connections past the cap are closed on arrival;
    # each has header_timeout_seconds to send a request's headers
    max_connections: int = 500
    header_timeout_seconds: float = 10.0
    keep_alive_timeout_seconds: int = 5

    @property
    def max_body_bytes(self) -> int:
        """The largest request body read (app/body_limit.py). A snippet within max_source_bytes
        grows when encoded: JSON writes a control byte as \\u00XX (6 bytes for 1), a form a
        non-ASCII byte as %XX (3 for 1). Twice the worst of those leaves room for the rest of
        the body: 240,000 bytes (about 234 KiB) at the default limit."""
        return 12 * self.max_source_bytes

    @classmethod
    def from_environment(cls) -> Settings:
        return cls(db_path=Path(os.environ.get("GRADTRACE_DB", ROOT / "data" / "gradtrace.db")))
