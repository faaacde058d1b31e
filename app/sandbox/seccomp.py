"""The child's system-call allowlist: a seccomp BPF program built here, by hand.

Default deny: a call not listed fails with EPERM (Python raises PermissionError, and the run is
reported as `forbidden`). Calls that only an escape would make (starting programs, processes,
network connections, signals to others, namespaces, mounts, kernel extension points) kill the
whole process at once (SIGSYS). What a traced run needs after warm-up is tiny: memory, futexes,
reading the clock, writing its result and exiting.

Not allowed, on purpose: rt_sigaction, rt_sigprocmask, setitimer and the timer_* calls (so the
CPU timer and its handler, set up before this filter, cannot be switched off or blocked), and
nanosleep (a sleeping snippet would only hold a slot).

Numbers are written out for x86_64 and aarch64, the two architectures this runs on, so no
system header or libseccomp is needed.
"""

from __future__ import annotations

import ctypes
import errno
import struct

from app.sandbox import libc

# <linux/audit.h>
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000

# <linux/seccomp.h>
SECCOMP_MODE_FILTER = 2
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000

# <linux/filter.h>: classic BPF opcodes
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
NR_OFFSET, ARCH_OFFSET = 0, 4


def _arg_low(i: int) -> int:
    return 16 + 8 * i  # the low 32 bits (both architectures are little-endian)


CLONE_THREAD = 0x00010000
PROT_EXEC = 0x4
# Stands for the child's own pid until `install` writes it in: never a pid, nor 0 or -1.
OWN_PID = 0x7FFFFFFF
SIGNALS = ("kill", "tkill", "tgkill")  # allowed to the child itself only (abort(), raise())

ALLOWED = (
    "read", "write", "readv", "writev", "close", "fstat", "lseek", "munmap", "mremap", "brk",
    "madvise", "futex", "getrandom", "clock_gettime", "clock_getres", "gettimeofday", "time",
    "exit", "exit_group", "getpid", "gettid", "getppid", "sched_yield", "sched_getaffinity",
    "getrusage", "times", "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid",
    "restart_syscall", "rt_sigreturn", "sigaltstack",
)  # fmt: skip

KILLED = (
    "execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev",
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto",
    "sendmsg", "recvfrom", "recvmsg", "rt_sigqueueinfo",
    "rt_tgsigqueueinfo", "pidfd_send_signal", "pidfd_open", "pidfd_getfd", "unshare", "setns",
    "mount", "umount2", "pivot_root", "chroot", "bpf", "perf_event_open", "userfaultfd",
    "keyctl", "add_key", "request_key", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "memfd_create", "memfd_secret", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "reboot", "swapon", "swapoff", "open_by_handle_at",
    "name_to_handle_at", "iopl", "ioperm", "personality", "syslog", "acct", "quotactl",
    "mount_setattr", "fsopen", "fsmount", "fsconfig", "fspick", "move_mount", "open_tree",
    "lookup_dcookie", "modify_ldt", "kcmp", "process_madvise", "process_mrelease", "mbind",
    "set_mempolicy", "migrate_pages", "move_pages", "vmsplice",
)  # fmt: skip

# Generated from the kernel's unistd headers (asm/unistd_64.h, asm-generic/unistd.h).
NUMBERS = {
    "x86_64": {
        "read": 0, "write": 1, "readv": 19, "writev": 20, "close": 3, "fstat": 5, "lseek": 8,
        "mmap": 9, "munmap": 11, "mremap": 25, "mprotect": 10, "pkey_mprotect": 329, "brk": 12,
        "madvise": 28, "futex": 202, "getrandom": 318, "clock_gettime": 228,
        "clock_getres": 229, "gettimeofday": 96, "time": 201, "exit": 60, "exit_group": 231,
        "getpid": 39, "gettid": 186, "getppid": 110, "sched_yield": 24,
        "sched_getaffinity": 204, "getrusage": 98, "times": 100, "getuid": 102, "geteuid": 107,
        "getgid": 104, "getegid": 108, "getresuid": 118, "getresgid": 120,
        "restart_syscall": 219, "rt_sigreturn": 15, "sigaltstack": 131, "ioctl": 16,
        "clone": 56, "clone3": 435, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322,
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "socket": 41,
        "socketpair": 53, "connect": 42, "bind": 49, "listen": 50, "accept": 43, "accept4": 288,
        "sendto": 44, "sendmsg": 46, "recvfrom": 45, "recvmsg": 47, "kill": 62, "tkill": 200,
        "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
        "pidfd_send_signal": 424, "pidfd_open": 434, "pidfd_getfd": 438, "unshare": 272,
        "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "bpf": 321,
        "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248,
        "request_key": 249, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "memfd_create": 319, "memfd_secret": 447, "kexec_load": 246,
        "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176,
        "reboot": 169, "swapon": 167, "swapoff": 168, "open_by_handle_at": 304,
        "name_to_handle_at": 303, "iopl": 172, "ioperm": 173, "personality": 135, "syslog": 103,
        "acct": 163, "quotactl": 179, "mount_setattr": 442, "fsopen": 430, "fsmount": 432,
        "fsconfig": 431, "fspick": 433, "move_mount": 429, "open_tree": 428,
        "lookup_dcookie": 212, "modify_ldt": 154, "kcmp": 312, "process_madvise": 440,
        "process_mrelease": 448, "mbind": 237, "set_mempolicy": 238, "migrate_pages": 256,
        "move_pages": 279, "vmsplice": 278,
    },
    "aarch64": {
        "read": 63, "write": 64, "readv": 65, "writev": 66, "close": 57, "fstat": 80,
        "lseek": 62, "mmap": 222, "munmap": 215, "mremap": 216, "mprotect": 226,
        "pkey_mprotect": 288, "brk": 214, "madvise": 233, "futex": 98, "getrandom": 278,
        "clock_gettime": 113, "clock_getres": 114, "gettimeofday": 169, "exit": 93,
        "exit_group": 94, "getpid": 172, "gettid": 178, "getppid": 173, "sched_yield": 124,
        "sched_getaffinity": 123, "getrusage": 165, "times": 153, "getuid": 174, "geteuid": 175,
        "getgid": 176, "getegid": 177, "getresuid": 148, "getresgid": 150,
        "restart_syscall": 128, "rt_sigreturn": 139, "sigaltstack": 132, "ioctl": 29,
        "clone": 220, "clone3": 435, "execve": 221, "execveat": 281, "ptrace": 117,
        "process_vm_readv": 270, "process_vm_writev": 271, "socket": 198, "socketpair": 199,
        "connect": 203, "bind": 200, "listen": 201, "accept": 202, "accept4": 242, "sendto": 206,
        "sendmsg": 211, "recvfrom": 207, "recvmsg": 212, "kill": 129, "tkill": 130,
        "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240,
        "pidfd_send_signal": 424, "pidfd_open": 434, "pidfd_getfd": 438, "unshare": 97,
        "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219, "add_key": 217,
        "request_key": 218, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "memfd_create": 279, "memfd_secret": 447, "kexec_load": 104,
        "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "reboot": 142, "swapon": 224, "swapoff": 225, "open_by_handle_at": 265,
        "name_to_handle_at": 264, "personality": 92, "syslog": 116, "acct": 89, "quotactl": 60,
        "mount_setattr": 442, "fsopen": 430, "fsmount": 432, "fsconfig": 431, "fspick": 433,
        "move_mount": 429, "open_tree": 428, "lookup_dcookie": 18, "kcmp": 272,
        "process_madvise": 440, "process_mrelease": 448, "mbind": 235, "set_mempolicy": 237,
        "migrate_pages": 238, "move_pages": 239, "vmsplice": 75,
    },
}  # fmt: skip


def supported() -> bool:
    """Whether this kernel filters system calls and this module knows the architecture."""
    if not libc.available() or libc.ARCH not in NUMBERS:
        return False
    try:
        libc.prctl(libc.PR_GET_SECCOMP)
    except OSError:  # EINVAL: the kernel was built without seccomp
        return False
    return True


def _errno(code: int) -> int:
    return RET_ERRNO | code


def program(arch: str) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions."""
    numbers = NUMBERS[arch]
    out: list[tuple[int, int, int, int]] = [
        (LD_W_ABS, 0, 0, ARCH_OFFSET),
        (JEQ_K, 1, 0, AUDIT_ARCH[arch]),
        (RET_K, 0, 0, RET_KILL_PROCESS),  # a call made through another ABI
        (LD_W_ABS, 0, 0, NR_OFFSET),
    ]
    if arch == "x86_64":  # the x32 ABI reaches the same calls under other numbers
        out += [(JGE_K, 0, 1, X32_SYSCALL_BIT), (RET_K, 0, 0, RET_KILL_PROCESS)]

    def plain(name: str, action: int) -> None:
        if name in numbers:
            out.extend([(JEQ_K, 0, 1, numbers[name]), (RET_K, 0, 0, action)])

    def flagged(name: str, arg: int, bit: int, if_set: int, if_clear: int) -> None:
        out.extend(
            [
                (JEQ_K, 0, 4, numbers[name]),
                (LD_W_ABS, 0, 0, _arg_low(arg)),
                (JSET_K, 0, 1, bit),
                (RET_K, 0, 0, if_set),
                (RET_K, 0, 0, if_clear),
            ]
        )

    for name in KILLED:
        plain(name, RET_KILL_PROCESS)
    for name in SIGNALS:  # first argument: the pid (kill), thread group (tgkill) or thread
        out.extend(
            [
                (JEQ_K, 0, 4, numbers[name]),
                (LD_W_ABS, 0, 0, _arg_low(0)),
                (JEQ_K, 0, 1, OWN_PID),
                (RET_K, 0, 0, RET_ALLOW),
                (RET_K, 0, 0, RET_KILL_PROCESS),
            ]
        )
    for name in ALLOWED:
        plain(name, RET_ALLOW)
    # threads fail as if there were too many (Python says "can't start new thread"); any
    # other clone is a new process
    flagged("clone", 0, CLONE_THREAD, _errno(errno.EAGAIN), RET_KILL_PROCESS)
    plain("clone3", _errno(errno.ENOSYS))  # its flags sit behind a pointer: use clone
    # no new executable memory: code the snippet smuggles in cannot be made to run
    flagged("mmap", 2, PROT_EXEC, _errno(errno.EPERM), RET_ALLOW)
    flagged("mprotect", 2, PROT_EXEC, _errno(errno.EPERM), RET_ALLOW)
    plain("ioctl", _errno(errno.ENOTTY))  # isatty() and friends: "not a terminal"
    out.append((RET_K, 0, 0, _errno(errno.EPERM)))
    return out


class Filter:
    """A compiled filter, built once in the zygote and installed by each child."""

    def __init__(self, arch: str) -> None:
        instructions = program(arch)
        self.raw = b"".join(struct.pack("=HBBI", *insn) for insn in instructions)
        # where the child's pid goes: the k field (offset 4) of each comparison with OWN_PID
        self.own_pid_at = [
            8 * i + 4
            for i, (code, _, _, k) in enumerate(instructions)
            if code == JEQ_K and k == OWN_PID
        ]

    def install(self, own_pid: int) -> None:
        """Load the filter into this process for good. Needs no_new_privs (or CAP_SYS_ADMIN)."""
        raw = bytearray(self.raw)
        for offset in self.own_pid_at:
            struct.pack_into("=I", raw, offset, own_pid)
        buffer = (ctypes.c_char * len(raw)).from_buffer(raw)
        fprog = _SockFprog(len(raw) // 8, ctypes.addressof(buffer))
        libc.prctl(libc.PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
