"""Every limit at its boundary: just under runs, just over ends with the limit's status.

The session's sandbox has 0.5 s of CPU (conftest.py), the wall-clock tests lower theirs to 2 s,
and the other limits are the defaults. What a run did before a limit stopped it stays in its
trace.
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from app.config import Settings, SettingsError
from app.sandbox import SandboxSettings, frontdoor, validate

DEFAULTS = SandboxSettings()

BUSY = """
import time
start = time.process_time()
print("started")
while time.process_time() - start < {seconds}:
    pass
print("done")
"""

WAIT = """
import warnings
lock = warnings.sys.modules["_thread"].allocate_lock()
lock.acquire()
print("waiting")
lock.acquire({timeout})
print("done")
"""


def run(sandbox, code: str, **limits) -> dict:
    trace = sandbox.run_blocking(code, client="limits", limits=limits or None)
    validate.check(trace)
    return trace


def test_the_defaults_are_the_documented_ones():
    assert DEFAULTS.cpu_seconds == 2.0
    assert DEFAULTS.wall_seconds == 5.0
    assert DEFAULTS.memory_mib == 672
    assert DEFAULTS.max_events == 20_000
    assert DEFAULTS.max_output_bytes == 64 * 1024
    assert DEFAULTS.max_source_bytes == 20_000
    assert DEFAULTS.max_queue == 256
    assert DEFAULTS.max_in_flight >= 2


def test_settings_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("GRADTRACE_SANDBOX_CPU_SECONDS", "1.5")
    monkeypatch.setenv("GRADTRACE_SANDBOX_NAMESPACES", "0")
    settings = Settings.from_environment().sandbox
    assert settings.cpu_seconds == 1.5
    assert settings.namespaces is False
    monkeypatch.setenv("GRADTRACE_SANDBOX_MEMORY_MIB", "lots")
    with pytest.raises(SettingsError, match="GRADTRACE_SANDBOX_MEMORY_MIB"):
        Settings.from_environment()
    monkeypatch.setenv("GRADTRACE_SANDBOX_MEMORY_MIB", "600")
    monkeypatch.setenv("GRADTRACE_SANDBOX_WALL_SECONDS", "0")
    with pytest.raises(SettingsError, match="GRADTRACE_SANDBOX_WALL_SECONDS must be positive"):
        Settings.from_environment()


def test_cpu_just_under_the_limit_finishes(sandbox, layers):
    trace = run(sandbox, BUSY.format(seconds=0.25))
    assert trace["outcome"] == {"status": "ok"}
    assert trace["stdout"] == "started\ndone\n"


def test_cpu_over_the_limit_stops_and_keeps_the_trace(sandbox, layers):
    trace = run(sandbox, BUSY.format(seconds=0.8))
    assert trace["outcome"]["status"] == "cpu_limit"
    assert "0.5 s of CPU time" in trace["outcome"]["message"]
    assert re.search(r"line [56]\.", trace["outcome"]["message"])  # in the loop
    assert trace["stdout"] == "started\n"
    assert [e["kind"] for e in trace["events"]] == ["print"]


def test_wall_clock_just_under_the_limit_finishes(sandbox, layers):
    trace = run(sandbox, WAIT.format(timeout="True, 1.0"), wall_seconds=2)
    assert trace["outcome"] == {"status": "ok"}
    assert trace["stdout"] == "waiting\ndone\n"


def test_wall_clock_over_the_limit_stops_and_keeps_the_trace(sandbox, layers):
    trace = run(sandbox, WAIT.format(timeout=""), wall_seconds=2)
    assert trace["outcome"]["status"] == "wall_limit"
    assert "2 s" in trace["outcome"]["message"]
    assert trace["stdout"] == "waiting\n"


def test_memory_under_the_limit_is_usable(sandbox, layers):
    # the address space is what the limit bounds; filling 300 MiB as well would take a third of
    # the CPU budget, which a busy machine stretches past it (np.zeros maps pages lazily)
    code = (
        "import numpy as np\nx = np.zeros(300 * 2 ** 20, dtype=np.uint8)\n"
        "x[-1] = 1\nprint(len(x) // 2 ** 20, int(x[-1]))\n"
    )
    trace = run(sandbox, code)
    assert trace["outcome"] == {"status": "ok"}, trace["outcome"]
    assert trace["stdout"] == "300 1\n"


def test_memory_over_the_limit_is_memory_limit(sandbox, layers):
    code = "import torch\na = torch.ones(2)\nprint(a)\nx = bytearray(600 * 2 ** 20)\n"
    trace = run(sandbox, code)
    assert trace["outcome"]["status"] == "memory_limit"
    assert "672 MiB" in trace["outcome"]["message"]
    assert trace["stdout"] == "tensor([1., 1.])\n"
    assert trace["events"][-1]["kind"] == "error"


EVENTS = 2_000  # a lowered cap: the same code path as the default's, in a tenth of the CPU


def test_events_up_to_the_cap_finish(sandbox, layers):
    code = f"import torch\nfor i in range({EVENTS}):\n    torch.ones(1)\n"
    trace = run(sandbox, code, max_events=EVENTS)
    assert trace["outcome"] == {"status": "ok"}
    assert len(trace["events"]) == EVENTS
    assert trace["limits"] == {"truncated": False, "max_events": EVENTS, "stopped_line": None}


def test_past_the_cap_the_snippet_runs_on_unrecorded_to_its_end(sandbox, layers):
    code = (
        f"import torch\nfor i in range({EVENTS + 1}):\n    x = torch.ones(1) * i\nprint(x.item())\n"
    )
    trace = run(sandbox, code, max_events=EVENTS)
    assert trace["outcome"] == {"status": "ok"}
    assert trace["stdout"] == f"{float(EVENTS)}\n"
    assert len(trace["events"]) == EVENTS
    assert trace["limits"] == {"truncated": True, "max_events": EVENTS, "stopped_line": 3}


def test_an_endless_loop_past_the_cap_ends_at_the_cpu_limit(sandbox, layers):
    code = "import torch\nprint('start')\nwhile True:\n    torch.ones(1)\n"
    trace = run(sandbox, code, max_events=10, cpu_seconds=1.0)
    assert trace["outcome"]["status"] == "cpu_limit"
    assert trace["stdout"] == "start\n" and len(trace["events"]) == 10
    assert trace["limits"]["stopped_line"] == 4


def test_output_up_to_the_cap(sandbox, layers):
    trace = run(sandbox, f"print('x' * {DEFAULTS.max_output_bytes - 1})\n")
    assert trace["outcome"] == {"status": "ok"}
    assert len(trace["stdout"]) == DEFAULTS.max_output_bytes


def test_output_one_byte_past_the_cap_is_cut_with_a_marker(sandbox, layers):
    trace = run(sandbox, f"print('x' * {DEFAULTS.max_output_bytes})\nprint('never')\n")
    assert trace["outcome"]["status"] == "output_limit"
    stdout = trace["stdout"]
    assert stdout.startswith("x" * DEFAULTS.max_output_bytes)
    assert stdout.endswith("[output truncated: more than 64 KiB printed]\n")
    assert "never" not in stdout


def test_source_of_exactly_the_limit_runs(sandbox, layers):
    code = "x = 1\n" + "#" * (DEFAULTS.max_source_bytes - 7) + "\n"
    assert len(code.encode()) == DEFAULTS.max_source_bytes
    assert run(sandbox, code)["outcome"] == {"status": "ok"}


def test_source_one_byte_longer_is_rejected(sandbox, layers):
    code = "x = 1\n" + "#" * (DEFAULTS.max_source_bytes - 6) + "\n"
    # not validate.check: its cap on the code is the very limit this trace reports
    trace = sandbox.run_blocking(code, client="limits")
    assert trace["outcome"]["status"] == "rejected"
    assert "20,001 bytes" in trace["outcome"]["message"]
    assert trace["events"] == []


def _nested(levels: int) -> str:
    return "x = " + "[" * levels + "]" * levels + "\n"


def test_nesting_up_to_the_limit_runs_and_one_more_is_rejected(sandbox, layers):
    levels = next(
        n
        for n in range(1, 200)
        if frontdoor._depth(ast.parse(_nested(n))) == DEFAULTS.max_ast_depth
    )
    assert run(sandbox, _nested(levels))["outcome"] == {"status": "ok"}
    trace = run(sandbox, _nested(levels + 1))
    assert trace["outcome"]["status"] == "rejected"
    assert "100 levels" in trace["outcome"]["message"]


def test_recursion_is_bounded(sandbox, layers):
    code = "def f(n):\n    return 0 if n == 0 else f(n - 1)\nprint(f({depth}))\n"
    assert run(sandbox, code.format(depth=900))["stdout"] == "0\n"
    trace = run(sandbox, code.format(depth=1100))
    assert trace["outcome"]["type"] == "RecursionError"


def test_a_trace_past_its_size_cap_is_cut_to_whole_events(sandbox, layers):
    code = "for i in range(300):\n    print(i)\n"
    size = len(json.dumps(run(sandbox, code), separators=(",", ":")))
    assert run(sandbox, code, max_trace_bytes=size)["outcome"] == {"status": "ok"}
    trace = run(sandbox, code, max_trace_bytes=size - 1)
    assert trace["outcome"]["status"] == "output_limit"
    assert 0 < len(trace["events"]) < 300
    assert trace["limits"]["truncated"] is True


def test_per_run_limits_can_only_be_lowered(sandbox):
    assert sandbox.settings.tightened({"cpu_seconds": 100}).cpu_seconds == 0.5
    with pytest.raises(ValueError):
        sandbox.settings.tightened({"uid_base": 0})


def test_a_child_runs_at_a_lower_priority_than_the_server():
    """However many endless loops run, the server's own work comes first: the child's
    resource limits include its niceness (checked in a fork, since they are for good)."""
    import os

    from app.sandbox import hardening

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: limit itself as a run's child does, and say its priority
        try:
            hardening.limit_resources(DEFAULTS)
            os.write(write, str(os.getpriority(os.PRIO_PROCESS, 0)).encode())
        finally:
            os._exit(0)
    os.close(write)
    said = os.read(read, 64).decode()
    os.waitpid(pid, 0)
    os.close(read)
    assert int(said) >= hardening.NICENESS > os.getpriority(os.PRIO_PROCESS, 0)
