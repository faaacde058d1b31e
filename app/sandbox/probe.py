"""The self-check: which layers hold on this machine, shown by hostile children.

At start the server runs a few probes through the real zygote: children with every layer that
try to open a socket, fork, or ignore the CPU timer; children with seccomp left out that try to
read a file (Landlock must refuse) or connect (the empty network namespace must refuse); a busy
loop (the CPU timer must stop it) and an allocation past the limit. `check` turns what happened
into one state per layer, which /healthz reports and `gradtrace serve` requires before it binds
to a public address.
"""

from __future__ import annotations

import ctypes
import errno
import json
import logging
import os
import signal
import socket

log = logging.getLogger("gradtrace.sandbox")

ACTIVE, UNAVAILABLE, FAILED, NOT_NEEDED = "active", "unavailable", "failed", "not-needed"
CLEAN_ENVIRONMENT = {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PATH", "LANG"}


# ***** in the child *****


def in_child(name: str, applied: dict) -> dict:
    """Do probe `name` after hardening; return what happened (if the child is still alive)."""
    if name == "layers":
        return {"applied": applied, "environment": sorted(os.environ)}
    if name == "socket":
        fd = ctypes.CDLL(None, use_errno=True).socket(socket.AF_INET, socket.SOCK_STREAM, 0)
        return {"survived": True, "result": fd, "errno": ctypes.get_errno()}
    if name == "fork":
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        return {"survived": True}
    if name == "signal_handler":
        return _errno_of(signal.signal, signal.SIGPROF, signal.SIG_IGN)
    if name == "timer":
        return _errno_of(signal.setitimer, signal.ITIMER_PROF, 0)
    if name == "file":
        return _errno_of(lambda: open("/etc/passwd", "rb").close())  # noqa: SIM115
    if name == "network":
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(1)
            return _errno_of(sock.connect, ("127.0.0.1", 9))
    raise ValueError(f"no probe {name!r}")


def _errno_of(call, *args) -> dict:
    try:
        call(*args)
    except OSError as error:
        return {"errno": error.errno}
    return {"errno": 0}


# ***** in the server *****


def check(client) -> dict:
    """Probe every layer; {"strong": bool, "layers": {name: {"state": ..., "detail": ...}}}."""
    plan = client.ready["plan"]
    layers: dict[str, dict] = {}

    def record(layer: str, state: str, detail: str) -> None:
        layers[layer] = {"state": state, "detail": detail}

    environment = set(client.ready["environment"])
    record(
        "clean_environment",
        ACTIVE if environment <= CLEAN_ENVIRONMENT else FAILED,
        f"the zygote sees only {', '.join(sorted(environment))}",
    )
    report, data = client.probe("layers")
    applied = json.loads(data)["applied"] if data else {}
    _check_kernel_basics(plan, applied, report, record)
    _check_namespaces(client, plan, record)
    _check_landlock(client, plan, record)
    _check_seccomp(client, plan, record)
    _check_limits(client, record)
    strong = all(layer["state"] in (ACTIVE, NOT_NEEDED) for layer in layers.values())
    return {"strong": strong, "layers": layers}


def _check_kernel_basics(plan: dict, applied: dict, report: dict, record) -> None:
    if report.get("exit_code") != 0 or not applied:
        for layer in ("process_group", "uid", "no_new_privs", "not_dumpable",
                      "parent_death_signal", "closed_descriptors"):  # fmt: skip
            record(layer, FAILED, f"the probe child did not finish: {report}")
        return
    record(
        "process_group",
        ACTIVE if applied.get("process_group") else FAILED,
        "each child leads its own process group; the deadline kills the group",
    )
    if plan["uid_base"] is None:
        record("uid", NOT_NEEDED, "the server is not root: children keep its unprivileged uid")
    else:
        uid = applied.get("uid")
        record(
            "uid",
            ACTIVE if uid is not None and uid != 0 else FAILED,
            f"children run as uid {plan['uid_base']} + slot (the probe ran as {uid})",
        )
    for layer, what in (
        ("no_new_privs", "PR_SET_NO_NEW_PRIVS: no privilege gained through exec"),
        ("not_dumpable", "PR_SET_DUMPABLE 0: no core dumps, no ptrace"),
        ("parent_death_signal", "PR_SET_PDEATHSIG: children die with the zygote"),
    ):
        if not plan["prctl"]:
            record(layer, UNAVAILABLE, "prctl is Linux only")
        else:
            record(layer, ACTIVE if applied.get(layer) else FAILED, what)
    record(
        "closed_descriptors",
        ACTIVE if applied.get("closed_descriptors") else FAILED,
        "every inherited descriptor closed but the run's channel",
    )


def _check_namespaces(client, plan: dict, record) -> None:
    if not plan["namespaces"]:
        record(
            "namespaces",
            UNAVAILABLE,
            "user/network/IPC namespaces could not be created (or were turned off)",
        )
        return
    report, data = client.probe("network", skip=("seccomp", "landlock"))
    got = json.loads(data).get("errno") if data else None
    record(
        "namespaces",
        ACTIVE if got == errno.ENETUNREACH else FAILED,
        f"new user, network and IPC namespaces; connect() to 127.0.0.1 gave "
        f"{errno.errorcode.get(got, got)}",
    )


def _check_landlock(client, plan: dict, record) -> None:
    if not plan["landlock_abi"]:
        record("landlock", UNAVAILABLE, "this kernel has no Landlock")
        return
    _, data = client.probe("file", skip=("seccomp",))
    got = json.loads(data).get("errno") if data else None
    record(
        "landlock",
        ACTIVE if got == errno.EACCES else FAILED,
        f"ABI {plan['landlock_abi']}, no rules; reading /etc/passwd gave "
        f"{errno.errorcode.get(got, got)}",
    )


def _check_seccomp(client, plan: dict, record) -> None:
    if not plan["seccomp_arch"]:
        record("seccomp", UNAVAILABLE, "no seccomp filter on this kernel or architecture")
        return
    killed = [client.probe(name)[0].get("signal") == signal.SIGSYS for name in ("socket", "fork")]
    refused = []
    for name in ("signal_handler", "timer"):
        _, data = client.probe(name)
        refused.append(bool(data) and json.loads(data).get("errno") == errno.EPERM)
    record(
        "seccomp",
        ACTIVE if all(killed) and all(refused) else FAILED,
        f"{plan['seccomp_arch']} allowlist; socket() and fork() killed: {killed}; "
        f"changing the CPU timer or its handler refused: {refused}",
    )


def _check_limits(client, record) -> None:
    busy = client.run_blocking("while True:\n    pass\n", limits={"cpu_seconds": 0.2})
    memory = client.run_blocking(f"x = bytearray({client.settings.memory_bytes})\n")
    record(
        "cpu_timer",
        ACTIVE if busy["outcome"]["status"] == "cpu_limit" else FAILED,
        f"setitimer(ITIMER_PROF) plus RLIMIT_CPU; a busy loop ended {busy['outcome']['status']}",
    )
    record(
        "rlimits",
        ACTIVE if memory["outcome"]["status"] == "memory_limit" else FAILED,
        "address space, CPU, file size, processes, core dumps, open files; allocating past "
        f"the memory limit ended {memory['outcome']['status']}",
    )


def log_report(report: dict) -> None:
    for name, layer in report["layers"].items():
        level = logging.INFO if layer["state"] in (ACTIVE, NOT_NEEDED) else logging.WARNING
        log.log(level, "sandbox layer %-20s %-11s %s", name, layer["state"], layer["detail"])
