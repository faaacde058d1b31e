"""The attack corpus: real escape attempts through the real sandbox, in CodeJail's style.

Each snippet tries to get something out of its child: read the canary file, write into the
scratch folder, connect to a listener on 127.0.0.1, signal the server, read the server's
environment, or exhaust something. Every one asserts that nothing got out (checked from outside,
not from what the snippet says) and that the run ended with the status a learner should see.

The groups follow the research notes: class-hierarchy walking, builtins recovery, frame
walking, format-string and getattr tricks, native memory, numpy/torch file, pickle and URL
functions, OS side effects, and resource bombs. Language-level escapes are expected to work:
the snippets then reach `os`, `ctypes` or `socket` for real, and the kernel stops them.
"""

from __future__ import annotations

import json
import os
import string
import tempfile
from concurrent.futures import wait
from dataclasses import dataclass
from pathlib import Path

import pytest

OS = "import random\nos = random._os\n"  # the real os module, one attribute away
SYS = "import warnings\nsys = warnings.sys\n"
CTYPES = SYS + "ctypes = sys.modules['ctypes']\nlibc = ctypes.CDLL(None, use_errno=True)\n"
NUMPY = SYS + "np = sys.modules['numpy']\n"
WALK = """
def every_class():
    seen, todo = set(), [object]
    while todo:
        for sub in type.__subclasses__(todo.pop()):
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return seen
def find(name):
    return next(c for c in every_class() if c.__name__ == name)
"""


@dataclass(frozen=True)
class Attack:
    name: str
    status: str | tuple[str, ...]  # several: any limit that fits the bomb, whichever comes first
    code: str
    error: str | None = None  # the exception type, for status "error"
    limits: dict | None = None  # tighter per-run limits, to keep the test quick


# fmt: off
ATTACKS = [
    # ***** class-hierarchy walking *****
    Attack("subclasses-wrap-close-system", "forbidden", WALK + """
find("_wrap_close").__init__.__globals__["system"]("touch $scratch/pwned")
"""),
    Attack("subclasses-fileio-canary", "forbidden", WALK + """
print(find("FileIO")("$canary").read())
"""),
    Attack("subclasses-catch-warnings-builtins", "forbidden", WALK + """
builtins = find("catch_warnings")()._module.__builtins__
print(builtins["__import__"]("os").listdir("/"))
"""),
    Attack("subclasses-popen", "forbidden", WALK + """
find("Popen")(["/bin/sh", "-c", "cat $canary > $scratch/copy"]).wait()
"""),
    Attack("subclasses-builtin-importer-posix", "forbidden", WALK + """
posix = find("BuiltinImporter").load_module("posix")
posix.system("touch $scratch/pwned")
"""),
    Attack("subclasses-environ-class", "ok", WALK + """
print(dict(find("_wrap_close").__init__.__globals__["environ"]))
"""),
    Attack("subclasses-fileio-write", "forbidden", WALK + """
find("FileIO")("$scratch/written", "w").write(b"x")
"""),
    # ***** builtins recovery *****
    Attack("builtin-self-import-os", "forbidden", """
len.__self__.__import__("os").system("touch $scratch/pwned")
"""),
    Attack("builtin-self-open-canary", "forbidden", """
print(len.__self__.open("$canary").read())
"""),
    Attack("builtins-dict-import", "error", """
__builtins__["__import__"]("os")
""", error="ImportError"),
    Attack("dunder-import-os", "error", "__import__('os')\n", error="ImportError"),
    Attack("import-os", "error", "import os\n", error="ImportError"),
    Attack("import-subprocess", "error", "import subprocess\n", error="ImportError"),
    Attack("import-ctypes", "error", "import ctypes\n", error="ImportError"),
    Attack("import-socket", "error", "from socket import socket\n", error="ImportError"),
    Attack("import-relative", "error", "from . import x\n", error="ImportError"),
    Attack("exec-import-os", "error", "exec('import os')\n", error="ImportError"),
    # engine.snippet compares the name with "torch" first: the impostor gets the engine
    Attack("str-subclass-module-name", "ok", """
class Sneaky(str):
    def __eq__(self, other):
        return True
    def __hash__(self):
        return hash("math")
print(__import__(Sneaky("os")).__name__)
"""),
    Attack("warnings-sys-modules-os", "forbidden", SYS + """
sys.modules["os"].system("touch $scratch/pwned")
"""),
    # ***** frame walking *****
    Attack("traceback-frames-to-sys", "forbidden", """
try:
    1 / 0
except ZeroDivisionError as error:
    frame = error.__traceback__.tb_frame
while frame.f_back is not None:
    frame = frame.f_back
modules = frame.f_globals["sys"].modules
modules["os"].kill($server_pid, 10)
"""),
    Attack("getframe-globals-os", "forbidden", SYS + """
frame = sys._getframe()
found = None
while frame is not None:
    found = found or frame.f_globals.get("os")
    frame = frame.f_back
found.kill($zygote_pid, 15)
"""),
    # with the tracer's caps lifted from inside, the output piles up until memory runs out (or,
    # on a busy machine, the CPU time first)
    Attack("frame-tracer-tamper", ("memory_limit", "cpu_limit"), SYS + """
frame = sys._getframe()
while "tracer" not in frame.f_locals:
    frame = frame.f_back
tracer = frame.f_locals["tracer"]
tracer.max_output = None
tracer.max_events = 10 ** 9
while True:
    print("x" * 10 ** 7)
"""),
    # reading other runs out of the memory every child inherits (test_isolation.py at length):
    # each finds its own canary and reports every other it sees; no other run's may show
    Attack("heap-frames", "ok", "$hunt_frames"),
    Attack("heap-gc-objects", ("ok", "cpu_limit"), "$hunt_gc"),
    Attack("heap-raw-pages", ("ok", "cpu_limit"), "$hunt_raw"),
    Attack("generator-frame-builtins", "forbidden", """
def gen():
    yield
g = gen()
builtins = g.gi_frame.f_builtins
print(builtins["open"]("$canary").read())
"""),
    # ***** format-string and getattr tricks *****
    Attack("format-globals-leak", "ok", """
print("{0.__globals__[__builtins__]}".format(lambda: 0))
"""),
    Attack("format-environ-leak", "ok", WALK + """
print("{0.__init__.__globals__[environ]}".format(find("_wrap_close")))
"""),
    Attack("getattr-string-building", "forbidden", """
imp = getattr(getattr(len, "__se" + "lf__"), "__imp" + "ort__")
getattr(imp("o" + "s"), "sys" + "tem")("touch $scratch/pwned")
"""),
    Attack("format-subclasses", "ok", """
print("{0.__class__.__base__.__subclasses__}".format(0)[:20])
"""),
    # ***** native memory *****
    Attack("ctypes-system", "forbidden", CTYPES + """
libc.system(b"touch $scratch/pwned")
"""),
    Attack("ctypes-raw-socket-syscall", "forbidden", CTYPES + """
print(libc.syscall(41 if ctypes.sizeof(ctypes.c_void_p) else 198, 2, 1, 0))
"""),
    Attack("ctypes-null-read", "crashed", CTYPES + """
print(ctypes.string_at(8, 16))
"""),
    Attack("ctypes-wild-write", "crashed", CTYPES + """
ctypes.memset(4096, 0, 64)
"""),
    Attack("ctypes-disarm-cpu-timer", "cpu_limit", CTYPES + """
zero = (ctypes.c_long * 4)()
print(libc.setitimer(2, zero, None), ctypes.get_errno())
while True:
    pass
"""),
    Attack("ctypes-executable-mmap", "ok", CTYPES + """
libc.mmap.restype = ctypes.c_void_p
address = libc.mmap(None, 4096, 7, 0x22, -1, 0)
print("mapped" if address not in (None, 2 ** 64 - 1) else "refused")
"""),
    Attack("ctypes-ptrace-zygote", "forbidden", CTYPES + """
libc.ptrace(16, $zygote_pid, 0, 0)
"""),
    Attack("ctypes-unshare", "forbidden", CTYPES + """
libc.unshare(0x10000000)
"""),
    Attack("ctypes-mount", "forbidden", CTYPES + """
libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
"""),
    Attack("ctypes-bpf", "forbidden", CTYPES + """
libc.syscall(321, 0, 0, 0)
"""),
    Attack("numpy-as-strided-wild-read", "crashed", NUMPY + """
import torch
a = torch.ones(4).numpy()
wild = np.lib.stride_tricks.as_strided(a, shape=(2,), strides=(2 ** 44,))
print(wild[1])
"""),
    Attack("numpy-array-interface-null", "crashed", NUMPY + """
class Pointer:
    __array_interface__ = {"shape": (64,), "typestr": "<f8", "data": (8, False), "version": 3}
print(np.asarray(Pointer()).sum())
"""),
    # LOAD_FAST past a frame with no locals reads whatever lies beyond it: a crash, or, with
    # the zygote's heap laid out otherwise, some object printed; either way only the child's
    Attack("bad-bytecode", ("crashed", "ok"), """
code = (lambda: 0).__code__
bad = code.replace(co_code=bytes([151, 0, 124, 200, 83, 0]), co_varnames=(), co_nlocals=0)
print(type(lambda: 0)(bad, {})())
"""),
    # ***** numpy / torch file, pickle and URL functions *****
    Attack("numpy-face-load", "error", """
import numpy as np
np.load("$canary")
""", error="AttributeError"),
    Attack("numpy-face-ctypeslib", "error", """
import numpy
numpy.ctypeslib
""", error="AttributeError"),
    Attack("numpy-load-canary", "forbidden", NUMPY + """
print(np.load("$canary", allow_pickle=True))
"""),
    Attack("numpy-save", "forbidden", NUMPY + """
np.save("$scratch/x.npy", np.zeros(3))
"""),
    Attack("numpy-fromfile-canary", "forbidden", NUMPY + """
print(np.fromfile("$canary", dtype=np.uint8))
"""),
    Attack("ndarray-tofile", "forbidden", """
import torch
torch.ones(3).numpy().tofile("$scratch/x.bin")
"""),
    Attack("numpy-loadtxt-url", "forbidden", NUMPY + """
np.loadtxt("http://127.0.0.1:$port/data.txt")
"""),
    Attack("pickle-reduce-system", "forbidden", SYS + """
pickle = sys.modules["pickle"]
pickle.loads(b"cos\\nsystem\\n(S'touch $scratch/pwned'\\ntR.")
"""),
    Attack("torch-load", "error", """
import torch
torch.load("$canary")
""", error="UnsupportedByGradtrace"),
    Attack("torch-save", "error", """
import torch
torch.save(torch.ones(2), "$scratch/t.pt")
""", error="UnsupportedByGradtrace"),
    Attack("torch-hub-url", "error", """
import torch
torch.hub.load_state_dict_from_url("http://127.0.0.1:$port/w.pt")
""", error="UnsupportedByGradtrace"),
    Attack("urllib-import", "error", "import urllib.request\n", error="ImportError"),
    # ***** OS side effects *****
    Attack("os-system", "forbidden", OS + "os.system('touch $scratch/pwned')\n"),
    Attack("os-fork", "forbidden", OS + "print(os.fork())\n"),
    Attack("os-fork-bomb", "forbidden", OS + "while True:\n    os.fork()\n"),
    Attack("os-execv", "forbidden", OS + "os.execv('/bin/sh', ['sh', '-c', 'id'])\n"),
    Attack("os-posix-spawn", "forbidden", OS + """
os.posix_spawn("/bin/touch", ["touch", "$scratch/pwned"], {})
"""),
    Attack("os-kill-server", "forbidden", OS + "os.kill($server_pid, 10)\n"),
    Attack("os-kill-zygote", "forbidden", OS + "os.kill($zygote_pid, 9)\n"),
    Attack("os-kill-everyone", "forbidden", OS + "os.kill(-1, 10)\n"),
    Attack("os-killpg-own-group", "forbidden", OS + "os.killpg(0, 9)\n"),
    Attack("os-abort", "crashed", OS + "os.abort()\n"),
    Attack("os-environ", "ok", OS + "print(dict(os.environ))\n"),
    Attack("proc-self-environ", "forbidden", OS + """
print(open("/proc/self/environ").read())
"""),
    Attack("proc-zygote-environ", "forbidden", """
print(open("/proc/$zygote_pid/environ").read())
"""),
    Attack("proc-server-environ", "forbidden", """
print(open("/proc/$server_pid/environ", "rb").read())
"""),
    Attack("listdir-root", "forbidden", OS + "print(os.listdir('/'))\n"),
    Attack("listdir-scratch", "forbidden", OS + "print(os.listdir('$scratch'))\n"),
    Attack("os-open-create", "forbidden", OS + """
os.open("$scratch/created", os.O_CREAT | os.O_WRONLY, 0o666)
"""),
    Attack("os-mkdir", "forbidden", OS + "os.mkdir('$scratch/dir')\n"),
    Attack("os-symlink", "forbidden", OS + "os.symlink('$canary', '$scratch/link')\n"),
    Attack("os-chmod-canary", "forbidden", OS + "os.chmod('$canary', 0o777)\n"),
    Attack("os-setuid-root", "forbidden", OS + "os.setuid(0)\n"),
    Attack("os-getcwd", "forbidden", OS + "print(os.getcwd())\n"),
    Attack("os-uname", "forbidden", OS + "print(os.uname())\n"),
    Attack("os-dup-exhaustion", "forbidden", OS + "fds = [os.dup(0) for _ in range(100000)]\n"),
    Attack("socket-connect-listener", "forbidden", SYS + """
socket = sys.modules["socket"]
socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(("127.0.0.1", $port))
"""),
    Attack("socket-abstract-unix", "forbidden", SYS + """
socket = sys.modules["socket"]
socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect("\\0gradtrace")
"""),
    Attack("import-unloaded-module", "error", SYS + """
sys.modules["importlib"].import_module("sqlite3")
""", error="ModuleNotFoundError"),
    Attack("signal-ignore-cpu-timer", "forbidden", SYS + """
signal = sys.modules["signal"]
signal.signal(signal.SIGPROF, signal.SIG_IGN)
while True:
    pass
"""),
    Attack("signal-block-cpu-timer", "forbidden", SYS + """
signal = sys.modules["signal"]
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPROF, signal.SIGXCPU})
while True:
    pass
"""),
    Attack("signal-disarm-timer", "forbidden", SYS + """
signal = sys.modules["signal"]
signal.setitimer(signal.ITIMER_PROF, 0)
while True:
    pass
"""),
    Attack("memfd-create", "forbidden", CTYPES + "libc.memfd_create(b'x', 0)\n"),
    Attack("pidfd-open-zygote", "forbidden", CTYPES + "libc.syscall(434, $zygote_pid, 0)\n"),
    Attack("result-pipe-garbage", "crashed", OS + "os.write(3, b'not json')\n"),
    Attack("result-pipe-forged-trace", "crashed", OS + """
forged = b'{"version":1,"code":"","tensors":{},"nodes":{},"events":[{"seq":0,"kind":"op",'
forged += b'"node":"n9","span":null}],"stdout":"","stderr":"","outcome":{"status":"ok"},'
forged += b'"limits":{"truncated":false,"max_events":1}}'
os.write(3, forged)
os._exit(0)
"""),
    Attack("result-pipe-flood", "output_limit", OS + """
chunk = b"x" * 65536
while True:
    os.write(3, chunk)
"""),
    # ***** resource bombs *****
    Attack("cpu-loop", "cpu_limit", "print('before')\nwhile True:\n    pass\n"),
    Attack("cpu-blas", "cpu_limit", """
import torch
a = torch.randn(300, 300)
while True:
    a = (a @ a).tanh()
"""),
    Attack("cpu-catches-the-stop", "cpu_limit", """
while True:
    try:
        while True:
            pass
    except BaseException:
        pass
"""),
    Attack("cpu-huge-power", "cpu_limit", "x = 10 ** 10 ** 9\n"),
    Attack("memory-bytearray", "memory_limit", "x = bytearray(2 ** 31)\n"),
    Attack("memory-torch-zeros", "memory_limit", "import torch\nx = torch.zeros(10 ** 9)\n"),
    Attack("memory-list-growth", ("memory_limit", "cpu_limit"), """
grow = []
while True:
    grow.append([0] * 10 ** 7)
"""),
    Attack("memory-string-repeat", "memory_limit", "x = 'x' * 10 ** 10\n"),
    Attack("output-print-loop", "output_limit", "while True:\n    print('x' * 1000)\n"),
    Attack("output-stderr-loop", "output_limit", SYS + """
while True:
    sys.stderr.write("x" * 1000)
"""),
    Attack("output-warnings-loop", "output_limit", """
import warnings
i = 0
while True:
    i += 1
    warnings.warn(f"warning number {i}")
"""),
    Attack("recursion", "error", "def f(n):\n    return f(n + 1)\nf(0)\n", error="RecursionError"),
    Attack("threads", "error", SYS + """
sys.modules["_thread"].start_new_thread(print, ("hi",))
""", error="RuntimeError"),
    Attack("sleep", "ok", "import time\ntime.sleep(3600)\nprint('awake')\n"),
    Attack("futex-wait-forever", "wall_limit", SYS + """
lock = sys.modules["_thread"].allocate_lock()
lock.acquire()
print("waiting")
lock.acquire()
""", limits={"wall_seconds": 2}),
    Attack("event-flood", "cpu_limit", "import torch\nwhile True:\n    torch.ones(1)\n",
           limits={"max_events": 2000, "cpu_seconds": 2}),
    Attack("deep-nesting", "rejected", "x = " + "[" * 150 + "]" * 150 + "\n"),
    Attack("nul-byte", "rejected", "x = 1\x00\n"),
    Attack("too-long", "rejected", "x = 1\n" * 4000),
]
# fmt: on


@dataclass
class Outcome:
    trace: dict
    scratch: Path
    connections: int


def statuses_of(attack: Attack) -> tuple[str, ...]:
    return attack.status if isinstance(attack.status, tuple) else (attack.status,)


HUNT_SEED = 4242  # the heap attacks' own canary


@pytest.fixture(scope="module")
def corpus(sandbox, layers, traps, listen, hunt):
    """Every attack, run at once through the sandbox (each as its own client), each marked
    with a canary of its own in its code."""
    root, canary = traps
    zygote_pid = sandbox.zygote_pid()
    hunts = {
        f"hunt_{way}": hunt.code(HUNT_SEED, radius=16 << 20, ways=(way,))
        for way in ("frames", "gc", "raw")
    }
    runs = {}
    for index, attack in enumerate(ATTACKS):
        scratch = Path(tempfile.mkdtemp(prefix=attack.name[:20], dir=root))
        scratch.chmod(0o777)
        listener = listen()
        code = string.Template(attack.code).safe_substitute(
            scratch=scratch,
            canary=canary,
            port=listener.port,
            server_pid=os.getpid(),
            zygote_pid=zygote_pid,
            **hunts,
        )
        code += f"# {hunt.canary('corpus', index)}\n"
        future = sandbox.submit(code, client=attack.name, limits=attack.limits)
        runs[attack.name] = (future, scratch, listener)
    wait([future for future, _, _ in runs.values()], timeout=120)
    results = {}
    for name, (future, scratch, listener) in runs.items():
        results[name] = Outcome(future.result(timeout=0), scratch, listener.connections())
    return results


def test_the_corpus_is_big_enough():
    assert len(ATTACKS) >= 50
    assert len({attack.name for attack in ATTACKS}) == len(ATTACKS)


def test_the_heap_attacks_ran_their_hunts(corpus, hunt):
    """At least the frame walk must finish in the corpus's CPU budget and find its canary."""
    assert hunt.canary("self", HUNT_SEED) in corpus["heap-frames"].trace["stdout"]


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: attack.name)
def test_nothing_gets_out(attack, corpus, traps, sandbox, signals_received, secret, valid, hunt):
    result = corpus[attack.name]
    trace = valid(result.trace)
    outcome = trace["outcome"]
    text = json.dumps(trace)
    _, canary = traps
    assert canary.read_text() not in text, "the canary's content got out"
    assert secret not in text, "the server's environment got out"
    assert list(result.scratch.iterdir()) == [], "a file appeared in the scratch folder"
    assert result.connections == 0, "the listener on 127.0.0.1 was reached"
    assert signals_received == [], "a signal reached the server"
    zygote = sandbox.zygote_pid()
    assert zygote is not None, "the zygote died"
    os.kill(zygote, 0)
    assert outcome["status"] in statuses_of(attack), outcome
    own = ATTACKS.index(attack)
    others = {hunt.canary("corpus", i) for i in range(len(ATTACKS)) if i != own}
    assert not [token for token in others if token in text], "another run's code got in"
    if attack.name.startswith("heap-") and outcome["status"] == "ok":
        assert hunt.canary("self", HUNT_SEED) in trace["stdout"], "the hunt found nothing"
    if attack.error is not None:
        assert outcome["type"] == attack.error, outcome
    assert outcome["status"] in ("ok", "error") or outcome["message"]
