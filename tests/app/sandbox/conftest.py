"""A real sandbox for the tests, with short limits, and the traps attacks must not set off.

Every layer must be active here, as in CI: if one is not, every test that relies on the layers
fails loudly rather than skip. On a machine without some layer (macOS, an old kernel, a
container that forbids namespaces), GRADTRACE_ALLOW_WEAK_SANDBOX=1 turns those failures into
skips that say why, so that the rest of the suite can run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import tempfile
from pathlib import Path

import pytest

from app.sandbox import SandboxClient, SandboxSettings, probe
from tests.trace_schema import VALIDATOR

SECRET = "gradtrace-test-secret-7f3a9c"  # in the server's environment; no snippet may see it
TRAPPED_SIGNALS = (signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP, signal.SIGTERM, signal.SIGALRM)

# A short CPU budget keeps the bombs quick (the wall clock stays at its default, so that a busy
# CI machine does not turn CPU bombs into wall_limit), and the corpus is queued all at once.
TEST_SETTINGS = dict(cpu_seconds=0.5, max_queue=256)


def weak_allowed() -> bool:
    return os.environ.get("GRADTRACE_ALLOW_WEAK_SANDBOX") == "1"


@pytest.fixture(scope="session")
def signals_received():
    """Signals that reached this process (the server's stand-in) while the tests ran."""
    received: list[int] = []
    previous = {
        s: signal.signal(s, lambda signum, frame: received.append(signum)) for s in TRAPPED_SIGNALS
    }
    yield received
    for s, handler in previous.items():
        signal.signal(s, handler)


@pytest.fixture(scope="session")
def sandbox(signals_received):
    os.environ["GRADTRACE_TEST_SECRET"] = SECRET
    client = SandboxClient(SandboxSettings(**TEST_SETTINGS))
    client.start()
    yield client
    client.close()


@pytest.fixture(scope="session")
def users_sandbox(signals_received):
    """A sandbox with the CPU budget a user's run gets, for code that is not a bomb but takes
    its time: the suite's short budget would cut the heaviest goldens off on a busy machine.
    (A run's own limits can only lower its sandbox's, never raise them.)"""
    os.environ["GRADTRACE_TEST_SECRET"] = SECRET
    client = SandboxClient(SandboxSettings(max_queue=TEST_SETTINGS["max_queue"]))
    client.start()
    yield client
    client.close()


@pytest.fixture(scope="session")
def layers(sandbox):
    """The self-check's report; fails every test that needs it when a layer is missing."""
    report = probe.check(sandbox)
    if not report["strong"]:
        missing = {
            n: layer
            for n, layer in report["layers"].items()
            if layer["state"] not in (probe.ACTIVE, probe.NOT_NEEDED)
        }
        if weak_allowed():
            pytest.skip(
                f"sandbox layers missing here: {', '.join(missing)} "
                "(GRADTRACE_ALLOW_WEAK_SANDBOX=1)"
            )
        pytest.fail(
            "sandbox layers are missing on this machine, so the sandbox tests cannot vouch for "
            f"it: {json.dumps(missing, indent=1)}\n"
            "GRADTRACE_ALLOW_WEAK_SANDBOX=1 skips the tests that need them instead.",
            pytrace=False,
        )
    return report


@pytest.fixture(scope="session")
def traps(tmp_path_factory):
    """A canary file and a world-writable scratch folder, outside pytest's private tmp (0700),
    so that only the sandbox's own layers stand between a child and them."""
    root = Path(tempfile.mkdtemp(prefix="gradtrace-traps-", dir="/tmp"))
    root.chmod(0o755)
    canary = root / "canary.txt"
    canary.write_text("CANARY-" + os.urandom(8).hex())
    canary.chmod(0o644)
    yield root, canary
    shutil.rmtree(root, ignore_errors=True)


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it is offered."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def connections(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="session")
def listen():
    """listen(): a fresh Listener (closed at the end of the session)."""
    opened: list[Listener] = []

    def make() -> Listener:
        opened.append(Listener())
        return opened[-1]

    yield make
    for listener in opened:
        listener.close()


@pytest.fixture(scope="session")
def secret() -> str:
    return SECRET


@pytest.fixture(scope="session")
def valid():
    """valid(trace): the trace is one the schema accepts, whatever happened to the run."""

    def check(trace: dict) -> dict:
        VALIDATOR.validate(trace)
        json.dumps(trace, allow_nan=False)
        return trace

    return check


# ***** hunting for other runs' data in a child's memory *****

# Canaries look like this; a hunter reports every one it finds, and a test then checks whose.
CANARY = "GTLEAK-{kind}-{hex}"

# A snippet reaches `sys` (by four routes, all expected to work: the kernel is the wall, not
# Python), then looks for canaries three ways. `$seed` makes its own canary at run time (so it
# is in memory but not in the code): finding it proves each way works.
HUNT_START = r"""
import warnings, collections
import numpy as np

routes = {"warnings.sys": warnings.sys}
for cls in ().__class__.__base__.__subclasses__():
    found = getattr(getattr(cls, "__init__", None), "__globals__", {}).get("sys")
    if getattr(found, "_getframe", None) is not None:
        routes["subclasses"] = found
        break
routes["__globals__"] = collections.namedtuple.__globals__["_sys"]
for name in dir(np):
    function = getattr(np, name)
    found = getattr(getattr(function, "_implementation", function), "__globals__", {}).get("sys")
    if getattr(found, "_getframe", None) is not None:
        routes["numpy"] = found
        break
sys = routes["warnings.sys"]
print("routes", sorted(name for name, found in routes.items() if found is sys))
re, gc, ctypes = sys.modules["re"], sys.modules["gc"], sys.modules["ctypes"]

TOKEN = re.compile(rb"GTLEAK-[a-z]+-[0-9a-f]{16}")
MARK = "GTLEAK-"
# several copies, made at run time: in memory (one may straddle a chunk the raw scan reads)
mine = ["GTLEAK-self-" + "%016x" % ($seed * 7919 + 0 * i) for i in range(8)]


def tokens_in(value):
    if isinstance(value, str):
        if MARK not in value:
            return set()
        value = value.encode("utf-8", "surrogatepass")
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value)
        return {t.decode() for t in TOKEN.findall(value)} if MARK.encode() in value else set()
    return set()
"""

HUNT_FRAMES = r"""
def walk(roots, depth):
    found, seen, layer = set(), set(), list(roots)
    for _ in range(depth):
        following = []
        for obj in layer:
            if id(obj) not in seen:
                seen.add(id(obj))
                found |= tokens_in(obj)
                following.extend(gc.get_referents(obj))
        layer = following
    return found


frames, frame = [], sys._getframe()
while frame is not None:
    frames.append(frame)
    frame = frame.f_back
frames += list(sys._current_frames().values())
print("frames", len(frames), sorted(walk([f.f_locals for f in frames], 5)))
"""

HUNT_GC = r"""
found = set()
for obj in gc.get_objects():
    found |= tokens_in(obj)
    for referent in gc.get_referents(obj):
        found |= tokens_in(referent)
print("gc", sorted(found))
"""

# Every 4 KiB page within $radius of the run's own objects (the zygote's heap and arenas, as
# inherited): mapped is asked of madvise (ENOMEM where nothing is), readable of FUTEX_WAIT with
# a zero timeout (EFAULT for PROT_NONE gaps and the like, where reading would crash), and what
# is readable is read in chunks of up to 1 MiB.
HUNT_RAW = r"""
PAGE, BLOCK, RADIUS = 4096, 1 << 20, $radius
libc = ctypes.CDLL(None, use_errno=True)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.syscall.restype = ctypes.c_long
libc.syscall.argtypes = [
    ctypes.c_long, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p
]
FUTEX = 202 if sys.implementation._multiarch.startswith("x86_64") else 98
ZERO = (ctypes.c_long * 2)()


def mapped(address, size):
    return libc.madvise(address, size, 0) == 0


def readable(address):
    if libc.syscall(FUTEX, address, 128, 0xFFFFFFFF, ctypes.addressof(ZERO)) == 0:
        return True
    return ctypes.get_errno() != 14


def scan(start, end):
    found, pages, run = set(), 0, None
    for address in range(start, end + PAGE, PAGE):  # one page past the end closes the last run
        ok = address < end and readable(address)
        pages += ok
        if ok and run is None:
            run = address
        if run is not None and (not ok or address + PAGE - run >= BLOCK):
            stop = address + PAGE if ok else address
            found |= tokens_in(ctypes.string_at(run, stop - run))
            run = None
    return found, pages


objects = gc.get_objects()
centres = {id(obj) // BLOCK * BLOCK for obj in objects[:: max(1, len(objects) // 400)]}
centres |= {id(mine[0]) // BLOCK * BLOCK, np.ones(1 << 16).ctypes.data // BLOCK * BLOCK}
del objects
windows = []
for centre in sorted(centres):
    low, high = max(BLOCK, centre - RADIUS), centre + RADIUS
    if windows and low <= windows[-1][1]:
        windows[-1][1] = max(windows[-1][1], high)
    else:
        windows.append([low, high])
found, pages, looked = set(), 0, 0
for low, high in windows:
    looked += high - low
    for block in range(low, high, BLOCK):
        if mapped(block, BLOCK):
            more, n = scan(block, block + BLOCK)
        else:
            more, n = set(), 0
            for page in range(block, block + BLOCK, PAGE):
                if mapped(page, PAGE):
                    got, k = scan(page, page + PAGE)
                    more, n = more | got, n + k
        found |= more
        pages += n
print("raw", looked >> 20, "MiB looked at,", pages, "pages read:", sorted(found))
"""


def hunter(seed: int, radius: int, ways: tuple[str, ...] = ("frames", "gc", "raw")) -> str:
    """A snippet that hunts for canaries the given ways; its own is canary("self", seed)."""
    parts = {"frames": HUNT_FRAMES, "gc": HUNT_GC, "raw": HUNT_RAW}
    code = HUNT_START + "".join(parts[way] for way in ways)
    return code.replace("$seed", str(seed)).replace("$radius", str(radius))


def canary(kind: str, seed: int) -> str:
    return CANARY.format(kind=kind, hex="%016x" % (seed * 7919))


@pytest.fixture(scope="session")
def hunt():
    """hunt.code(seed, radius, ways), hunt.canary(kind, seed): see hunter()."""

    class Hunt:
        code = staticmethod(hunter)
        canary = staticmethod(canary)

    return Hunt
