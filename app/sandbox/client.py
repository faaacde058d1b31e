"""The server's side of the sandbox: start the zygote, send it runs, turn its reports into traces.

`SandboxClient` owns one zygote at a time. It starts it with a clean environment (`env -i`
style: nothing of the server's environment, single-threaded BLAS) over a control socket that
carries bare commands and reports (protocol.py). Each run gets a channel of its own: the server
writes the snippet into it, hands the other end to the zygote with the command, and reads the
trace from it, so no snippet, output or trace ever passes through the zygote (whose memory every
child inherits). One reader thread per zygote does all of this and completes futures once a
run's ending and its channel's end have both arrived.

Runs pass through `Admission` first. The zygote is replaced when it dies, and recycled after
`recycle_after_runs` runs or `recycle_after_seconds` (a fresh memory layout); a new one warms up
on a thread of its own, and runs are held until it is ready, so no caller (the server's event
loop included) ever waits for a start.

Two ways in: `await client.run(code, client=ip)` for FastAPI, `client.run_blocking(code)` for
the command line.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import logging
import selectors
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable

from app import request_ids
from app.files import code_folder_for_children
from app.sandbox import outcome, protocol, statuses
from app.sandbox.admission import Admission, SandboxBusy
from app.sandbox.settings import SandboxSettings

log = logging.getLogger("gradtrace.sandbox")

# The zygote's whole environment: no variable of the server's reaches a snippet.
ZYGOTE_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
}
# `-I` leaves PYTHONPATH out: our code's folder comes as the first argument, empty when the
# interpreter finds it by itself (an installed wheel, in its site-packages)
BOOTSTRAP = (
    "import sys\n"
    "if sys.argv[1]: sys.path.insert(0, sys.argv[1])\n"
    "from app.sandbox.zygote import main; main(sys.argv[2:])"
)
READY_TIMEOUT = 60.0
CHANNEL_BUFFER = 1 << 18  # bytes a channel holds before the child reads: any request fits


class ZygoteError(RuntimeError):
    """The zygote could not be started, or stopped answering."""


class _Run:
    """One run or probe: what its caller waits for, and what its channel has brought so far."""

    def __init__(self, command: dict, code: str | None, settings: SandboxSettings) -> None:
        self.command = command  # what the zygote is told: never the code
        self.code = code  # None for a probe
        self.settings = settings
        self.future: concurrent.futures.Future = concurrent.futures.Future()
        self.channel: socket.socket | None = None  # our end, once handed to a zygote
        self.received = bytearray()
        self.ending: dict | None = None  # the zygote's report of how the child ended
        self.overflow = False  # it wrote more than max_trace_bytes; the rest was not read
        self.eof = False
        self.zygote: _Zygote | None = None  # the one it was handed to
        # its request's id, for the reader thread's log lines (contextvars stay on this thread)
        self.request_id = request_ids.current.get()
        self.submitted = time.monotonic()
        self.started: float | None = None  # when admission let it start
        self.finished: float | None = None  # when its trace was read

    def timing(self) -> tuple[float | None, float | None]:
        """Seconds it waited for a place, and seconds from then to its trace (None: unknown)."""
        if self.started is None or self.finished is None:
            return None, None
        return self.started - self.submitted, self.finished - self.started

    def stop(self) -> None:
        """Nobody waits for it any more: its child is killed (its slot freed at once, not at
        its wall-clock limit). A run not handed to a zygote yet has nothing to stop."""
        if self.zygote is not None and not self.done():
            self.zygote.post({"op": "kill", "id": self.id})

    @property
    def id(self) -> int:
        return self.command["id"]

    def done(self) -> bool:
        return self.ending is not None and (self.eof or self.overflow)


class _Zygote:
    """One zygote process, and the thread that talks to it and reads every run's channel.

    All traffic on the control socket goes through that one thread (callers queue commands in
    an outbox), so it never waits on a socket the zygote is waiting on in turn.
    """

    def __init__(self, settings: SandboxSettings, undelivered) -> None:
        self.settings = settings
        self._undelivered = undelivered  # takes back runs that never reached the zygote
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        self.process = subprocess.Popen(
            [
                settings.python,
                "-I",
                "-B",
                "-c",
                BOOTSTRAP,
                code_folder_for_children() or "",
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
        ours.setblocking(False)
        self.started = time.monotonic()
        self.runs = 0
        self.lock = threading.Lock()  # in_flight, outbox, alive, closing
        self.in_flight: dict[int, _Run] = {}  # handed to the zygote, not yet resolved
        self.outbox: deque[tuple[dict, _Run | None, socket.socket | None]] = deque()
        self.ready: dict | None = None
        self.alive = True
        self.closing = False
        self._ready_event = threading.Event()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._wake_write.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._writing = False  # waiting for room in the zygote's queue
        self._reader = threading.Thread(target=self._serve, name="gradtrace-zygote", daemon=True)
        self._reader.start()

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> dict:
        if not self._ready_event.wait(timeout) or self.ready is None:
            self.close(kill=True)
            raise ZygoteError("the sandbox's zygote did not start (see the log above)")
        return self.ready

    def send(self, run: _Run) -> None:
        """Hand `run` to this zygote: its request goes into a fresh channel, which is queued
        for the zygote with the bare command. Never waits on the zygote."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            ours.setblocking(False)
            if run.code is not None:
                request = protocol.pack_request(run.code)
                room = max(CHANNEL_BUFFER, 2 * len(request))
                ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, room)
                ours.sendall(request)  # into the kernel's buffer, where the child reads it
            ours.shutdown(socket.SHUT_WR)
        except OSError as error:
            ours.close()
            theirs.close()
            raise ZygoteError(f"could not open a channel: {error}") from None
        run.channel = ours
        run.zygote = self
        with self.lock:
            if not self.alive or self.closing:
                ours.close()
                theirs.close()
                run.channel = None
                raise ZygoteError("the zygote has stopped")
            self.runs += 1
            self.outbox.append((run.command, run, theirs))
        self._wake()

    def close(self, kill: bool = False) -> None:
        """Stop sending; the zygote exits once its runs are done (at once with kill=True)."""
        with self.lock:
            self.closing = True
        self._wake()
        if kill:
            with contextlib.suppress(OSError):
                self.process.kill()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # a full wake-up socket is a wake-up pending
            self._wake_write.send(b"\0")

    # ***** the reader thread *****

    def _serve(self) -> None:
        selector = self._selector
        selector.register(self.sock, selectors.EVENT_READ, "zygote")
        selector.register(self._wake_read, selectors.EVENT_READ, "wake")
        try:
            while self.alive or self.in_flight:
                for key, events in selector.select():
                    if key.data == "zygote":
                        if events & selectors.EVENT_READ:
                            self._receive()
                        if events & selectors.EVENT_WRITE:
                            self._flush()
                    elif key.data == "wake":
                        with contextlib.suppress(OSError):
                            self._wake_read.recv(4096)
                        self._flush()
                    else:
                        self._read_channel(key.data)
        except Exception:
            log.exception("sandbox: the zygote's reader failed")
            self._lost()
            for run in list(self.in_flight.values()):
                self._abandon(run)
        finally:
            self._wake_read.close()
            self._wake_write.close()
            self.sock.close()
            selector.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)

    def _flush(self) -> None:
        """Send what the outbox holds, as far as the zygote's queue takes it; once closing and
        idle, end the commands (the zygote then exits)."""
        while self.alive:
            with self.lock:
                if not self.outbox:
                    if self.closing and not self.in_flight:
                        with contextlib.suppress(OSError):
                            self.sock.shutdown(socket.SHUT_WR)
                    break
                command, run, attached = self.outbox[0]
            try:
                protocol.send_packet(self.sock, command, attached.fileno() if attached else None)
            except BlockingIOError:
                self._want_write(True)
                return
            except OSError as error:
                log.error("sandbox: lost the zygote: %s", error)
                self._lost()
                return
            with self.lock:
                self.outbox.popleft()
                if run is not None:
                    self.in_flight[run.id] = run
            if attached is not None:
                attached.close()  # the zygote has its own copy now
            if run is not None:
                self._selector.register(run.channel, selectors.EVENT_READ, run)
        self._want_write(False)

    def _want_write(self, wanted: bool) -> None:
        if wanted != self._writing and self.alive:
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if wanted else 0)
            self._selector.modify(self.sock, events, "zygote")
            self._writing = wanted

    def _receive(self) -> None:
        while True:
            try:
                data = self.sock.recv(protocol.MAX_PACKET)
            except BlockingIOError:
                return
            except OSError as error:
                log.error("sandbox: lost the zygote: %s", error)
                data = b""
            if not data:
                self._lost()
                return
            try:
                self._on_report(protocol.parse_packet(data))
            except protocol.ProtocolError as error:
                log.error("sandbox: the zygote sent nonsense (%s); stopping it", error)
                self.close(kill=True)
                self._lost()
                return

    def _on_report(self, report: dict) -> None:
        op = report.get("op")
        if op == "ready":
            self.ready = report
            self._ready_event.set()
            return
        run = self.in_flight.get(report.get("id"))
        if run is None:
            return
        if op == "refused":
            self._forget(run)
            run.future.set_exception(ValueError(report.get("reason", "refused")))
        elif op == "ended":
            run.ending = report
            self._finish_if_done(run)

    def _read_channel(self, run: _Run) -> None:
        limit = run.settings.max_trace_bytes
        while run.channel is not None:
            try:
                data = run.channel.recv(min(1 << 16, limit + 1 - len(run.received)))
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                run.eof = True
                self._close_channel(run)
            else:
                run.received += data
                if len(run.received) > limit:  # stop reading; the child is killed
                    run.overflow = True
                    run.received = bytearray()
                    self._close_channel(run)
                    self.post({"op": "kill", "id": run.id})
        self._finish_if_done(run)

    def post(self, command: dict) -> None:
        """Send the zygote a command about a run it has (`kill`), from any thread: the reader
        thread sends it, as it sends runs."""
        with self.lock:
            self.outbox.append((command, None, None))
        self._wake()

    def _close_channel(self, run: _Run) -> None:
        if run.channel is not None:
            self._selector.unregister(run.channel)
            run.channel.close()
            run.channel = None

    def _finish_if_done(self, run: _Run) -> None:
        if run.done():
            self._forget(run)
            with request_ids.bound(run.request_id):
                result = _result(run)
                run.finished = time.monotonic()
                if run.code is not None:
                    _log_ending(run, result)
            _complete(run.future, result)
            if self.closing:
                self._flush()  # the last run of a retiring zygote lets it go

    def _forget(self, run: _Run) -> None:
        self._close_channel(run)
        with self.lock:
            self.in_flight.pop(run.id, None)

    def _lost(self) -> None:
        """The zygote is gone: runs it ended still drain their channels; the others end here,
        and runs it never received go back to be sent elsewhere."""
        with self.lock:
            if not self.alive:
                return
            self.alive = False
            never_sent = [run for _, run, _ in self.outbox if run is not None]
            for _, _, attached in self.outbox:
                if attached is not None:
                    attached.close()
            self.outbox.clear()
        self._ready_event.set()
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(self.sock)
        for run in list(self.in_flight.values()):
            if run.ending is None:
                self._abandon(run)
        for run in never_sent:
            if run.channel is not None:
                run.channel.close()
                run.channel = None
            self._undelivered(run)

    def _abandon(self, run: _Run) -> None:
        self._forget(run)
        if run.code is None:
            run.future.set_exception(ZygoteError("the zygote stopped during a probe"))
            return
        crashed = {"status": statuses.CRASHED, "message": "The sandbox restarted."}
        _complete(run.future, outcome.empty_trace(run.code, crashed, run.settings))


def _result(run: _Run):
    """What the caller gets: a probe's raw report and bytes, or a run's trace."""
    report = {**run.ending, "overflow": run.overflow}
    payload = bytes(run.received)
    run.received = bytearray()
    if run.code is None:
        return report, payload
    try:
        return outcome.resolve(run.code, report, payload, run.settings)
    except Exception as error:  # never leave a caller waiting
        log.exception("sandbox: could not read a result")
        message = statuses.crashed(detail=str(error))
        return outcome.empty_trace(
            run.code, {"status": statuses.CRASHED, "message": message}, run.settings
        )


def _log_ending(run: _Run, trace: dict) -> None:
    waited, ran = run.timing()
    status = trace.get("outcome", {}).get("status")
    log.info(
        "sandbox: run %d ended %s",
        run.id,
        status,
        extra={
            "run": run.id,
            "status": status,
            "waited_seconds": None if waited is None else round(waited, 4),
            "run_seconds": None if ran is None else round(ran, 4),
        },
    )


def _complete(future: concurrent.futures.Future, value) -> None:
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_result(value)


class SandboxClient:
    """Runs snippets in the sandbox. Thread-safe; start() before use, close() at the end."""

    def __init__(self, settings: SandboxSettings) -> None:
        self.settings = settings
        self.admission = Admission(
            self.settings.max_in_flight,
            self.settings.max_queue,
            self.settings.per_client_in_flight,
            self.settings.per_client_queue,
            typical_seconds=1.0,
            per_address_queue=self.settings.per_address_queue,
        )
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # _zygote, _replacing, _held, ready, closed
        self._zygote: _Zygote | None = None
        self._replacing: threading.Thread | None = None
        self._held: list[_Run] = []  # runs waiting for a zygote to start
        self._start_error: str | None = None
        self.ready: dict | None = None
        self.closed = False

    # ***** lifecycle *****

    def start(self) -> dict:
        """Start the zygote and wait until it is warm; returns its `ready` report. (The only
        call that waits for a zygote: runs never do, they are held until one is ready.)"""
        with self._lock:
            if self._usable(self._zygote):
                return self.ready
            starting = self._replace_soon()
        starting.join()
        with self._lock:
            if not self._usable(self._zygote):
                raise ZygoteError(self._start_error or "the sandbox's zygote did not start")
            return self.ready

    def close(self) -> None:
        with self._lock:
            self.closed = True
            zygote, self._zygote = self._zygote, None
            held, self._held = self._held, []
        if zygote is not None:
            zygote.close()
        for run in held:
            _fail(run, "the sandbox is closed")

    def zygote_pid(self) -> int | None:
        zygote = self._zygote
        return zygote.process.pid if self._usable(zygote) else None

    def health(self) -> dict:
        """The zygote's state (`ok`; `starting` while one warms up; `down` when none runs, and
        none is starting) and the admission's load, for /healthz."""
        with self._lock:
            zygote, replacing, closed = self._zygote, self._replacing, self.closed
            alive = self._usable(zygote)
        state = "ok" if alive else "starting" if replacing is not None and not closed else "down"
        return {"state": state, "zygote_alive": alive, **self.admission.stats()}

    @staticmethod
    def _usable(zygote: _Zygote | None) -> bool:
        return zygote is not None and zygote.alive and not zygote.closing

    def _replace_soon(self) -> threading.Thread:
        """A fresh zygote, started on a thread of its own (under self._lock)."""
        if self._replacing is None:
            self._replacing = threading.Thread(
                target=self._replace, name="gradtrace-zygote-start", daemon=True
            )
            self._replacing.start()
        return self._replacing

    def _replace(self) -> None:
        try:
            fresh = _Zygote(self.settings, self._dispatch)
            ready = fresh.wait_ready()
        except (OSError, ZygoteError) as error:
            log.error("sandbox: could not start a zygote: %s", error)
            with self._lock:
                self._replacing = None
                self._start_error = str(error)
                held, self._held = self._held, []
            for run in held:
                _fail(run, f"the sandbox could not start ({error})")
            return
        with self._lock:
            self._replacing = None
            if self.closed:
                fresh.close()
                return
            old, self._zygote, self.ready = self._zygote, fresh, ready
            held, self._held = self._held, []
        log.info(
            "sandbox: zygote %s ready in %.2fs (warm-up %.2fs)",
            ready["pid"],
            time.monotonic() - fresh.started,
            ready["warmup_seconds"],
        )
        if old is not None:
            old.close()  # it finishes what it has, then exits
            if old.alive:
                log.info("sandbox: recycled the zygote after %d runs", old.runs)
        for run in held:
            self._dispatch(run)

    def _worn(self, zygote: _Zygote) -> bool:
        age = time.monotonic() - zygote.started
        return (
            zygote.runs >= self.settings.recycle_after_runs
            or age >= self.settings.recycle_after_seconds
        )

    def _dispatch(self, run: _Run) -> None:
        """Send `run` to the zygote, or hold it for the one starting. Never waits for a start
        (that takes a second, and this may be running on the server's event loop)."""
        while True:
            with self._lock:
                if self.closed:
                    break
                zygote = self._zygote
                if not self._usable(zygote):
                    if zygote is not None and self._replacing is None:
                        log.warning("sandbox: the zygote stopped; starting a new one")
                    self._held.append(run)
                    self._replace_soon()
                    return
                if self._worn(zygote):
                    self._replace_soon()
            try:
                zygote.send(run)
                return
            except ZygoteError:
                continue  # it stopped just now: the next turn holds the run for a new one
        _fail(run, "the sandbox is closed")

    # ***** runs *****

    def submit(
        self, code: str, client: str = "local", limits: dict | None = None
    ) -> concurrent.futures.Future:
        """Queue a run; the future's result is its trace. Raises SandboxBusy when full."""
        settings = self.settings.tightened(limits) if limits else self.settings
        size = len(code.encode("utf-8", "surrogatepass"))
        if size > settings.max_source_bytes:  # no need to wake a child for this
            future: concurrent.futures.Future = concurrent.futures.Future()
            message = statuses.too_long(settings, size)
            rejected = {"status": statuses.REJECTED, "message": message}
            future.set_result(outcome.empty_trace(code, rejected, settings))
            return future
        command = {"op": "run", "id": next(self._ids)}
        if limits:
            command["limits"] = limits
        run = _Run(command, code, settings)
        run.future.run = run
        self._admit(client, run)
        return run.future

    def probe(self, name: str, skip: tuple[str, ...] = ()) -> tuple[dict, bytes]:
        """Run one of probe.py's checks in a child; returns the zygote's report and what the
        child wrote on its channel."""
        command = {"op": "probe", "id": next(self._ids), "name": name, "skip": list(skip)}
        run = _Run(command, None, self.settings)
        self._dispatch(run)
        return run.future.result()

    def _admit(self, client, run: _Run) -> None:
        def start(ticket) -> None:
            run.started = time.monotonic()
            run.future.add_done_callback(lambda _: self.admission.leave(ticket))
            self._dispatch(run)

        def refuse(error: SandboxBusy) -> None:  # its place went to a fairer claim
            if not run.future.done():
                run.future.set_exception(error)

        run.future.ticket = self.admission.enter(client, start, refuse)

    async def run(
        self,
        code: str,
        client: str = "local",
        limits: dict | None = None,
        timed: Callable[[float | None, float | None], None] | None = None,
    ) -> dict:
        """The trace of `code`, awaited; raises SandboxBusy when the server is full. `timed` is
        told the seconds it waited for a place and then took (None when not known)."""
        future = self.submit(code, client, limits)
        try:
            trace = await asyncio.wrap_future(future)
            if timed is not None:
                run = getattr(future, "run", None)
                timed(*(run.timing() if run is not None else (None, None)))
            return trace
        except asyncio.CancelledError:
            ticket = getattr(future, "ticket", None)
            if ticket is not None and self.admission.cancel(ticket):
                future.cancel()
            elif (run := getattr(future, "run", None)) is not None:
                run.stop()  # started: its caller has gone, so it is not finished
            raise

    def run_blocking(self, code: str, client: str = "local", limits: dict | None = None) -> dict:
        return self.submit(code, client, limits).result()


def _fail(run: _Run, why: str) -> None:
    if run.code is None:
        run.future.set_exception(ZygoteError(why))
        return
    crashed = {"status": statuses.CRASHED, "message": f"The sandbox failed: {why}."}
    _complete(run.future, outcome.empty_trace(run.code, crashed, run.settings))


__all__ = ["SandboxBusy", "SandboxClient", "ZygoteError"]
