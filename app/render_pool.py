"""Drawing pages outside the server's address space, each under a budget.

A stored trace is the work of a snippet the server does not trust, and drawing it runs Graphviz,
C code that cannot be interrupted. Done in the server, one hostile link could take seconds of
its CPU, hold the GIL, fill its memory, or (Graphviz calls exit(1) when malloc fails) end it.
So pages are drawn by a small pool of long-lived worker processes (app/render_worker.py):

- fresh interpreters (`python -m app.render_worker`), not forks of the threaded server, started
  with a minimal environment (none of the server's secrets), each with RLIMIT_AS and a CPU
  backstop it sets itself;
- a wall-clock budget per task, counted from the worker's READY (its start is not the task's):
  past it the parent kills that worker and starts another;
- length-prefixed JSON both ways over pipes, never pickle; a reply larger than
  `max_reply_bytes` kills the worker too;
- as many renders at once as workers, a bounded queue behind them, and RenderBusy past it
  (the route answers 503 with Retry-After); exports, which may take a worker for a minute,
  fewer at once than the workers, so that pages are drawn however many are asked for, and a
  few more waiting their turn in order (each client's one at most: app/shares.py);
- all waiting is asyncio on the pipes: no thread of the server's shared pool is held.

Any failure of a task (budget, memory, a dead worker, a reply too large, the renderer raising)
is TooLargeToDraw, with a reason to log; the pool goes on with a fresh worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from app.busy import Busy
from app.files import code_folder_for_children
from app.render_worker import HEADER, READY, TEST_TASKS_ENV

log = logging.getLogger("gradtrace.render")


class RawJSON:
    """JSON text sent to a worker as it is: a stored trace is never parsed in the server, whose
    event loop and memory it would take (a 20,000-event trace is about 100 ms and 100 MB of
    Python objects)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


Trace = dict | RawJSON  # a run in hand, or a stored one's text


class TooLargeToDraw(Exception):
    """This trace could not be drawn within the budget; `reason` says what ran out."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RenderBusy(Busy):
    """Every worker is busy and the queue is full: try again in `retry_after` seconds."""

    status_code = 503
    reason = "render"
    message = "The server is busy drawing traces; try again shortly."

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"all render workers are busy; retry in {retry_after} s")
        self.retry_after = retry_after


@dataclass(frozen=True)
class RenderSettings:
    """The pool's limits; the app sets those it lets deployers change from app/config.py."""

    workers: int = 2  # renders at once
    queue: int = 16  # renders waiting for a worker; past this, RenderBusy
    # wall clock per task, from sending it to its reply: a 20,000-event page takes about 1.5 s,
    # and a hostile link holds a page for at most this twice (the drawing, then the words)
    budget_seconds: float = 4.0
    # an export draws every step of its range (up to app.export.options.MAX_FRAMES images)
    export_budget_seconds: float = 60.0
    # exports at once: fewer than the workers, so that however many exports are asked for, a
    # worker is left to draw pages; `export_queue` more wait their turn, and past those
    # RenderBusy at once rather than a long wait
    export_slots: int = 1
    export_queue: int = 4
    export_retry_after: int = 10  # seconds, for an export turned away
    # each client's share of the above (app/shares.py): pages drawn (or quizzes worked out) at
    # once for one session, and for all the sessions of one address together; exports likewise
    session_renders: int = 2
    address_renders: int = 8
    session_exports: int = 1
    address_exports: int = 2
    start_seconds: float = 30.0  # a new worker's imports, before it says it is ready (not budget)
    memory_mib: int = 1024  # each worker's address space
    # each task's CPU backstop in the worker, past the longest budget (the budget acts first)
    cpu_seconds: float = 75.0
    max_reply_bytes: int = 64 * 1024 * 1024
    max_request_bytes: int = 256 * 1024 * 1024
    retry_after: int = 2  # seconds, for RenderBusy
    test_tasks: bool = False  # let the tests send tasks that sleep or allocate


class RenderPool:
    """`await pool.page(trace, ident, expand)`, `await pool.narration(trace)`; `await
    pool.start()` at app start (or let the first task start the workers) and `await
    pool.close()` at shutdown. Bound to the event loop it is first used in."""

    def __init__(
        self,
        settings: RenderSettings | None = None,
        observe: Callable[[dict, float, bool], None] | None = None,
    ) -> None:
        self.settings = settings or RenderSettings()
        # told of each task a worker finished: (the task, its seconds, whether it was drawn)
        self._observe = observe
        self._idle: asyncio.Queue[_Worker | None] | None = None
        self._admitted = 0  # tasks running or waiting
        self._exports: asyncio.Semaphore | None = None  # the export slots (made in the loop)
        self._exports_waiting = 0
        self._closed = False
        self._live: set[_Worker] = set()  # every worker started and not yet stopped
        self._reaping: set[asyncio.Task] = set()

    # ***** the API *****

    async def page(self, trace: Trace, ident: str, expand: Iterable[str] = ()) -> dict:
        """The page of a trace as the templates read it (app.render.page.drawn_page)."""
        request = {"kind": "page", "trace": trace, "ident": ident, "expand": list(expand)}
        return await self.run(request)

    async def narration(self, trace: Trace) -> dict:
        """Only the steps' texts (no Graphviz), and what the page shows of the trace besides:
        {"steps": [...], "trace": {...}}, the fallback when a page is too large."""
        return await self.run({"kind": "narration", "trace": trace})

    async def quiz(self, trace: Trace, questions: list[dict] | None = None) -> dict:
        """Quick checks for a trace (app.lessons.quiz.context): a lesson's `questions`, or the
        generated ones, with what grading them needs."""
        return await self.run({"kind": "quiz", "trace": trace, "questions": questions})

    async def export(self, trace: Trace, ident: str, request: dict, live_url: str | None) -> dict:
        """A file of the trace (app.export.make.export; `request` is an ExportRequest's fields):
        {"data": base64} or {"bad_option": message} or {"unavailable": message}."""
        task = {"kind": "export", "trace": trace, "ident": ident, "request": request}
        if self._exports is None:
            slots = min(self.settings.export_slots, max(self.settings.workers - 1, 1))
            self._exports = asyncio.Semaphore(slots)  # first come, first served
        if self._exports.locked() and self._exports_waiting >= self.settings.export_queue:
            raise RenderBusy(self.settings.export_retry_after)
        self._exports_waiting += 1
        try:
            await self._exports.acquire()
        finally:
            self._exports_waiting -= 1
        try:
            budget = self.settings.export_budget_seconds
            return await self.run({**task, "live_url": live_url}, budget)
        finally:
            self._exports.release()

    async def picture(self, trace: Trace, request: dict) -> dict:
        """One step as a picture (app.export.make.picture; `request`: kind, view, theme, step),
        answered as `export` is."""
        return await self.run({"kind": "picture", "trace": trace, "request": request})

    async def start(self) -> None:
        """Start every worker now rather than at the first tasks."""
        idle = self._queue()
        waiting = []
        while not idle.empty():
            waiting.append(idle.get_nowait())
        started = await asyncio.gather(
            *(self._ready(worker) for worker in waiting), return_exceptions=True
        )
        for worker in started:
            idle.put_nowait(worker if isinstance(worker, _Worker) else None)

    async def close(self) -> None:
        """Stop the workers; tasks still running end with TooLargeToDraw."""
        self._closed = True
        for worker in list(self._live):
            self._discard(worker)
        for task in list(self._reaping):
            with contextlib.suppress(Exception):
                await task

    # ***** running a task *****

    async def run(self, request: dict, budget: float | None = None):
        """Send `request` to a free worker and return its result, within `budget` seconds (the
        pool's page budget unless given)."""
        if self._closed:
            raise TooLargeToDraw("the render pool is closed")
        data = await _framed(request)
        if len(data) - HEADER.size > self.settings.max_request_bytes:
            raise TooLargeToDraw("the trace is too large to send to a render worker")
        limit = self.settings.workers + self.settings.queue
        if self._admitted >= limit:
            raise RenderBusy(self.settings.retry_after)
        self._admitted += 1
        try:
            idle = self._queue()
            worker = await idle.get()
            try:
                if worker is None or not worker.alive():
                    worker = await self._spawn()
                started = time.perf_counter()
                try:
                    budget = budget or self.settings.budget_seconds
                    reply = await self._exchange(worker, data, budget)
                except TooLargeToDraw:
                    self._observed(request, started, False)
                    raise
                self._observed(request, started, bool(reply.get("ok")))
            except BaseException:
                if worker is not None:
                    self._discard(worker)
                idle.put_nowait(None)  # a fresh worker is started when this slot is taken
                raise
            if reply.get("fatal"):
                self._discard(worker)
                worker = None
            idle.put_nowait(worker)
        finally:
            self._admitted -= 1
        if not reply.get("ok"):
            raise TooLargeToDraw(f"the renderer failed: {reply.get('error', 'no reason')}")
        return reply["result"]

    def _observed(self, request: dict, started: float, ok: bool) -> None:
        seconds = time.perf_counter() - started
        if self._observe is not None:
            self._observe(request, seconds, ok)
        # in the requesting task, so under its request's id (app/request_ids.py)
        log.info(
            "render: %s %s in %.3f s",
            request.get("kind"),
            "drawn" if ok else "failed",
            seconds,
            extra={"render_kind": request.get("kind"), "seconds": round(seconds, 4), "ok": ok},
        )

    async def _exchange(self, worker: _Worker, data: bytes, budget: float) -> dict:
        settings = self.settings
        try:
            return await asyncio.wait_for(worker.call(data, settings.max_reply_bytes), budget)
        except TimeoutError:
            raise TooLargeToDraw(f"drawing took longer than its budget of {budget:g} s") from None
        except _ReplyTooLarge as error:
            raise TooLargeToDraw(f"the drawing is larger than {error.limit:,} bytes") from None
        except (asyncio.IncompleteReadError, ConnectionError):
            code = await worker.exit_code()
            raise TooLargeToDraw(_death(code, settings.memory_mib)) from None
        except ValueError:  # not JSON: the worker's output is not to be trusted any more
            raise TooLargeToDraw("the render worker's reply was unreadable") from None

    async def _ready(self, worker: _Worker | None) -> _Worker:
        return worker if worker is not None else await self._spawn()

    def _queue(self) -> asyncio.Queue:
        if self._idle is None:
            self._idle = asyncio.Queue()
            for _ in range(self.settings.workers):
                self._idle.put_nowait(None)  # started when first needed
        return self._idle

    async def _spawn(self) -> _Worker:
        settings = self.settings
        env = {
            "PATH": os.defpath,
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "LANG": "C.UTF-8",
            "OPENBLAS_NUM_THREADS": "1",  # a thread pool's reserved memory counts in RLIMIT_AS
            "OMP_NUM_THREADS": "1",
        }
        if code := code_folder_for_children():  # a checkout's; installed, Python finds it
            env["PYTHONPATH"] = code
        if settings.test_tasks:
            env[TEST_TASKS_ENV] = "1"
        try:
            process = await self._start_process(env)
        except OSError as error:
            raise TooLargeToDraw(f"no render worker could be started ({error})") from None
        worker = _Worker(process)
        self._live.add(worker)
        try:
            ready = await asyncio.wait_for(worker.reply(1024), settings.start_seconds)
        except Exception:
            ready = None
        if ready != READY:
            self._discard(worker)
            raise TooLargeToDraw("a render worker did not start")
        return worker

    async def _start_process(self, env: dict[str, str]) -> asyncio.subprocess.Process:
        settings = self.settings
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-P",  # not the working folder on the path: it names nothing of ours
            "-m",
            "app.render_worker",
            "--memory-mib",
            str(settings.memory_mib),
            "--cpu-seconds",
            str(settings.cpu_seconds),
            "--max-request-bytes",
            str(settings.max_request_bytes),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            cwd="/",
            close_fds=True,
            start_new_session=True,  # the server's terminal signals are not the worker's
        )

    def _discard(self, worker: _Worker) -> None:
        """Kill a worker whose state is unknown (mid-task, timed out, dead) and reap it."""
        self._live.discard(worker)
        task = asyncio.ensure_future(worker.stop())
        self._reaping.add(task)
        task.add_done_callback(self._reaping.discard)

    def load(self) -> dict:
        """Tasks running or waiting, and worker processes alive (/metrics, /healthz)."""
        alive = sum(1 for worker in self._live if worker.alive())
        return {"tasks": self._admitted, "alive": alive, "workers": self.settings.workers}

    @property
    def pids(self) -> list[int]:
        """The process ids of the workers started and not stopped (for tests and /healthz)."""
        return sorted(worker.process.pid for worker in self._live)


# Writing a 20,000-event trace as JSON takes 0.15 s of the event loop's thread (and the GIL, so
# a thread would not help): it is written a slice at a time, letting the loop in between.
SLICE = 500  # entries of a list or table per slice
SLICED_DEPTH = 3  # the request, the trace, its tables: containers below are written whole


async def _framed(message: dict) -> bytes:
    """The message as the worker reads it (see app/render_worker.py), written in slices."""
    parts: list[str] = []
    await _write(message, parts, 0)
    data = "".join(parts).encode()  # ASCII, as json.dumps writes it (and the store keeps it)
    return HEADER.pack(len(data)) + data


async def _write(value, parts: list[str], depth: int) -> None:
    if type(value) is RawJSON:
        parts.append(value.text)
    elif depth < SLICED_DEPTH and type(value) is dict:
        items = list(value.items())
        parts.append("{")
        for start in range(0, len(items), SLICE):
            for n, (key, item) in enumerate(items[start : start + SLICE], start):
                parts.append(f"{',' if n else ''}{_dumps(key)}:")
                await _write(item, parts, depth + 1)
            await asyncio.sleep(0)
        parts.append("}")
    elif depth < SLICED_DEPTH and type(value) is list and len(value) > SLICE:
        parts.append("[")
        for start in range(0, len(value), SLICE):
            parts.append(("," if start else "") + _dumps(value[start : start + SLICE])[1:-1])
            await asyncio.sleep(0)
        parts.append("]")
    else:
        parts.append(_dumps(value))


def _dumps(value) -> str:
    return json.dumps(value, allow_nan=False, separators=(",", ":"))


class _ReplyTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    def alive(self) -> bool:
        return self.process.returncode is None

    async def call(self, data: bytes, max_reply: int) -> dict:
        self.process.stdin.write(data)
        await self.process.stdin.drain()
        return await self.reply(max_reply)

    async def reply(self, max_reply: int) -> dict:
        stdout = self.process.stdout
        (size,) = HEADER.unpack(await stdout.readexactly(HEADER.size))
        if size > max_reply:
            raise _ReplyTooLarge(max_reply)
        return json.loads(await stdout.readexactly(size))

    async def exit_code(self) -> int | None:
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(self.process.wait(), 1.0)
        return None

    async def stop(self) -> None:
        """Kill it and reap it. Its pipes are drained to their end first: asyncio counts a
        process as ended only once its pipes are closed, and a half-read reply keeps its
        stdout open."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        self.process.stdin.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.process.stdout.read(), 5.0)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), 5.0)


def _death(code: int | None, memory_mib: int) -> str:
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        if -code == signal.SIGXCPU:
            return "the render worker used up its CPU backstop"
        return f"the render worker was killed ({name})"
    if code == 1:  # Graphviz's answer to a failed allocation, among others
        return f"the render worker exited (status 1; out of its {memory_mib} MiB?)"
    return f"the render worker died (status {code})"
