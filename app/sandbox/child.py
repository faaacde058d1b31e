"""The throwaway child: harden, read one snippet, run it under the tracer, write its trace, exit.

`serve` runs in a process forked from the zygote and never returns. Its channel (a socket whose
other end the server holds) brings the snippet and takes the trace back, so neither ever passes
through the zygote. The trace is serialised here, in the child, as JSON text: nothing is ever
pickled, and the server only parses JSON.

Limits that leave a trace: the CPU timer (SIGPROF) and the zygote's wall-clock nudge (SIGUSR1)
raise `Stopped` inside the snippet, so the tracer keeps everything up to that point. The
handler waits while the tracer itself is running (so its tables are never half-written) and
is reinvoked every few milliseconds of CPU until it finds a safe moment. A snippet that keeps
catching `Stopped` is ended outright after a few (SIGXCPU to itself), and RLIMIT_CPU kills
whatever the handler never gets to run in (one long C call).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from typing import NoReturn

from app import trace_cut
from app.sandbox import frontdoor, hardening, probe, protocol, seccomp, statuses
from app.sandbox.outcome import empty_trace
from app.sandbox.settings import SandboxSettings
from engine import locations
from engine.snippet import SNIPPET_FILENAME, Importer
from engine.tracer import Stopped, trace_snippet

TIMER_REPEAT = 0.02  # seconds of CPU between retries once the budget is spent
GIVE_UP_AFTER = 10  # Stopped a snippet may catch before it is simply ended
# the tracer's frames, by the name their code has before and after engine.locations renames it
_TRACER_FILES = tuple(
    name
    for module in ("engine.tracer", "engine.trace_values")
    for name in (sys.modules[module].__file__, locations.code_filename(sys.modules[module]))
)


class _Run:
    """What the signal handler needs to know about the run in progress."""

    settings: SandboxSettings
    running = False
    exceeded: str | None = None  # the first limit that fired, even if the snippet caught it
    stops = 0  # Stopped raised into the snippet so far


def _on_limit(signum: int, frame) -> None:
    if not _Run.running:
        return  # serialising the trace: let it finish (RLIMIT_CPU still bounds it)
    status = statuses.CPU_LIMIT if signum == signal.SIGPROF else statuses.WALL_LIMIT
    _Run.exceeded = _Run.exceeded or status
    line = _interruptible_line(frame)
    if line is None:
        return  # inside the tracer, or not in the snippet: try again on the next signal
    _Run.stops += 1
    if _Run.stops > GIVE_UP_AFTER:  # it keeps catching Stopped: end it, trace and all
        os.kill(os.getpid(), signal.SIGXCPU if status == statuses.CPU_LIMIT else signal.SIGKILL)
    message = (statuses.cpu_limit if status == statuses.CPU_LIMIT else statuses.wall_limit)(
        _Run.settings, line
    )
    raise Stopped(status, message)


def _interruptible_line(frame) -> int | None:
    """The snippet line running now, or None when stopping here could tear the tracer's state."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename == SNIPPET_FILENAME:
            return frame.f_lineno
        if filename in _TRACER_FILES:
            return None
        frame = frame.f_back
    return None


def trace_run(code: str, settings: SandboxSettings, importer: Importer) -> dict:
    """Check and run `code` under the tracer with the sandbox's caps. Also the zygote's warm-up."""
    try:
        frontdoor.check_source(code, settings)
    except frontdoor.Rejected as refusal:
        return rejected_trace(code, str(refusal), settings)
    random.seed(0)  # as the engine's generator: the same code gives the same trace
    sys.setrecursionlimit(settings.recursion_limit)
    _Run.settings, _Run.exceeded, _Run.stops, _Run.running = settings, None, 0, True
    try:
        trace = trace_snippet(
            code,
            max_events=settings.max_events,
            importer=importer,
            max_output=settings.max_output_bytes,
        )
    finally:
        _Run.running = False
    if _Run.exceeded and trace["outcome"]["status"] in (statuses.OK, statuses.ERROR):
        # the snippet caught the Stopped and went on; the limit still ended it
        message = statuses.cpu_limit if _Run.exceeded == statuses.CPU_LIMIT else statuses.wall_limit
        trace["outcome"] = {"status": _Run.exceeded, "message": message(settings)}
    return trace


def rejected_trace(code: str, message: str, settings: SandboxSettings) -> dict:
    return empty_trace(code, {"status": statuses.REJECTED, "message": message}, settings)


def encode(trace: dict, settings: SandboxSettings) -> bytes:
    """The trace as JSON, cut to whole events if it is larger than max_trace_bytes."""
    last: list = [None, b""]  # the last trace measured, and its bytes

    def size(candidate: dict) -> int:
        last[:] = candidate, _dumps(candidate)
        return len(last[1])

    def outcome(kept: int) -> dict:
        return {
            "status": statuses.OUTPUT_LIMIT,
            "message": statuses.trace_too_large(settings, kept),
        }

    fitted = trace_cut.fit(trace, size, settings.max_trace_bytes, outcome)
    return last[1] if last[0] is fitted else _dumps(fitted)


def _dumps(trace: dict) -> bytes:
    return json.dumps(trace, allow_nan=False, separators=(",", ":")).encode("ascii")


def serve(
    command: dict,
    settings: SandboxSettings,
    plan: hardening.Plan,
    seccomp_filter: seccomp.Filter | None,
    importer: Importer,
    *,
    slot: int,
    channel: int,
    devnull: int,
    zygote_pid: int,
) -> NoReturn:
    """Everything a child does, from just after fork to its exit. `command` is the zygote's
    (no code in it): the snippet is read from the channel once the child is hardened."""
    try:
        try:
            applied = _harden(settings, plan, seccomp_filter, slot, channel, devnull, zygote_pid)
        except hardening.SetupError as error:
            os.write(2, f"gradtrace sandbox: child setup failed: {error}\n".encode())
            os._exit(protocol.EXIT_SETUP_FAILED)
        if command["op"] == "probe":
            data = json.dumps(probe.in_child(command["name"], applied)).encode()
        else:
            limit = protocol.request_limit(settings.max_source_bytes)
            code = protocol.read_request(hardening.CHANNEL_FD, limit)
            data = encode(trace_run(code, settings, importer), settings)
        _write_all(hardening.CHANNEL_FD, data)
        os._exit(0)
    except MemoryError:
        os._exit(protocol.EXIT_NO_MEMORY)
    except BaseException as error:
        os._exit(0 if _report_internal(command, settings, error) else protocol.EXIT_INTERNAL)


def _report_internal(command: dict, settings: SandboxSettings, error: BaseException) -> bool:
    """Say what went wrong in the child's own code, if the channel still takes it. (The server
    puts the submitted code back into the trace.)"""
    if command.get("op") != "run":
        return False
    detail = f"the sandbox failed while running it ({type(error).__name__}: {error})"
    crashed = {"status": statuses.CRASHED, "message": statuses.crashed(detail=detail)}
    try:
        _write_all(hardening.CHANNEL_FD, encode(empty_trace("", crashed, settings), settings))
    except BaseException:
        return False
    return True


def _harden(settings, plan, seccomp_filter, slot, channel, devnull, zygote_pid) -> dict:
    applied = hardening.enter_namespaces(plan, slot)
    applied.update(hardening.restrict_self(plan, zygote_pid))
    applied.update(hardening.close_descriptors(channel, devnull))
    applied.update(hardening.limit_resources(settings))
    signal.signal(signal.SIGPROF, _on_limit)
    signal.signal(signal.SIGUSR1, _on_limit)
    signal.setitimer(signal.ITIMER_PROF, settings.cpu_seconds, TIMER_REPEAT)
    applied["cpu_timer"] = True
    applied.update(hardening.lock(plan, seccomp_filter))
    return applied


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
