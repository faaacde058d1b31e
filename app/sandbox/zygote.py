"""The zygote: a warm Python that forks one hardened child per run and reports how it ended.

client.py starts it with a clean environment (no inherited variables, single-threaded BLAS):

    python -I -B -c "<bootstrap>" <settings JSON> <socket fd>

It imports numpy and the engine, runs every op once (warmup.py), decides which layers this kernel
supports (hardening.detect), says `ready`, then loops on one thread: requests arrive on the
socket; each gets a child (child.py) with a result pipe and a pidfd; the loop reads pipes as
children write, nudges a child past its wall-clock deadline (SIGUSR1: it stops and keeps its
trace) and kills its process group a little later, reaps it, and sends back how it ended with
whatever it wrote. It never parses a trace: the server does (outcome.py).
"""

from __future__ import annotations

import contextlib
import gc
import os
import selectors
import signal
import socket
import sys
import time
from collections import deque
from dataclasses import dataclass, field, replace

from app.sandbox import child, frontdoor, hardening, protocol, seccomp, warmup
from app.sandbox.settings import SandboxSettings

NUDGE_EVERY = 0.1  # seconds between SIGUSR1 nudges once the wall-clock deadline has passed
KILL_GRACE = 0.5  # seconds after the deadline before SIGKILL
SPARE_SLOTS = 4  # slots beyond max_in_flight, for the self-check's probes
POLL = 0.02  # seconds between checks for exits where pidfds are missing (not Linux)


@dataclass
class _Child:
    pid: int
    pidfd: int | None
    pipe: int | None
    request_id: int | None  # (not the snippet: the zygote keeps no more of it than it must)
    slot: int
    limit: int  # bytes the child may write
    started: float
    nudge_at: float
    kill_at: float
    output: bytearray = field(default_factory=bytearray)
    overflow: bool = False
    nudged: bool = False
    killed: bool = False


class Zygote:
    def __init__(
        self, sock: socket.socket, settings: SandboxSettings, plan: hardening.Plan, importer
    ) -> None:
        self.sock = sock
        self.settings = settings
        self.plan = plan
        self.importer = importer
        self.seccomp_filter = seccomp.Filter(plan.seccomp_arch) if plan.seccomp_arch else None
        self.devnull = os.open(os.devnull, os.O_RDWR)
        self.pid = os.getpid()
        self.selector = selectors.DefaultSelector()
        self.selector.register(sock, selectors.EVENT_READ, None)
        self.decoder = protocol.Decoder(max_payload=0)
        self.children: dict[int, _Child] = {}
        self.waiting: deque[dict] = deque()
        self.free_slots = list(reversed(range(settings.max_in_flight + SPARE_SLOTS)))
        self.closing = False
        self.pidfds = hasattr(os, "pidfd_open")

    def send(self, header: dict, payload: bytes = b"") -> None:
        try:
            self.sock.sendall(protocol.pack(header, payload))
        except OSError:  # the server is gone: stop taking work, let the children end
            self._close_socket()

    def loop(self) -> None:
        while not (self.closing and not self.children):
            for key, _ in self.selector.select(self._timeout()):
                if key.data is None:
                    self._receive()
                else:
                    kid, what = key.data
                    if what == "pipe":
                        self._read(kid)
                    else:
                        self._reap(kid)
            self._enforce_deadlines()
            if not self.pidfds:
                self._poll_exits()

    # ***** requests *****

    def _receive(self) -> None:
        try:
            data = self.sock.recv(1 << 16)
            messages = self.decoder.feed(data) if data else None
        except (OSError, protocol.ProtocolError):
            messages = None
        if messages is None:
            self._close_socket()
            return
        for header, _ in messages:
            if header.get("op") in ("run", "probe"):
                self.waiting.append(header)
        self._start_waiting()

    def _close_socket(self) -> None:
        if not self.closing:
            self.closing = True
            self.waiting.clear()
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(self.sock)

    def _start_waiting(self) -> None:
        while self.waiting and self.free_slots:
            self._spawn(self.waiting.popleft())

    def _spawn(self, request: dict) -> None:
        try:
            settings = self.settings.tightened(request.get("limits") or {})
        except (TypeError, ValueError) as error:
            self.send({"op": "result", "id": request.get("id"), "refused": str(error)})
            return
        plan = self._plan_for(request)
        slot = self.free_slots.pop()
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            try:
                os.close(read_end)
                self._forget_others()
                child.serve(
                    request,
                    settings,
                    plan,
                    self.seccomp_filter,
                    self.importer,
                    slot=slot,
                    result_fd=write_end,
                    devnull=self.devnull,
                    zygote_pid=self.pid,
                )
            finally:
                os._exit(child.EXIT_INTERNAL)
        os.close(write_end)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # the child does the same; whichever comes first
        os.set_blocking(read_end, False)
        now = time.monotonic()
        deadline = now + settings.wall_seconds
        kid = _Child(
            pid=pid,
            pidfd=os.pidfd_open(pid) if self.pidfds else None,
            pipe=read_end,
            request_id=request.get("id"),
            slot=slot,
            limit=settings.max_trace_bytes,
            started=now,
            nudge_at=deadline,
            kill_at=deadline + KILL_GRACE,
        )
        self.children[pid] = kid
        self.selector.register(read_end, selectors.EVENT_READ, (kid, "pipe"))
        if kid.pidfd is not None:
            self.selector.register(kid.pidfd, selectors.EVENT_READ, (kid, "exit"))

    def _forget_others(self) -> None:
        """In a new child: blank what other runs wrote so far, and drop what is queued. A child
        that breaks out of Python can read this memory; other people's traces are not its own."""
        for other in self.children.values():
            memoryview(other.output)[:] = bytes(len(other.output))
        self.children.clear()
        self.waiting.clear()
        self.decoder = None

    def _plan_for(self, request: dict) -> hardening.Plan:
        """Runs get every layer; a probe may leave some out, to test the others alone."""
        skip = set(request.get("skip") or ()) if request["op"] == "probe" else set()
        plan = self.plan
        if "seccomp" in skip:
            plan = replace(plan, seccomp_arch=None)
        if "landlock" in skip:
            plan = replace(plan, landlock_abi=0)
        return plan

    # ***** children *****

    def _read(self, kid: _Child) -> None:
        while kid.pipe is not None:
            try:
                data = os.read(kid.pipe, min(1 << 16, kid.limit + 1 - len(kid.output)))
            except BlockingIOError:
                return
            if not data:
                self._close_pipe(kid)
                return
            kid.output += data
            if len(kid.output) > kid.limit:
                kid.overflow = True
                kid.output = bytearray()
                self._close_pipe(kid)
                self._kill(kid)

    def _close_pipe(self, kid: _Child) -> None:
        self.selector.unregister(kid.pipe)
        os.close(kid.pipe)
        kid.pipe = None

    def _reap(self, kid: _Child, waited: tuple | None = None) -> None:
        if waited is None:  # its pidfd says it has exited: it is a zombie, still ours to signal
            self._kill(kid)  # anything left in its group (weak mode) goes too
        self._read(kid)  # what it wrote last is still in the pipe
        if kid.pipe is not None:
            self._close_pipe(kid)
        _, status, usage = waited or os.wait4(kid.pid, 0)
        if kid.pidfd is not None:
            self.selector.unregister(kid.pidfd)
            os.close(kid.pidfd)
        del self.children[kid.pid]
        self.free_slots.append(kid.slot)
        header = {
            "op": "result",
            "id": kid.request_id,
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "wall_nudged": kid.nudged,
            "wall_killed": kid.killed,
            "overflow": kid.overflow,
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 4),
            "max_rss_kib": usage.ru_maxrss,
            "elapsed": round(time.monotonic() - kid.started, 4),
        }
        self.send(header, bytes(kid.output))
        self._start_waiting()

    def _kill(self, kid: _Child) -> None:
        # pid and process group are still ours: the child is not reaped until after this
        try:
            os.killpg(kid.pid, signal.SIGKILL)
        except OSError:
            with contextlib.suppress(OSError):
                os.kill(kid.pid, signal.SIGKILL)

    def _poll_exits(self) -> None:
        for kid in list(self.children.values()):
            waited = os.wait4(kid.pid, os.WNOHANG)
            if waited[0] == kid.pid:
                self._reap(kid, waited)

    def _timeout(self) -> float | None:
        pending = [kid.nudge_at for kid in self.children.values() if not kid.killed]
        wait = max(0.0, min(pending) - time.monotonic()) if pending else None
        if self.pidfds or not self.children:
            return wait
        return POLL if wait is None else min(wait, POLL)

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        for kid in self.children.values():
            if kid.killed:
                continue
            if now >= kid.kill_at:
                kid.killed = True
                self._kill(kid)
            elif now >= kid.nudge_at:
                kid.nudged = True
                kid.nudge_at = min(now + NUDGE_EVERY, kid.kill_at)
                with contextlib.suppress(OSError):
                    os.kill(kid.pid, signal.SIGUSR1)


def main(argv: list[str]) -> None:
    settings = SandboxSettings.from_json(argv[0])
    sock = socket.socket(fileno=int(argv[1]))
    started = time.monotonic()
    frontdoor.preload()
    importer = frontdoor.make_importer()
    warmup.warm(importer, lambda code: child.trace_run(code, settings, importer))
    warmed = time.monotonic() - started
    plan = hardening.detect(settings)
    hardening.leave_network(plan)
    zygote = Zygote(sock, settings, plan, importer)
    gc.collect()
    gc.freeze()  # children then leave the zygote's objects (and their pages) alone
    zygote.send(
        {
            "op": "ready",
            "pid": os.getpid(),
            "plan": plan.to_dict(),
            "environment": sorted(os.environ),
            "threads": _threads(),
            "warmup_seconds": round(warmed, 3),
            "python": sys.version.split()[0],
        }
    )
    zygote.loop()


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1
