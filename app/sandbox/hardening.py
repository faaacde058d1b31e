"""What a forked child does to itself before any snippet code runs, in order.

The zygote decides once, at start, which layers this kernel supports (`detect`), and every child
then applies all of them (`Plan`); a layer in the plan that fails in a child ends that child
before the snippet runs (fail closed). The order matters:

1. own process group (the zygote kills the group at the deadline);
2. a per-slot uid when started as root, then a new user namespace (after the uid: once in it
   there is no uid to switch to); the empty network and IPC namespaces are the zygote's, made
   once at its start (`leave_network`) and inherited;
3. parent-death signal (after the uid change, which clears it), no_new_privs, not dumpable;
4. every inherited descriptor closed but the run's channel, stdio on /dev/null;
5. rlimits: address space, CPU (a backstop), file size, processes, core dumps, open files;
6. (the caller arms the CPU timer and its handler here, while that is still allowed;)
7. Landlock with no rules, then the seccomp filter, which forbids changing the timer or handler.
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import signal
from dataclasses import asdict, dataclass, replace

from app.sandbox import landlock, libc, seccomp
from app.sandbox.settings import SandboxSettings

CHANNEL_FD = 3  # where the child's channel to the server ends up
OPEN_FILES = 8  # the child's RLIMIT_NOFILE: stdio and the channel, and a little slack


class SetupError(Exception):
    """A planned layer could not be applied in this child; the snippet must not run."""


@dataclass(frozen=True)
class Plan:
    """The layers every child applies, decided once by the zygote from what works here."""

    prctl: bool  # parent-death signal, no_new_privs, not dumpable (Linux)
    namespaces: bool  # new user, network and IPC namespaces
    uid_base: int | None  # as root, each child becomes uid_base + slot; None when not root
    landlock_abi: int  # 0: no Landlock
    seccomp_arch: str | None  # None: no seccomp

    def to_dict(self) -> dict:
        return asdict(self)


def detect(settings: SandboxSettings) -> Plan:
    """Find out which layers this kernel offers, namespaces by trying them in a forked child."""
    usable = libc.available()
    root = usable and os.geteuid() == 0
    plan = Plan(
        prctl=usable,
        namespaces=False,
        uid_base=settings.uid_base if root else None,
        landlock_abi=landlock.abi(),
        seccomp_arch=libc.ARCH if seccomp.supported() else None,
    )
    if usable and settings.namespaces:
        with_namespaces = replace(plan, namespaces=True)
        if _works_in_child(with_namespaces):
            return with_namespaces
    return plan


def _works_in_child(plan: Plan) -> bool:
    pid = os.fork()
    if pid == 0:
        try:
            leave_network(plan)
            enter_namespaces(plan, slot=0)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def leave_network(plan: Plan) -> None:
    """For the zygote, once: an empty network namespace and its own IPC namespace, which every
    child inherits. (One per child costs a third of the throughput, as the kernel tears each
    network namespace down on a worker thread; children cannot create sockets or SysV IPC
    objects anyway, so sharing an empty one gives nothing away.)"""
    if not plan.namespaces:
        return
    if plan.uid_base is not None:
        _step("network and IPC namespaces", libc.unshare, libc.CLONE_NEWNET | libc.CLONE_NEWIPC)
        return
    # not root: a user namespace of its own makes the others allowed; the zygote keeps its uid
    # inside it, mapped, or its children could not make user namespaces of their own
    uid, gid = os.geteuid(), os.getegid()
    flags = libc.CLONE_NEWUSER | libc.CLONE_NEWNET | libc.CLONE_NEWIPC
    _step("user, network and IPC namespaces", libc.unshare, flags)
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid} {uid} 1"),
        ("gid_map", f"{gid} {gid} 1"),
    ):
        _step("user namespace mapping", _write, f"/proc/self/{name}", text)


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def enter_namespaces(plan: Plan, slot: int) -> dict:
    """Steps 1-2: process group, uid, and a user namespace of the child's own."""
    applied = {}
    os.setpgid(0, 0)
    applied["process_group"] = True
    if plan.uid_base is not None:
        uid = plan.uid_base + slot
        _step("uid", _become, uid)
        applied["uid"] = uid
    if plan.namespaces:
        _step("user namespace", libc.unshare, libc.CLONE_NEWUSER)
    applied["namespaces"] = plan.namespaces
    return applied


def _become(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid):
        raise OSError("the uid did not change")


def restrict_self(plan: Plan, zygote_pid: int) -> dict:
    """Step 3: die with the zygote, gain no privileges, be neither dumpable nor traceable."""
    if not plan.prctl:
        return {"prctl": False}
    _step("parent-death signal", libc.prctl, libc.PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != zygote_pid:  # the zygote died before the line above
        os._exit(1)
    _step("no_new_privs", libc.prctl, libc.PR_SET_NO_NEW_PRIVS, 1)
    _step("not dumpable", libc.prctl, libc.PR_SET_DUMPABLE, 0)
    return {
        "parent_death_signal": True,
        "no_new_privs": libc.prctl(libc.PR_GET_NO_NEW_PRIVS) == 1,
        "not_dumpable": libc.prctl(libc.PR_GET_DUMPABLE) == 0,
    }


def close_descriptors(channel: int, devnull: int) -> dict:
    """Step 4: stdio to /dev/null, the channel to CHANNEL_FD, everything else closed (among
    them the channels of runs still waiting in the zygote)."""
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    if channel != CHANNEL_FD:
        os.dup2(channel, CHANNEL_FD, inheritable=False)
    if libc.IS_LINUX:
        os.closerange(CHANNEL_FD + 1, 1 << 20)  # close_range(2) underneath: one call
    else:  # one close() per number elsewhere: stop at the process's own limit
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        os.closerange(CHANNEL_FD + 1, soft if 0 < soft < 1 << 16 else 1 << 16)
    return {"closed_descriptors": True}


# A snippet's CPU yields to the server's: with every core busy running endless loops, a page,
# a probe of /healthz and the next learner's Run are still answered at once.
NICENESS = 10


def limit_resources(settings: SandboxSettings) -> dict:
    """Step 5. RLIMIT_CPU is only a backstop: the CPU timer fires first and leaves a trace.
    The child also runs at a lower priority than the server (NICENESS)."""
    memory = settings.memory_bytes
    cpu = math.floor(settings.cpu_seconds) + 1  # SIGXCPU here, SIGKILL one second later
    limits = {
        resource.RLIMIT_AS: (memory, memory),
        resource.RLIMIT_CPU: (cpu, cpu + 1),
        resource.RLIMIT_FSIZE: (0, 0),
        resource.RLIMIT_NPROC: (0, 0),
        resource.RLIMIT_CORE: (0, 0),
        resource.RLIMIT_NOFILE: (OPEN_FILES, OPEN_FILES),
    }
    for name in ("RLIMIT_MEMLOCK", "RLIMIT_MSGQUEUE"):
        if hasattr(resource, name):
            limits[getattr(resource, name)] = (0, 0)
    applied = True
    with contextlib.suppress(OSError):  # only ever lowered: a process may always do that
        os.setpriority(os.PRIO_PROCESS, 0, max(os.getpriority(os.PRIO_PROCESS, 0), NICENESS))
    for which, value in limits.items():
        try:
            resource.setrlimit(which, value)
        except (OSError, ValueError) as error:
            if libc.IS_LINUX:
                raise SetupError(f"rlimits: {error}") from error
            applied = False  # e.g. macOS refuses RLIMIT_AS: local use goes on without it
    return {"rlimits": applied}


def lock(plan: Plan, seccomp_filter: seccomp.Filter | None) -> dict:
    """Step 7: Landlock, then seccomp. Nothing after this can widen what the child may do."""
    applied = {"landlock": 0, "seccomp": False}
    if plan.landlock_abi:
        _step("Landlock", landlock.deny_all, plan.landlock_abi)
        applied["landlock"] = plan.landlock_abi
    if plan.seccomp_arch:
        _step("seccomp", seccomp_filter.install, os.getpid())
        applied["seccomp"] = True
    return applied


def _step(what: str, call, *args) -> None:
    try:
        call(*args)
    except OSError as error:
        raise SetupError(f"{what}: {error}") from error
