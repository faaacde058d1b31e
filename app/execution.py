"""Turning a snippet into a trace: through the sandbox (app/sandbox), so callers never need to
know how a snippet was run.

One sandbox per process, started on first use (or by the web app at startup). Runs are queued
fairly by client: the web app names each run's `Requester` (its session and address).
"""

from __future__ import annotations

import atexit
import threading
from contextvars import ContextVar

from app.sandbox import Requester, SandboxClient, SandboxSettings, probe

LOCAL = Requester("local", "local")  # the command line: one user, one client

_lock = threading.Lock()
_report_lock = threading.Lock()
_sandbox: SandboxClient | None = None
_report: dict | None = None

# the seconds the last run awaited in this task waited for a place and then took (None: not
# known): set by run_snippet_async, read by its caller for /metrics
run_timing: ContextVar[tuple[float | None, float | None]] = ContextVar(
    "run_timing", default=(None, None)
)


def sandbox(settings: SandboxSettings | None = None) -> SandboxClient:
    """The process's sandbox, started (and its zygote warm) on first call, with `settings`, by
    default the environment's (app/config.py)."""
    global _sandbox
    with _lock:
        if _sandbox is None or _sandbox.closed:
            if settings is None:
                from app.config import Settings  # pydantic: only once there is no sandbox yet

                settings = Settings.from_environment().sandbox
            client = SandboxClient(settings)
            client.start()
            _sandbox = client
            atexit.register(client.close)
        return _sandbox


def layer_report() -> dict:
    """Which sandbox layers hold here (probe.check), measured once per process."""
    global _report
    client = sandbox()
    with _report_lock:
        if _report is None:
            _report = probe.check(client)
            probe.log_report(_report)
        return _report


def known_layer_report() -> dict | None:
    """layer_report's answer if it has been measured (the app measures it at startup), else
    None: nothing is started or waited for."""
    with _report_lock:
        return _report


def run_snippet(code: str) -> dict:
    """Run `code` in the sandbox with `torch` resolving to the engine; return its trace.

    Raises app.sandbox.SandboxBusy when too many runs are waiting.
    """
    return sandbox().run_blocking(code, client=LOCAL)


async def run_snippet_async(code: str, requester: Requester) -> dict:
    """run_snippet for async routes, on behalf of `requester`: waits without holding a thread."""
    run_timing.set((None, None))

    def timed(waited: float | None, ran: float | None) -> None:
        run_timing.set((waited, ran))  # this task's context: its caller reads it

    return await sandbox().run(code, client=requester, timed=timed)


def running_sandbox() -> SandboxClient | None:
    """The process's sandbox if it has been started, else None (nothing is started)."""
    with _lock:
        return _sandbox


def missing_layers() -> list[str]:
    """Layers this kernel lacks, from the zygote's own start-up check (no probing)."""
    plan = sandbox().ready["plan"]
    return [
        name
        for name, present in (
            ("seccomp", plan["seccomp_arch"]),
            ("Landlock", plan["landlock_abi"]),
            ("namespaces", plan["namespaces"]),
            ("prctl hardening", plan["prctl"]),
        )
        if not present
    ]
