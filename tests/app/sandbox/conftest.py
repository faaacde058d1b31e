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

import jsonschema
import pytest

from app.sandbox import SandboxClient, SandboxSettings, probe

DOCS = Path(__file__).resolve().parents[3] / "docs"
VALIDATOR = jsonschema.Draft202012Validator(json.loads((DOCS / "trace.schema.json").read_text()))
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
    client = SandboxClient(SandboxSettings.from_env(**TEST_SETTINGS))
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
