"""From how a child ended (the zygote's report) and what it wrote on its channel, to the trace a
user sees.

Every ending becomes one status in `outcome` (statuses.py): the child's own when it finished
writing a trace, else the one its death means. Whatever valid trace the child wrote is kept,
so a run stopped at a limit still shows everything up to the stop.
"""

from __future__ import annotations

import errno
import re
import signal

from app.sandbox import protocol, statuses, validate
from app.sandbox.settings import SandboxSettings

CPU_SIGNALS = {signal.SIGXCPU, signal.SIGPROF}
# "[Errno 1] Operation not permitted": seccomp's default answer, and Landlock's EACCES
_REFUSED_ERRNO = re.compile(r"^\[Errno (\d+)\]")
REFUSED = {errno.EPERM, errno.EACCES}
MEMORY_NEAR_LIMIT = 0.9  # a killed child this close to its memory limit ran out of memory


def empty_trace(code: str, outcome: dict, settings: SandboxSettings) -> dict:
    """A trace of nothing, ending with `outcome`."""
    # the version is the tracer's, looked up only here: a process that only talks to the
    # sandbox (the command line, while its zygote starts) need not load the engine for it
    from engine.tracer import TRACE_VERSION

    return {
        "version": TRACE_VERSION,
        "code": code,
        "tensors": {},
        "nodes": {},
        "modules": [],
        "events": [],
        "stdout": "",
        "stderr": "",
        "outcome": outcome,
        "limits": {"truncated": False, "max_events": settings.max_events, "stopped_line": None},
        "unseeded_random": False,
    }


def resolve(code: str, report: dict, payload: bytes, settings: SandboxSettings) -> dict:
    """The trace for one run, from the zygote's `ended` report (with the server's `overflow`
    added) and the bytes the child wrote."""
    trace, malformed = None, None
    if payload:
        try:
            trace = validate.parse(payload, settings)
        except validate.Malformed as error:
            malformed = str(error)
    if trace is None:
        trace = empty_trace(code, {"status": statuses.OK}, settings)
    trace["code"] = code  # spans index into what was submitted, whatever the child claims
    ending = _ending(report, settings)
    if ending is not None:
        trace["outcome"] = ending
    elif malformed is not None or not payload:
        detail = f"its result was malformed ({malformed})" if malformed else "it wrote no result"
        trace["outcome"] = _crashed(statuses.crashed(detail=detail))
    else:
        trace["outcome"] = _translate(trace["outcome"], settings)
    if (
        trace["outcome"]["status"] == statuses.WALL_LIMIT
        and report.get("cpu_seconds", 0) >= settings.cpu_seconds
    ):
        # it had used up its CPU time too (the clock ran out first on a busy machine): the
        # loop is the problem, not the waiting
        trace["outcome"] = _status(statuses.CPU_LIMIT, statuses.cpu_limit(settings))
    return trace


def _ending(report: dict, settings: SandboxSettings) -> dict | None:
    """The status the child's death or exit code means; None when it exited normally."""
    signum = report.get("signal")
    code = report.get("exit_code")
    if report.get("overflow"):
        return _status(statuses.OUTPUT_LIMIT, statuses.trace_overflow(settings))
    if signum is None:
        if code == 0:
            return None
        if code == protocol.EXIT_NO_MEMORY:
            return _status(statuses.MEMORY_LIMIT, statuses.memory_limit(settings))
        if code == protocol.EXIT_SETUP_FAILED:
            return _crashed("The sandbox could not be set up for this run (see the server log).")
        return _crashed(statuses.crashed(detail=f"the child exited with status {code}"))
    if signum == signal.SIGSYS:
        return _status(statuses.FORBIDDEN, statuses.FORBIDDEN_CALL)
    if signum in CPU_SIGNALS:
        return _status(statuses.CPU_LIMIT, statuses.cpu_limit(settings))
    if report.get("wall_nudged") or report.get("wall_killed"):
        return _status(statuses.WALL_LIMIT, statuses.wall_limit(settings))
    if signum == signal.SIGKILL:
        if report.get("cpu_seconds", 0) >= settings.cpu_seconds:
            return _status(statuses.CPU_LIMIT, statuses.cpu_limit(settings))
        if report.get("max_rss_kib", 0) * 1024 >= MEMORY_NEAR_LIMIT * settings.memory_bytes:
            return _status(statuses.MEMORY_LIMIT, statuses.memory_limit(settings))
    return _crashed(statuses.crashed(signum))


def _translate(outcome: dict, settings: SandboxSettings) -> dict:
    """An error the snippet raised that really is the sandbox saying no, or memory running out."""
    if outcome.get("status") != statuses.ERROR:
        return outcome
    kind, message = outcome.get("type"), outcome.get("message", "")
    if kind == "MemoryError":
        return _status(statuses.MEMORY_LIMIT, statuses.memory_limit(settings, message))
    match = _REFUSED_ERRNO.match(message)
    if kind == "PermissionError" or (match and int(match.group(1)) in REFUSED):
        return _status(statuses.FORBIDDEN, statuses.forbidden_error(message))
    return outcome


def _status(status: str, message: str) -> dict:
    return {"status": status, "message": message}


def _crashed(message: str) -> dict:
    return _status(statuses.CRASHED, message)
