"""Landlock with no rules: the child may not open, create or change any file, nor use TCP.

A ruleset that handles every access right the kernel knows and grants none denies them all,
whatever the file's owner or mode. Files opened before the restriction stay usable, which is how
the child keeps its result pipe. From ABI 4 it also denies TCP bind and connect, and from ABI 6
it scopes abstract UNIX sockets and signals to the child itself.
"""

from __future__ import annotations

import ctypes
import errno
import os

from app.sandbox import libc

# The Landlock calls have the same numbers on every architecture (the unified table).
CREATE_RULESET, RESTRICT_SELF = 444, 446
CREATE_RULESET_VERSION = 1 << 0

# <linux/landlock.h>: each ABI adds rights; handling a right this kernel lacks is an error.
FS_RIGHTS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


def abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it has none (or it is disabled)."""
    if not libc.available():
        return 0
    try:
        return libc.syscall(CREATE_RULESET, 0, 0, CREATE_RULESET_VERSION)
    except OSError as error:
        if error.errno in (errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM):
            return 0
        raise


def handled(version: int) -> dict[str, int]:
    """Every right to deny under this ABI, by field of the ruleset."""
    fs = max(rights for since, rights in FS_RIGHTS_BY_ABI.items() if since <= version)
    rights = {"handled_access_fs": fs}
    if version >= 4:
        rights["handled_access_net"] = NET_BIND_TCP | NET_CONNECT_TCP
    if version >= 6:
        rights["scoped"] = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    return rights


def deny_all(version: int) -> None:
    """Restrict this process (and anything it could start) to no file or network access."""
    rights = handled(version)
    attr = _RulesetAttr(**rights)
    # older kernels want the struct only as long as the fields they know
    size = {1: 8, 2: 16, 3: 24}[len(rights)]
    fd = libc.syscall(CREATE_RULESET, ctypes.addressof(attr), size, 0)
    try:
        libc.syscall(RESTRICT_SELF, fd, 0)
    finally:
        os.close(fd)
