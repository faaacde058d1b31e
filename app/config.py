"""The app's settings: one object, read once from the environment (pydantic-settings).

Each setting is an environment variable, GRADTRACE_ and its name in capitals, a group's name
first for a setting of a group: `trusted_proxies` is GRADTRACE_TRUSTED_PROXIES,
`sandbox.cpu_seconds` GRADTRACE_SANDBOX_CPU_SECONDS, `store.database_url`
GRADTRACE_STORE_DATABASE_URL. The groups are the sandbox's limits (app/sandbox/settings.py),
the page drawing's (app/render_pool.py), the store's, and the limits each client is held to.
docs/deploying.md lists every setting in one table, which tests/app/test_settings.py holds to
this object. A bad value, or a variable whose name an earlier release used (RENAMED), stops
the server at start with the variable's name.

What the server writes (the database, session.key) goes in the data folder, GRADTRACE_DATA_DIR
or this user's own (platformdirs), never beside the code: installed, that is site-packages.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app import files
from app.render_pool import RenderSettings
from app.sandbox.settings import SandboxSettings

if TYPE_CHECKING:
    from app.store import StoreLimits

ENV_PREFIX = "GRADTRACE_"
MIB = 1024 * 1024

# Variables of earlier releases, and what they are called now: one set is refused at start
# rather than quietly ignored.
RENAMED = {
    "GRADTRACE_DB": "GRADTRACE_STORE_PATH",
    "GRADTRACE_DATABASE_URL": "GRADTRACE_STORE_DATABASE_URL",
    "GRADTRACE_MAX_STORED_TRACE_MIB": "GRADTRACE_STORE_MAX_TRACE_MIB",
    "GRADTRACE_MAX_STORE_MIB": "GRADTRACE_STORE_MAX_MIB",
    "GRADTRACE_OWNER_SHARE_PERCENT": "GRADTRACE_STORE_OWNER_SHARE_PERCENT",
    "GRADTRACE_UNVIEWED_DAYS": "GRADTRACE_STORE_UNVIEWED_DAYS",
    "GRADTRACE_MAX_SOURCE_BYTES": "GRADTRACE_SANDBOX_MAX_SOURCE_BYTES",
    **{
        f"GRADTRACE_{name}": f"GRADTRACE_LIMITS_{name}"
        for name in (
            "SESSION_SETTLE_SECONDS",
            "EARNED_SESSIONS_BURST",
            "EARNED_SESSIONS_PER_HOUR",
            "QUOTA_WINDOW_SECONDS",
            "SESSION_QUOTA_TRACES",
            "SESSION_QUOTA_MIB",
            "ADDRESS_QUOTA_TRACES",
            "ADDRESS_QUOTA_MIB",
            "MAX_CONNECTIONS",
            "MAX_CONNECTIONS_PER_ADDRESS",
            "HEADER_TIMEOUT_SECONDS",
            "KEEP_ALIVE_TIMEOUT_SECONDS",
            "BODY_IDLE_SECONDS",
            "BODY_DEADLINE_SECONDS",
        )
    },
}


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


# as written in the environment, comma-separated: not JSON, which pydantic-settings would expect
NamesSetting = Annotated[Names, NoDecode, PlainValidator(Names)]
NetworksSetting = Annotated[Networks, NoDecode, PlainValidator(Networks)]


def data_directory() -> Path:
    """This user's data folder (~/.local/share/gradtrace on Linux)."""
    return platformdirs.user_data_path("gradtrace", appauthor=False)


class _Group(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StoreSettings(_Group):
    """Where traces are kept, and how much of them (docs/storage.md)."""

    path: Path | None = None  # the SQLite file; none: gradtrace.db in the data folder
    # postgresql://user:password@host/database: one store for many servers; empty: the file
    database_url: str = ""
    max_trace_mib: int = Field(4, gt=0)  # compressed; a larger trace is kept cut short
    max_mib: int = Field(2048, gt=0)  # compressed, all traces; past it the least seen go
    # what one owner's address may hold of the store; past it its own least seen traces go
    owner_share_percent: float = Field(5.0, gt=0, le=100)
    unviewed_days: float = Field(7.0, gt=0)  # an anonymous trace nobody opened goes after this

    def limits(self) -> StoreLimits:
        # the store loads the engine (trace ids name its version): only when a store is opened,
        # so that the command line reads its settings without it (tests keep the defaults equal)
        from app.store import StoreLimits

        return StoreLimits(
            max_trace_bytes=self.max_trace_mib * MIB,
            max_total_bytes=self.max_mib * MIB,
            unviewed_seconds=self.unviewed_days * 24 * 3600,
            owner_share_percent=self.owner_share_percent,
        )


class LimitsSettings(_Group):
    """What each client is held to: sessions, quotas, connections and request pacing."""

    # a session counts as its address until its cookie is this old, and only so many of each
    # address's sessions may earn a place of their own: at once, then per hour (app/sessions.py)
    session_settle_seconds: float = Field(2.0, ge=0)
    earned_sessions_burst: int = Field(60, ge=0)
    earned_sessions_per_hour: float = Field(60.0, ge=0)
    # new traces each session and each address may store, per window (0: none, a read-only site)
    quota_window_seconds: float = Field(3600.0, gt=0)
    session_quota_traces: int = Field(300, ge=0)
    session_quota_mib: int = Field(64, ge=0)
    address_quota_traces: int = Field(3000, ge=0)
    address_quota_mib: int = Field(512, ge=0)
    # `gradtrace serve` (app/http_server.py): connections past the cap are closed on arrival;
    # each has header_timeout_seconds to send a request's headers
    max_connections: int = Field(500, gt=0)
    # so that no one address takes the whole cap; trusted proxies are not counted
    max_connections_per_address: int = Field(50, gt=0)
    header_timeout_seconds: float = Field(10.0, gt=0)
    keep_alive_timeout_seconds: int = Field(5, gt=0)
    # once the headers are in, each next piece of an unfinished body must come within this
    body_idle_seconds: float = Field(30.0, gt=0)
    # and the whole body within this, counted from when the app first asks for it
    body_deadline_seconds: float = Field(20.0, gt=0)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="_",
        env_nested_max_split=1,  # GRADTRACE_SANDBOX_CPU_SECONDS: the group, then its setting
        extra="ignore",  # other GRADTRACE_ variables are the tests' or the Makefile's
        frozen=True,
    )

    # the database's folder unless GRADTRACE_STORE_PATH says otherwise, and session.key's
    data_dir: Path = Field(default_factory=data_directory)
    session_secret: str = ""  # empty: a random key kept in session.key in data_dir
    lessons_dir: Path = files.LESSONS  # one Markdown file each (app/lessons)
    # Host headers answered (Starlette's TrustedHostMiddleware): any other name that points
    # here, as a DNS-rebinding page's does, is refused. IPv6 literals keep their brackets.
    allowed_hosts: NamesSetting = Names("localhost,127.0.0.1,::1,[::1]")
    # reverse proxies whose X-Forwarded-For, -Proto and X-Request-ID are believed
    # (app/client_address.py, app/request_ids.py)
    trusted_proxies: NetworksSetting = Networks()
    # who may read /metrics besides this machine (loopback), by client address
    metrics_networks: NetworksSetting = Networks()
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    render: RenderSettings = Field(default_factory=RenderSettings)
    page_cache_mib: int = Field(64, gt=0)  # drawn pages kept in memory
    store: StoreSettings = StoreSettings()
    limits: LimitsSettings = LimitsSettings()

    @property
    def db_path(self) -> Path:
        return self.store.path or self.data_dir / "gradtrace.db"

    @property
    def max_body_bytes(self) -> int:
        """The largest request body read (app/body_limit.py). A snippet within max_source_bytes
        grows when encoded: JSON writes a control byte as \\u00XX (6 bytes for 1), a form a
        non-ASCII byte as %XX (3 for 1). Twice the worst of those leaves room for the rest of
        the body: 240,000 bytes (about 234 KiB) at the default limit."""
        return 12 * self.sandbox.max_source_bytes

    @classmethod
    def from_environment(cls) -> Settings:
        """The settings the environment gives, or a SettingsError that names the variable."""
        for old, new in RENAMED.items():
            if old in os.environ:
                raise SettingsError(f"{old} is now called {new}: rename it")
        try:
            return cls()
        except ValidationError as error:
            raise SettingsError(_explain(error)) from None


class SettingsError(ValueError):
    """A setting the server cannot start with."""


def _explain(error: ValidationError) -> str:
    lines = []
    for problem in error.errors():
        variable = ENV_PREFIX + "_".join(str(part) for part in problem["loc"]).upper()
        message = problem["msg"].removeprefix("Value error, ")
        # a group's own check names its variable itself
        lines.append(message if message.startswith(ENV_PREFIX) else f"{variable}: {message}")
    return "; ".join(lines)
