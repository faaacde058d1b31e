"""The zygote: a warm Python that forks one hardened child per run and reports how it ended.

client.py starts it with a clean environment (no inherited variables, single-threaded BLAS):

    python -I -B -c "<bootstrap>" <settings JSON> <socket fd>

It imports numpy and the engine, loads what children would load lazily (warmup.py), decides
which layers this kernel supports (hardening.detect), says `ready`, then loops on one thread:
commands arrive on the control socket (protocol.py), each `run` or `probe` with the run's
channel attached; each gets a child (child.py) that keeps the channel, and the zygote closes its
own copy at once. The loop nudges a child past its wall-clock deadline (SIGUSR1: it stops and
keeps its trace), kills its process group a little later (or when the server asks: its trace
grew too large), reaps it, and reports how it ended.

Every child is a copy of this process's memory, and a snippet can read all of it (the kernel is
the wall, not Python). So the zygote never sees a snippet, its output or its trace: they travel
on the channel between the server and the child only. What the zygote holds of a run is its id,
its limits, its pid and its times.
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
from dataclasses import dataclass, replace

from app.sandbox import child, frontdoor, hardening, paths, protocol, seccomp, warmup
from app.sandbox.settings import SandboxSettings

NUDGE_EVERY = 0.1  # seconds between SIGUSR1 nudges once the wall-clock deadline has passed
KILL_GRACE = 0.5  # seconds after the deadline before SIGKILL
SPARE_SLOTS = 4  # slots beyond max_in_flight, for the self-check's probes
POLL = 0.02  # seconds between checks for exits where pidfds are missing (not Linux)
STARTS = ("run", "probe")


@dataclass
class _Child:
    pid: int
    pidfd: int | None
    request_id: int | None
    slot: int
    started: float
    nudge_at: float
    kill_at: float
    nudged: bool = False
    killed: bool = False


@dataclass
class _Waiting:
    """A command that found no free slot: the command and its channel, held until one frees."""

    command: dict
    channel: int


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
        sock.setblocking(False)
        self.children: dict[int, _Child] = {}
        self.waiting: deque[_Waiting] = deque()
        self.free_slots = list(reversed(range(settings.max_in_flight + SPARE_SLOTS)))
        self.closing = False
        self.pidfds = hasattr(os, "pidfd_open")

    def send(self, message: dict) -> None:
        try:
            self.sock.setblocking(True)  # reports are tiny; the server always reads them
            protocol.send_packet(self.sock, message)
        except OSError:  # the server is gone: stop taking work, let the children end
            self._close_socket()
        finally:
            with contextlib.suppress(OSError):
                self.sock.setblocking(False)

    def loop(self) -> None:
        while not (self.closing and not self.children and not self.waiting):
            for key, _ in self.selector.select(self._timeout()):
                if key.data is None:
                    self._receive()
                else:
                    self._reap(key.data)
            self._enforce_deadlines()
            if not self.pidfds:
                self._poll_exits()

    # ***** commands *****

    def _receive(self) -> None:
        while not self.closing:
            try:
                data, fds, _, _ = socket.recv_fds(self.sock, protocol.MAX_PACKET, 1)
            except BlockingIOError:
                break
            except OSError:
                data, fds = b"", []
            if not data:  # the server closed its end: finish the runs there are, then exit
                self._close_fds(fds)
                self._close_socket()
                break
            self._take(data, fds)
        self._start_waiting()

    def _take(self, data: bytes, fds: list[int]) -> None:
        try:
            command = protocol.parse_packet(data)
        except protocol.ProtocolError:
            self._close_fds(fds)
            return
        op = command.get("op")
        if op in STARTS and len(fds) == 1:
            self.waiting.append(_Waiting(command, fds[0]))
            return
        self._close_fds(fds)
        if op == "kill":
            self._kill_run(command.get("id"))
        elif op in STARTS:
            self.send({"op": "refused", "id": command.get("id"), "reason": "no channel"})

    @staticmethod
    def _close_fds(fds: list[int]) -> None:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _close_socket(self) -> None:
        if not self.closing:
            self.closing = True
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(self.sock)

    def _start_waiting(self) -> None:
        while self.waiting and self.free_slots:
            waiting = self.waiting.popleft()
            self._spawn(waiting.command, waiting.channel)

    def _spawn(self, command: dict, channel: int) -> None:
        try:
            settings = self.settings.tightened(command.get("limits") or {})
        except (TypeError, ValueError) as error:
            os.close(channel)
            self.send({"op": "refused", "id": command.get("id"), "reason": str(error)})
            return
        plan = self._plan_for(command)
        slot = self.free_slots.pop()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            try:
                child.serve(
                    command,
                    settings,
                    plan,
                    self.seccomp_filter,
                    self.importer,
                    slot=slot,
                    channel=channel,
                    devnull=self.devnull,
                    zygote_pid=self.pid,
                )
            finally:
                os._exit(protocol.EXIT_INTERNAL)
        os.close(channel)  # the child's alone now: no later child inherits it
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # the child does the same; whichever comes first
        now = time.monotonic()
        deadline = now + settings.wall_seconds
        kid = _Child(
            pid=pid,
            pidfd=os.pidfd_open(pid) if self.pidfds else None,
            request_id=command.get("id"),
            slot=slot,
            started=now,
            nudge_at=deadline,
            kill_at=deadline + KILL_GRACE,
        )
        self.children[pid] = kid
        if kid.pidfd is not None:
            self.selector.register(kid.pidfd, selectors.EVENT_READ, kid)

    def _plan_for(self, command: dict) -> hardening.Plan:
        """Runs get every layer; a probe may leave some out, to test the others alone."""
        skip = set(command.get("skip") or ()) if command["op"] == "probe" else set()
        plan = self.plan
        if "seccomp" in skip:
            plan = replace(plan, seccomp_arch=None)
        if "landlock" in skip:
            plan = replace(plan, landlock_abi=0)
        return plan

    def _kill_run(self, request_id) -> None:
        """The server stopped reading this run (its trace grew too large): end the child."""
        for kid in self.children.values():
            if kid.request_id == request_id:
                self._kill(kid)
                return

    # ***** children *****

    def _reap(self, kid: _Child, waited: tuple | None = None) -> None:
        if waited is None:  # its pidfd says it has exited: it is a zombie, still ours to signal
            self._kill(kid)  # anything left in its group (weak mode) goes too
        _, status, usage = waited or os.wait4(kid.pid, 0)
        if kid.pidfd is not None:
            self.selector.unregister(kid.pidfd)
            os.close(kid.pidfd)
        del self.children[kid.pid]
        self.free_slots.append(kid.slot)
        self.send(
            {
                "op": "ended",
                "id": kid.request_id,
                "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                "wall_nudged": kid.nudged,
                "wall_killed": kid.killed,
                "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 4),
                "max_rss_kib": usage.ru_maxrss,
                "elapsed": round(time.monotonic() - kid.started, 4),
            }
        )
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
    warmup.warm(lambda code: child.trace_run(code, settings, importer))
    warmed = time.monotonic() - started
    plan = hardening.detect(settings)
    hardening.leave_network(plan)
    paths.forget()  # everything is loaded: the children inherit no path of the server
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
