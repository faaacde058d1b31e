"""How each ending of a child becomes a status (no processes: the zygote's reports by hand),
what the parent accepts from a child, and the front door's checks."""

from __future__ import annotations

import json
import signal

import pytest

from app.sandbox import SandboxSettings, child, frontdoor, outcome, protocol, validate

SETTINGS = SandboxSettings()
EXITED = {"exit_code": 0, "signal": None, "cpu_seconds": 0.01, "max_rss_kib": 50_000}


def _payload(status: str = "ok", **fields) -> bytes:
    trace = outcome.empty_trace("x = 1\n", {"status": status, **fields}, SETTINGS)
    return json.dumps(trace).encode()


def _resolve(payload: bytes = b"", **report) -> dict:
    return outcome.resolve("x = 1\n", {**EXITED, **report}, payload, SETTINGS)


def test_a_finished_run_keeps_its_own_outcome():
    assert _resolve(_payload())["outcome"] == {"status": "ok"}
    error = {"type": "ValueError", "message": "bad", "span": [1, 0, 1, 5]}
    assert _resolve(_payload("error", **error))["outcome"] == {"status": "error", **error}


NEAR_LIMIT = SandboxSettings().memory_mib * 1024 * 99 // 100  # KiB


@pytest.mark.parametrize(
    ("report", "status"),
    [
        ({"signal": signal.SIGSYS, "exit_code": None}, "forbidden"),
        ({"signal": signal.SIGXCPU, "exit_code": None}, "cpu_limit"),
        ({"signal": signal.SIGKILL, "exit_code": None, "wall_killed": True}, "wall_limit"),
        ({"signal": signal.SIGUSR1, "exit_code": None, "wall_nudged": True}, "wall_limit"),
        ({"signal": signal.SIGKILL, "exit_code": None, "cpu_seconds": 3.5}, "cpu_limit"),
        # killed with its memory use just under the limit: it ran out of memory
        ({"signal": signal.SIGKILL, "exit_code": None, "max_rss_kib": NEAR_LIMIT}, "memory_limit"),
        ({"signal": signal.SIGKILL, "exit_code": None}, "crashed"),
        ({"signal": signal.SIGSEGV, "exit_code": None}, "crashed"),
        ({"signal": signal.SIGABRT, "exit_code": None}, "crashed"),
        ({"exit_code": protocol.EXIT_NO_MEMORY}, "memory_limit"),
        ({"exit_code": protocol.EXIT_SETUP_FAILED}, "crashed"),
        ({"exit_code": 0, "overflow": True}, "output_limit"),
    ],
)
def test_each_death_has_its_status(report, status):
    trace = _resolve(_payload(), **report)
    assert trace["outcome"]["status"] == status
    assert trace["outcome"]["message"]


def test_a_partial_trace_survives_a_death():
    payload = json.dumps({**json.loads(_payload()), "stdout": "so far\n"}).encode()
    trace = _resolve(payload, signal=signal.SIGXCPU, exit_code=None)
    assert trace["stdout"] == "so far\n"
    assert trace["outcome"]["status"] == "cpu_limit"


@pytest.mark.parametrize(
    ("error", "status"),
    [
        ({"type": "MemoryError", "message": ""}, "memory_limit"),
        ({"type": "PermissionError", "message": "[Errno 1] Operation not permitted"}, "forbidden"),
        ({"type": "OSError", "message": "[Errno 13] Permission denied: '/etc'"}, "forbidden"),
        ({"type": "OSError", "message": "[Errno 2] No such file"}, "error"),
        ({"type": "ImportError", "message": "no"}, "error"),
    ],
)
def test_errors_that_are_the_sandbox_saying_no(error, status):
    trace = _resolve(_payload("error", span=[1, 0, 1, 1], **error))
    assert trace["outcome"]["status"] == status


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        b"[" * 100_000,
        b'{"version": 1}',
        json.dumps(
            {
                **json.loads(_payload()),
                "events": [{"seq": 0, "kind": "op", "node": "n1", "span": None}],
            }
        ).encode(),
        json.dumps({**json.loads(_payload()), "outcome": {"status": "pwned"}}).encode(),
    ],
    ids=["not-json", "deep", "missing-keys", "dangling-reference", "unknown-status"],
)
def test_a_malformed_result_is_a_crash_and_nothing_of_it_is_kept(payload):
    trace = _resolve(payload)
    assert trace["outcome"]["status"] == "crashed"
    assert "malformed" in trace["outcome"]["message"]
    assert trace["events"] == []


def test_the_code_is_always_what_was_submitted():
    payload = json.dumps({**json.loads(_payload()), "code": "something else"}).encode()
    assert _resolve(payload)["code"] == "x = 1\n"


def test_validate_accepts_real_traces():
    from engine.tracer import trace_snippet

    trace = trace_snippet(
        "import torch\na = torch.ones(2, requires_grad=True)\n"
        "(a * 2).sum().backward()\nprint(a.grad)\n"
    )
    validate.check(trace)


def test_the_front_door_rejects_what_cannot_be_run():
    with pytest.raises(frontdoor.Rejected, match="not valid UTF-8"):
        frontdoor.check_source("x = '\ud800'", SETTINGS)
    with pytest.raises(frontdoor.Rejected, match="NUL"):
        frontdoor.check_source("x = 1\0", SETTINGS)
    frontdoor.check_source("x = (", SETTINGS)  # a SyntaxError is the tracer's to report


def test_the_importer_gives_faces_and_refuses_the_rest():
    importer = frontdoor.make_importer()
    numpy = importer("numpy")
    assert numpy.__name__ == "numpy" and not hasattr(numpy, "load")
    assert importer("numpy.linalg", fromlist=("norm",)).__name__ == "numpy.linalg"
    assert importer("collections.abc", fromlist=("Mapping",)).Mapping
    with pytest.raises(ImportError, match=r"\(not 'os'\)"):
        importer("os")
    with pytest.raises(ImportError, match=r"\(not 'collections.foo'\)"):
        importer("collections.foo")
    # numpy's C code importing lazily: modules already loaded only
    assert importer("json", None, None, []).__name__ == "json"
    with pytest.raises(ModuleNotFoundError):
        importer("no_such_module_at_all", None, None, [])


def test_a_tracer_hook_cut_short_still_leaves_a_whole_trace(monkeypatch):
    """MemoryError (or a limit) can strike inside a tracer hook; what was half-recorded goes."""
    from engine import trace_values
    from engine.tracer import trace_snippet

    real_add = trace_values.ValueTable.add
    calls = []
    failing = [None]

    def add(self, array):
        calls.append(1)
        if len(calls) == failing[0]:
            raise MemoryError("out of memory in the middle of a hook")
        return real_add(self, array)

    monkeypatch.setattr(trace_values.ValueTable, "add", add)
    code = "import torch\na = torch.ones(2, requires_grad=True)\nb = a * 2\nc = (b * b).sum()\n"
    trace_snippet(code)
    snapshots = len(calls)
    assert snapshots >= 4
    for failing[0] in range(1, snapshots + 1):
        calls.clear()
        trace = trace_snippet(code)
        validate.check(trace)
        assert trace["outcome"]["type"] == "MemoryError"
        for record in [*trace["tensors"].values(), *trace["nodes"].values()]:
            assert trace["events"][record["created"]]["kind"] != "error", record


def test_the_childs_run_goes_on_past_the_event_cap_in_process():
    """child.trace_run, as a child runs it, but here: recording stops, the snippet does not."""
    settings = SandboxSettings(max_events=100)
    code = "import torch\ny = torch.ones(2)\nfor i in range(500):\n    y = y * 2\nprint(y)\n"
    trace = child.trace_run(code, settings, frontdoor.make_importer())
    validate.check(trace)
    assert trace["outcome"] == {"status": "ok"}
    assert trace["stdout"] == "tensor([inf, inf])\n"
    assert len(trace["events"]) == 100 and trace["limits"]["stopped_line"] == 4
