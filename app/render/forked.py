"""Two cores for one page: a job run in a forked child while this process runs the others.

Graphviz holds the GIL for all of a layout (C code, no thread's to share), and a big trace's
tensors view is most of its page's drawing; the other view, the steps in words and the
inspector's facts do not need it. So a render worker (app/render_worker.py: one process, one
thread, one task at a time) forks for the biggest view and makes the rest meanwhile. Forked,
not spawned: the child starts from this process's state (the trace read, its graphs and steps
worked out, Graphviz loaded, the layouts remembered) and imports nothing.

The child is what its parent is: the same limits (RLIMIT_AS and the CPU backstop are per
process), the same trust. It dies with its parent (PR_SET_PDEATHSIG: a worker killed past its
budget takes it along) and hands back its result with `marshal`, which keeps the types as they
were (tuples, int keys: the page must come out the same) and runs nothing it reads. A child
that raises says why; one that dies without a word (Graphviz calls exit(1) when memory runs
out) is an error here, as it would have ended this process had it run here.
"""

from __future__ import annotations

import contextlib
import ctypes
import marshal
import os
import signal
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class ChildFailed(RuntimeError):
    """The forked job raised, or its process ended without an answer."""


def at_once(jobs: dict[str, Callable[[], object]], forked: str | None) -> dict[str, object]:
    """Each job's result, by name: the job named `forked` run in a forked child while the
    others run here, in turn; all of them here when `forked` is None (or no process can be
    forked). The forked job's result must be plain data (what `marshal` writes). Only for a
    process with one thread: a fork copies no other thread, and a lock one held stays held."""
    if forked is None:
        return {name: job() for name, job in jobs.items()}
    parent = os.getpid()
    reading, writing = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process to spare (a limit on processes, no memory): all of it here
        os.close(reading)
        os.close(writing)
        return {name: job() for name, job in jobs.items()}
    if pid == 0:
        _child(jobs[forked], reading, writing, parent)
    os.close(writing)
    try:
        here = {name: job() for name, job in jobs.items() if name != forked}
        with os.fdopen(reading, "rb") as source:
            data = source.read()
    except BaseException:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    _, status = os.waitpid(pid, 0)
    if not data:
        raise ChildFailed(f"the child drawing {forked} ended without an answer (status {status})")
    done, result = marshal.loads(data)
    if not done:
        if result == "MemoryError":  # as if it had run out here: the worker starts afresh
            raise MemoryError(f"out of memory drawing {forked}")
        raise ChildFailed(result)
    return {name: result if name == forked else here[name] for name in jobs}


def _child(job: Callable[[], object], reading: int, writing: int, parent: int) -> None:
    """The forked side: the job, its answer down the pipe, and out at once (os._exit: none of
    the parent's exit handlers, and none of its buffered output written twice)."""
    status = 0
    try:
        os.close(reading)
        _die_with(parent)
        try:
            answer = (True, job())
        except MemoryError:
            answer = (False, "MemoryError")
        except Exception as error:
            answer = (False, f"{type(error).__name__}: {error}"[:1000])
        with os.fdopen(writing, "wb") as sink:
            sink.write(marshal.dumps(answer))
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _die_with(parent: int) -> None:
    """Have Linux kill this process when its parent ends; then make sure the parent had not
    ended already, before the asking."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)
