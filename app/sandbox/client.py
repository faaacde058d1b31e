"""The server's side of the sandbox: start the zygote, send it runs, turn its reports into traces.

`SandboxClient` owns one zygote at a time. It starts it with a clean environment (`env -i`
style: nothing of the server's environment, single-threaded BLAS) over a socketpair; a reader
thread receives results and completes futures. Runs pass through `Admission` first. The zygote
is replaced when it dies, and recycled after `recycle_after_runs` runs or
`recycle_after_seconds` (a fresh memory layout): the new one warms up while the old one
finishes its runs.

Two ways in: `await client.run(code, client=ip)` for FastAPI, `client.run_blocking(code)` for
the command line.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import logging
import socket
import subprocess
import threading
import time
from pathlib import Path

from app.sandbox import child, outcome, protocol, statuses
from app.sandbox.admission import Admission, SandboxBusy
from app.sandbox.settings import SandboxSettings

log = logging.getLogger("gradtrace.sandbox")

ROOT = Path(__file__).resolve().parents[2]
# The zygote's whole environment: no variable of the server's reaches a snippet.
ZYGOTE_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
}
BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from app.sandbox.zygote import main; main(sys.argv[2:])"
)
READY_TIMEOUT = 60.0


class ZygoteError(RuntimeError):
    """The zygote could not be started, or stopped answering."""


class _Zygote:
    """One zygote process and the thread that reads its answers."""

    def __init__(self, settings: SandboxSettings) -> None:
        self.settings = settings
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = ours
        self.process = subprocess.Popen(
            [
                settings.python,
                "-I",
                "-B",
                "-c",
                BOOTSTRAP,
                str(ROOT),
                settings.to_json(),
                str(theirs.fileno()),
            ],
            env=ZYGOTE_ENV,
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # LAPACK and friends print there; a snippet never does
            pass_fds=(theirs.fileno(),),
            close_fds=True,
            start_new_session=True,  # Ctrl-C at the server's terminal is the server's to handle
        )
        theirs.close()
        self.started = time.monotonic()
        self.runs = 0
        self.pending: dict[int, tuple[concurrent.futures.Future, str, SandboxSettings]] = {}
        self.lock = threading.Lock()  # pending and alive
        self._send_lock = threading.Lock()  # one message at a time on the socket
        self.ready: dict | None = None
        self.alive = True
        self._ready_event = threading.Event()
        self._reader = threading.Thread(target=self._read, name="gradtrace-zygote", daemon=True)
        self._reader.start()

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> dict:
        if not self._ready_event.wait(timeout) or self.ready is None:
            self.close(kill=True)
            raise ZygoteError("the sandbox's zygote did not start (see the log above)")
        return self.ready

    def send(self, request: dict, future, code: str | None, settings: SandboxSettings) -> None:
        with self.lock:
            if not self.alive:
                raise ZygoteError("the zygote has stopped")
            self.pending[request["id"]] = (future, code, settings)
            self.runs += 1
        # not under self.lock: the reader thread must keep draining results meanwhile
        try:
            with self._send_lock:
                self.sock.sendall(protocol.pack(request))
        except OSError as error:
            with self.lock:
                self.pending.pop(request["id"], None)
            raise ZygoteError(f"the zygote has stopped: {error}") from None

    def close(self, kill: bool = False) -> None:
        """Stop sending; the zygote exits once its runs are done (at once with kill=True)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)
        if kill:
            with contextlib.suppress(OSError):
                self.process.kill()

    def _read(self) -> None:
        limit = self.settings.max_trace_bytes
        try:
            while True:
                message = protocol.read(self.sock, limit)
                if message is None:
                    break
                self._deliver(*message)
        except (OSError, protocol.ProtocolError) as error:
            log.error("sandbox: lost the zygote: %s", error)
        finally:
            with self.lock:
                self.alive = False
                pending, self.pending = self.pending, {}
            self._ready_event.set()
            for future, code, settings in pending.values():
                if code is None:
                    future.set_exception(ZygoteError("the zygote stopped during a probe"))
                    continue
                crashed = {"status": statuses.CRASHED, "message": "The sandbox restarted."}
                _complete(future, child.empty_trace(code, crashed, settings))
            self.sock.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)

    def _deliver(self, header: dict, payload: bytes) -> None:
        if header.get("op") == "ready":
            self.ready = header
            self._ready_event.set()
            return
        with self.lock:
            entry = self.pending.pop(header.get("id"), None)
        if entry is None:
            return
        future, code, settings = entry
        if "refused" in header:
            future.set_exception(ValueError(header["refused"]))
        elif code is None:  # a probe: its caller reads the raw report
            _complete(future, (header, payload))
        else:
            try:
                result = outcome.resolve(code, header, payload, settings)
            except Exception as error:  # never leave a caller waiting
                log.exception("sandbox: could not read a result")
                message = statuses.crashed(detail=str(error))
                result = child.empty_trace(
                    code, {"status": statuses.CRASHED, "message": message}, settings
                )
            _complete(future, result)


def _complete(future: concurrent.futures.Future, value) -> None:
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_result(value)


class SandboxClient:
    """Runs snippets in the sandbox. Thread-safe; start() before use, close() at the end."""

    def __init__(self, settings: SandboxSettings | None = None) -> None:
        self.settings = settings or SandboxSettings.from_env()
        self.admission = Admission(
            self.settings.max_in_flight,
            self.settings.max_queue,
            self.settings.per_client_in_flight,
            self.settings.per_client_queue,
            typical_seconds=1.0,
        )
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._zygote: _Zygote | None = None
        self._replacing: threading.Thread | None = None
        self.ready: dict | None = None
        self.closed = False

    # ***** lifecycle *****

    def start(self) -> dict:
        """Start the zygote and wait until it is warm; returns its `ready` report."""
        with self._lock:
            if self._zygote is None or not self._zygote.alive:
                self._zygote = self._spawn()
            return self.ready

    def _spawn(self) -> _Zygote:
        zygote = _Zygote(self.settings)
        self.ready = zygote.wait_ready()
        log.info(
            "sandbox: zygote %s ready in %.2fs (warm-up %.2fs)",
            self.ready["pid"],
            time.monotonic() - zygote.started,
            self.ready["warmup_seconds"],
        )
        return zygote

    def close(self) -> None:
        with self._lock:
            self.closed = True
            if self._zygote is not None:
                self._zygote.close()
                self._zygote = None

    def zygote_pid(self) -> int | None:
        zygote = self._zygote
        return zygote.process.pid if zygote is not None and zygote.alive else None

    def _current(self) -> _Zygote:
        """The zygote to send to: restarted if it died, recycled when old."""
        with self._lock:
            if self.closed:
                raise ZygoteError("the sandbox is closed")
            zygote = self._zygote
            if zygote is None or not zygote.alive:
                if zygote is not None:
                    log.warning("sandbox: the zygote stopped; starting a new one")
                zygote = self._zygote = self._spawn()
            elif self._worn(zygote) and self._replacing is None:
                self._replacing = threading.Thread(
                    target=self._recycle, args=(zygote,), daemon=True
                )
                self._replacing.start()
            return zygote

    def _worn(self, zygote: _Zygote) -> bool:
        age = time.monotonic() - zygote.started
        return (
            zygote.runs >= self.settings.recycle_after_runs
            or age >= self.settings.recycle_after_seconds
        )

    def _recycle(self, old: _Zygote) -> None:
        try:
            fresh = _Zygote(self.settings)
            ready = fresh.wait_ready()
        except ZygoteError:
            log.exception("sandbox: could not start a fresh zygote; keeping the old one")
            return
        finally:
            with self._lock:
                self._replacing = None
        with self._lock:
            if self.closed:
                fresh.close()
                return
            self._zygote, self.ready = fresh, ready
        old.close()  # it finishes what it has, then exits
        log.info("sandbox: recycled the zygote after %d runs", old.runs)

    # ***** runs *****

    def submit(
        self, code: str, client: str = "local", limits: dict | None = None
    ) -> concurrent.futures.Future:
        """Queue a run; the future's result is its trace. Raises SandboxBusy when full."""
        settings = self.settings.tightened(limits) if limits else self.settings
        future: concurrent.futures.Future = concurrent.futures.Future()
        size = len(code.encode("utf-8", "surrogatepass"))
        if size > settings.max_source_bytes:  # no need to wake a child for this
            message = statuses.too_long(settings, size)
            rejected = {"status": statuses.REJECTED, "message": message}
            future.set_result(child.empty_trace(code, rejected, settings))
            return future
        request = {"op": "run", "id": next(self._ids), "code": code}
        if limits:
            request["limits"] = limits
        self._admit(client, request, future, code, settings)
        return future

    def probe(self, name: str, skip: tuple[str, ...] = ()) -> tuple[dict, bytes]:
        """Run one of probe.py's checks in a child; returns the zygote's report and payload."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        request = {"op": "probe", "id": next(self._ids), "name": name, "skip": list(skip)}
        self._current().send(request, future, None, self.settings)
        return future.result()

    def _admit(self, client, request, future, code, settings) -> None:
        def start(ticket) -> None:
            future.add_done_callback(lambda _: self.admission.leave(ticket))
            try:
                self._current().send(request, future, code, settings)
            except ZygoteError as error:
                crashed = {"status": statuses.CRASHED, "message": f"The sandbox failed: {error}"}
                _complete(future, child.empty_trace(code, crashed, settings))

        future.ticket = self.admission.enter(client, start)

    async def run(self, code: str, client: str = "local", limits: dict | None = None) -> dict:
        """The trace of `code`, awaited; raises SandboxBusy when the server is full."""
        future = self.submit(code, client, limits)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            ticket = getattr(future, "ticket", None)
            if ticket is not None and self.admission.cancel(ticket):
                future.cancel()
            raise

    def run_blocking(self, code: str, client: str = "local", limits: dict | None = None) -> dict:
        return self.submit(code, client, limits).result()


__all__ = ["SandboxBusy", "SandboxClient", "ZygoteError"]
