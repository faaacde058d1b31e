"""The app's settings, read once from the environment.

Every field but `db_path` is read from GRADTRACE_ + its name in capitals (`session_quota_traces`
from GRADTRACE_SESSION_QUOTA_TRACES); `db_path` from GRADTRACE_DB. Bad values stop the server
at start with the variable's name. docs/storage.md says what the store's limits mean.

What the server writes (the database, session.key) goes in the data folder, GRADTRACE_DATA_DIR
or this user's own (platformdirs), never beside the code: installed, that is site-packages.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

import platformdirs

from app import files
from app.render_pool import RenderSettings
from app.sandbox.settings import SandboxSettings
from app.store import StoreLimits

ENV_PREFIX = "GRADTRACE_"
MIB = 1024 * 1024


def data_directory(environ: Mapping[str, str] | None = None) -> Path:
    """GRADTRACE_DATA_DIR, or this user's data folder (~/.local/share/gradtrace on Linux)."""
    environ = os.environ if environ is None else environ
    chosen = environ.get(ENV_PREFIX + "DATA_DIR")
    return Path(chosen) if chosen else platformdirs.user_data_path("gradtrace", appauthor=False)


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
    db_path: Path  # default: gradtrace.db in data_dir
    # the database's folder unless GRADTRACE_DB says otherwise, and session.key's
    data_dir: Path = field(default_factory=data_directory)
    max_source_bytes: int = (
        SandboxSettings.max_source_bytes
    )  # the web's limit starts as the sandbox's
    # ***** sessions: an anonymous id in a signed cookie *****
    session_secret: str = ""  # empty: a random key kept in session.key in data_dir
    # a session counts as its address until its cookie is this old, and only so many of each
    # address's sessions may earn a place of their own: at once, then per hour (app/sessions.py)
    session_settle_seconds: float = 2.0
    earned_sessions_burst: int = 60
    earned_sessions_per_hour: float = 60.0
    # ***** new traces each session and each address may store, per window *****
    quota_window_seconds: float = 3600.0
    session_quota_traces: int = 300
    session_quota_mib: int = 64
    address_quota_traces: int = 3000
    address_quota_mib: int = 512
    # ***** the store *****
    # postgresql://user:password@host/database: one store for many servers (docs/storage.md);
    # empty: the SQLite file at db_path
    database_url: str = ""
    max_stored_trace_mib: int = 4  # compressed; a larger trace is kept cut short
    max_store_mib: int = 2048  # compressed, all traces; past it the least recently seen go
    # what one owner's address may hold of the store; past it its own least seen traces go
    owner_share_percent: float = StoreLimits.owner_share_percent
    unviewed_days: float = 7.0  # an anonymous trace nobody opened is evicted after this
    # ***** drawing pages, in worker processes under a budget (app/render_pool.py) *****
    render_workers: int = RenderSettings.workers
    render_budget_seconds: float = RenderSettings.budget_seconds  # past it: shown in words
    render_memory_mib: int = RenderSettings.memory_mib  # each worker's address space
    page_cache_mib: int = 64  # drawn pages kept in memory
    # ***** lessons: one Markdown file each (app/lessons) *****
    lessons_dir: Path = files.LESSONS
    # ***** HTTP hygiene *****
    # Host headers answered (Starlette's TrustedHostMiddleware): any other name that points
    # here, as a DNS-rebinding page's does, is refused. IPv6 literals keep their brackets.
    allowed_hosts: Names = Names("localhost,127.0.0.1,::1,[::1]")
    # reverse proxies whose X-Forwarded-For, -Proto and X-Request-ID are believed
    # (app/client_address.py, app/request_ids.py)
    trusted_proxies: Networks = Networks()
    # who may read /metrics besides this machine (loopback), by client address (docs/deploying.md)
    metrics_networks: Networks = Networks()
    # `gradtrace serve` (app/http_server.py): connections past the cap are closed on arrival;
    # each has header_timeout_seconds to send a request's headers
    max_connections: int = 500
    # so that no one address takes the whole cap; trusted proxies are not counted
    max_connections_per_address: int = 50
    header_timeout_seconds: float = 10.0
    keep_alive_timeout_seconds: int = 5
    # once the headers are in, each next piece of an unfinished body must come within this
    body_idle_seconds: float = 30.0
    # and the whole body within this, counted from when the app first asks for it
    body_deadline_seconds: float = 20.0

    @property
    def max_body_bytes(self) -> int:
        """The largest request body read (app/body_limit.py). A snippet within max_source_bytes
        grows when encoded: JSON writes a control byte as \\u00XX (6 bytes for 1), a form a
        non-ASCII byte as %XX (3 for 1). Twice the worst of those leaves room for the rest of
        the body: 240,000 bytes (about 234 KiB) at the default limit."""
        return 12 * self.max_source_bytes

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Settings:
        environ = os.environ if environ is None else environ
        data_dir = data_directory(environ)
        values: dict = {
            "data_dir": data_dir,
            "db_path": Path(environ.get("GRADTRACE_DB", data_dir / "gradtrace.db")),
        }
        for f in fields(cls):
            variable = ENV_PREFIX + f.name.upper()
            text = environ.get(variable)
            if f.name not in values and text is not None:
                values[f.name] = _parse(variable, text, type(getattr(cls, f.name)))
        return cls(**values)


def _parse(variable: str, text: str, kind: type):
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"{variable}={text!r} is not a valid {kind.__name__}") from None
