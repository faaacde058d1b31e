"""How a run can end, and the sentence a learner reads for each ending.

The statuses are the trace's `outcome.status` (docs/trace-format.md): `ok` and `error` come from
the snippet itself, the others from the sandbox. `event_limit` is how runs ended at the event cap
before recording stopped there instead and the snippet ran on: traces stored then still say it.
"""

from __future__ import annotations

import signal

from app.sandbox.settings import SandboxSettings

OK, ERROR = "ok", "error"
CPU_LIMIT, WALL_LIMIT, MEMORY_LIMIT = "cpu_limit", "wall_limit", "memory_limit"
OUTPUT_LIMIT, EVENT_LIMIT = "output_limit", "event_limit"
FORBIDDEN, CRASHED, REJECTED = "forbidden", "crashed", "rejected"
LIMITS = (CPU_LIMIT, WALL_LIMIT, MEMORY_LIMIT, OUTPUT_LIMIT, EVENT_LIMIT)
ALL = (OK, ERROR, *LIMITS, FORBIDDEN, CRASHED, REJECTED)

# What the kill list in seccomp.py is about, in a learner's words.
FORBIDDEN_CALL = (
    "The sandbox stopped the snippet: it made a system call snippets may not make "
    "(for example starting a program or a process, opening a network connection, or "
    "sending a signal)."
)


def _amount(n: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} bytes"


def _seconds(s: float) -> str:
    return f"{s:g} s"


def _at(line: int | None) -> str:
    return f" It was stopped at line {line}." if line else ""


def cpu_limit(settings: SandboxSettings, line: int | None = None) -> str:
    return (
        f"The snippet used more than {_seconds(settings.cpu_seconds)} of CPU time "
        f"(an endless loop?).{_at(line)}"
    )


def wall_limit(settings: SandboxSettings, line: int | None = None) -> str:
    return f"The snippet ran for more than {_seconds(settings.wall_seconds)}.{_at(line)}"


def memory_limit(settings: SandboxSettings, detail: str = "") -> str:
    text = f"The snippet needed more than the {_amount(settings.memory_bytes)} of memory a run has."
    return f"{text} ({detail})" if detail else text


def trace_too_large(settings: SandboxSettings, kept: int) -> str:
    return (
        f"The trace grew past {_amount(settings.max_trace_bytes)}; "
        f"it keeps the first {kept:,} events."
    )


def trace_overflow(settings: SandboxSettings) -> str:
    return (
        f"The run wrote more than {_amount(settings.max_trace_bytes)} of trace, so it was "
        "stopped and none of it was kept."
    )


def forbidden_error(message: str) -> str:
    return (
        f"The sandbox refused an operation: {message}. Snippets cannot read or write files, "
        "start processes, use the network or change signal handlers and timers."
    )


def too_long(settings: SandboxSettings, size: int) -> str:
    return (
        f"The snippet is {size:,} bytes long; snippets can be at most "
        f"{settings.max_source_bytes:,} bytes."
    )


def crashed(signum: int | None = None, detail: str = "") -> str:
    if signum is not None:
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        return f"The run crashed ({name}): the snippet broke the Python interpreter it ran in."
    return f"The run crashed: {detail}" if detail else "The run crashed."
