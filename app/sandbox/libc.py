"""The few kernel calls the sandbox makes that Python 3.11's `os` does not offer, via ctypes.

Calling the C library directly keeps the sandbox free of third-party packages and of system
libraries (libseccomp) that a fresh machine may lack; docs/sandbox.md says more.
"""

from __future__ import annotations

import ctypes
import os
import platform

try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:  # no C library to load: every layer below reports itself unavailable
    _libc = None

# <linux/prctl.h>
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3
PR_GET_SECCOMP = 21
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39

# <linux/sched.h>
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000

ARCH = platform.machine().lower()
IS_LINUX = platform.system() == "Linux"


def available() -> bool:
    """Whether prctl and syscall can be called here (Linux with a C library)."""
    return IS_LINUX and _libc is not None and hasattr(_libc, "prctl")


def _check(result: int) -> int:
    if result == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    return result


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    args = (ctypes.c_ulong(a) for a in (arg2, arg3, arg4, arg5))
    return _check(_libc.prctl(ctypes.c_int(option), *args))


def syscall(number: int, *args: int) -> int:
    return _check(_libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args)))


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)))
