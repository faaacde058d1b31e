"""A render worker: draws pages for the server in a process of its own, under hard limits.

Graphviz runs in C and cannot be interrupted; a hostile trace that makes it expand or loop would
otherwise take the server's memory, CPU and GIL with it (under a memory cap Graphviz calls
exit(1), and the whole server went). So the server (app/render_pool.py) starts a few of these as
fresh interpreters (`python -m app.render_worker`), never forked from its threads, with a
minimal environment; each sets its own limits before it reads anything:

- RLIMIT_AS: its address space (Graphviz's allocations fail here, not in the server);
- RLIMIT_CPU: a backstop, raised to "used so far + the per-task allowance" before each task, so
  one task cannot spin forever even if the parent's wall-clock budget failed to kill it.

Protocol, on stdin and stdout: each message is an 8-byte big-endian length and that many bytes
of JSON. A request is {"kind": "page" | "narration" | "quiz" | "export" | "picture", ...}; the
reply is {"ok": true, "result": ...} or {"ok": false, "error": "..."}. After a MemoryError the reply
says "fatal": the worker exits, as its heap may be in no state to go on, and the parent starts
another.

Before its first request the worker writes one message of its own, READY, once its imports are
done: the parent counts a task's budget from then, so a worker's start (half a second of
imports, more on a busy machine) is never charged to the first task it is given.
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import os
import resource
import struct
import sys
import time
from typing import BinaryIO

HEADER = struct.Struct(">Q")
TEST_TASKS_ENV = "GRADTRACE_RENDER_TEST_TASKS"  # "1": also the kinds the pool's tests use
READY = {"ready": True}  # the worker's first message: imported, limited, reading requests


def read_message(stream: BinaryIO, limit: int) -> dict | None:
    """The next message, or None at the end of the stream."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    if size > limit:
        raise ValueError(f"a message of {size:,} bytes")
    data = stream.read(size)
    if len(data) < size:
        return None
    return json.loads(data)


def encode(message: dict) -> bytes:
    """A message as the protocol frames it (ASCII JSON, so any text survives)."""
    data = json.dumps(message, allow_nan=False, separators=(",", ":")).encode("ascii")
    return HEADER.pack(len(data)) + data


# A drawing yields to the server's own work (answering, admitting, /healthz), as the sandbox's
# children do more so (app/sandbox/hardening.py NICENESS): a long export of a hostile trace
# shares the cores with pages, not with the server that answers them.
NICENESS = 5


def limit_resources(memory_mib: int) -> None:
    memory = memory_mib * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setpriority(os.PRIO_PROCESS, 0, max(os.getpriority(os.PRIO_PROCESS, 0), NICENESS))


def allow_cpu(seconds: float) -> None:
    """The CPU this process may have used by the end of the next task (SIGXCPU kills it)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(used + seconds) + 1
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def handle(request: dict, test_tasks: bool) -> object:
    kind = request["kind"]
    if kind == "page":
        from app.render.page import drawn_page

        # one thread here, and a core to spare: a big view is drawn by a forked child meanwhile
        return drawn_page(request["trace"], request["ident"], request["expand"], concurrently=True)
    if kind == "narration":
        from app.render import narrate
        from app.render.page import shown_trace

        return {"steps": narrate(request["trace"]), "trace": shown_trace(request["trace"])}
    if kind == "quiz":
        from app.lessons import quiz

        return quiz.context(request["trace"], request["questions"])
    if kind in ("export", "picture"):
        return _export(request)
    if test_tasks and kind == "sleep":  # a task that overruns its wall-clock budget
        time.sleep(request["seconds"])
        return None
    if test_tasks and kind == "allocate":  # a task that overruns its memory
        return len(bytearray(request["mib"] * 1024 * 1024))
    if test_tasks and kind == "echo":  # a reply of a chosen size
        return "x" * request["size"]
    if test_tasks and kind == "environ":  # what the worker was started with
        return sorted(os.environ)
    if test_tasks and kind == "niceness":  # the priority it runs at
        return os.getpriority(os.PRIO_PROCESS, 0)
    raise ValueError(f"unknown task {kind!r}")


def _export(request: dict) -> dict:
    """A file's bytes as base64 (the protocol is JSON), or why the reader's options cannot be
    used (`bad_option`, for a 422), or why this machine cannot draw it (`unavailable`)."""
    from app.export.make import export, picture
    from app.export.options import BadOption, ExportRequest
    from app.export.raster import ExportUnavailable

    try:
        if request["kind"] == "export":
            wanted = ExportRequest(**request["request"])
            data = export(request["trace"], request["ident"], wanted, live_url=request["live_url"])
        else:
            data = picture(request["trace"], **request["request"])
    except BadOption as problem:
        return {"bad_option": str(problem)}
    except ExportUnavailable as problem:
        return {"unavailable": str(problem)}
    return {"data": base64.b64encode(data).decode("ascii")}


def serve(source: BinaryIO, sink: BinaryIO, cpu_seconds: float, max_request: int) -> None:
    test_tasks = os.environ.get(TEST_TASKS_ENV) == "1"
    sink.write(encode(READY))
    sink.flush()
    # A task builds a few million objects (a 20,000-event trace parsed, its graph and steps)
    # and drops them all at its end: the cycle collector, run again and again while they are
    # made, finds nothing and takes a fifth of the task's time. So it runs between tasks only,
    # once the reply is sent; the memory limit still bounds a task.
    gc.disable()
    while True:
        gc.collect()
        request = read_message(source, max_request)
        if request is None:
            return
        allow_cpu(cpu_seconds)
        fatal = False
        try:
            reply = {"ok": True, "result": handle(request, test_tasks)}
        except MemoryError:
            reply, fatal = {"ok": False, "error": "out of memory", "fatal": True}, True
        except Exception as error:  # the renderer's failure is this task's, not the worker's
            reply = {"ok": False, "error": f"{type(error).__name__}: {error}"[:1000]}
        try:
            data = encode(reply)
        except MemoryError:
            data, fatal = encode({"ok": False, "error": "out of memory", "fatal": True}), True
        sink.write(data)
        sink.flush()
        if fatal:
            return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memory-mib", type=int, required=True)
    parser.add_argument("--cpu-seconds", type=float, required=True)
    parser.add_argument("--max-request-bytes", type=int, required=True)
    args = parser.parse_args()
    limit_resources(args.memory_mib)
    # The protocol owns the real stdout; anything else printing (a library's warning) goes to
    # stderr instead of into the middle of a message.
    sink = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    import pygraphviz  # noqa: F401

    import app.render.page  # noqa: F401  (before the first task: its import is not its cost)

    serve(sys.stdin.buffer, sink, args.cpu_seconds, args.max_request_bytes)


if __name__ == "__main__":
    main()
