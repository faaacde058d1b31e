"""Every limit of the sandbox, in one frozen object: the `sandbox` group of the app's settings.

Each field is read from an environment variable named after it by app/config.py: `cpu_seconds`
from GRADTRACE_SANDBOX_CPU_SECONDS, `memory_mib` from GRADTRACE_SANDBOX_MEMORY_MIB, and so on.
docs/sandbox.md says what each one bounds. A plain dataclass, so that the zygote and its
children, which get it as JSON, load no settings library.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

ENV_PREFIX = "GRADTRACE_SANDBOX_"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class SandboxSettings:
    """What one run may use, and how many runs may wait or run at once."""

    # ***** one run *****
    cpu_seconds: float = 2.0  # CPU time for the snippet (a timer; RLIMIT_CPU is a backstop)
    wall_seconds: float = 5.0  # from fork to result, whatever the snippet does
    memory_mib: int = 672  # address space of the child; interpreter, numpy and MKL take 310 MiB
    max_events: int = 20_000  # trace events: the tracer's DEFAULT_MAX_EVENTS (a test says so)
    max_output_bytes: int = 64 * 1024  # what the snippet prints (stdout, and stderr apart)
    max_source_bytes: int = 20_000  # the snippet's source, UTF-8
    max_trace_bytes: int = 16 * 1024 * 1024  # the serialised trace the child hands back
    max_ast_depth: int = 100  # nesting of the snippet's syntax tree
    recursion_limit: int = 1000  # Python's, set in the child; snippets cannot raise it
    # ***** the server *****
    max_in_flight: int = field(default_factory=lambda: 2 * _cores())
    max_queue: int = 256  # runs waiting for a slot, all clients together
    # a client is a browser session, or an address for callers without a session cookie
    per_client_in_flight: int = 2  # one client's runs at once; more wait behind other clients
    per_client_queue: int = 8  # one client's waiting runs; past it the client gets 429
    per_address_queue: int = 200  # all the waiting runs of one address's sessions; then 429
    recycle_after_runs: int = 10_000  # a fresh zygote (fresh memory layout) after this many
    recycle_after_seconds: float = 3600.0
    uid_base: int = 61_000  # started as root, each concurrent child runs as uid_base + slot
    namespaces: bool = True  # new user, network and IPC namespaces per child, where allowed
    python: str = sys.executable  # the interpreter the zygote runs on

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if type(value) in (int, float) and value <= 0:
                raise ValueError(f"{ENV_PREFIX}{f.name.upper()} must be positive")
        if self.recursion_limit < 50:
            raise ValueError(f"{ENV_PREFIX}RECURSION_LIMIT must be at least 50")

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * 1024 * 1024

    def tightened(self, limits: Mapping[str, float]) -> SandboxSettings:
        """These settings with some per-run limits lowered (never raised): for probes and tests."""
        changes = {}
        for name, value in limits.items():
            if name not in RUN_LIMITS:
                raise ValueError(f"{name} is not a per-run limit")
            changes[name] = min(getattr(self, name), type(getattr(self, name))(value))
        return dataclasses.replace(self, **changes)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> SandboxSettings:
        return cls(**json.loads(text))

    def describe(self) -> dict:
        """The limits a user meets, for /healthz and the docs."""
        return {name: getattr(self, name) for name in RUN_LIMITS}


RUN_LIMITS = (
    "cpu_seconds",
    "wall_seconds",
    "memory_mib",
    "max_events",
    "max_output_bytes",
    "max_source_bytes",
    "max_trace_bytes",
)
