"""The `gradtrace` command, run as a user would run it."""

import json
import subprocess
import sys
import textwrap
from importlib import metadata

import pytest

SEED = textwrap.dedent("""\
    import torch

    a = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(4.0, requires_grad=True)
    c = a * b
    d = c + a
    d.backward()
    print(a.grad.item(), b.grad.item())
""")


def gradtrace(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def snippet(tmp_path):
    def write(code: str):
        path = tmp_path / "snippet.py"
        path.write_text(code)
        return str(path)

    return write


def test_run_prints_exactly_what_the_snippet_printed(snippet):
    done = gradtrace("run", snippet(SEED))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "5.0 3.0\n"


def test_run_says_nothing_of_an_unseeded_draw_and_trace_records_it(snippet):
    code = "import torch\ntorch.randn(2)\nprint('drawn')\n"
    done = gradtrace("run", snippet(code))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "drawn\n" and "seed" not in done.stderr  # what PyTorch prints
    assert json.loads(gradtrace("trace", snippet(code)).stdout)["unseeded_random"] is True


def test_run_shows_what_the_snippet_wrote_to_stderr(snippet):
    code = "import warnings\nprint('out')\nwarnings.warn('careful')\n"
    done = gradtrace("run", snippet(code))
    assert done.returncode == 0 and done.stdout == "out\n"
    assert "<snippet>:3: UserWarning: careful" in done.stderr


def test_run_ends_an_uncaught_error_like_python(snippet):
    code = SEED + "d.backward()\nprint('never')\n"
    done = gradtrace("run", snippet(code))
    assert done.returncode == 1
    assert done.stdout == "5.0 3.0\n"
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: Trying to backward through the graph a second time")
    assert "line 9" in done.stderr


def test_trace_prints_the_trace_as_json(snippet):
    done = gradtrace("trace", snippet(SEED))
    assert done.returncode == 0, done.stderr
    trace = json.loads(done.stdout)
    assert trace["version"] == 1
    assert trace["stdout"] == "5.0 3.0\n"
    names = [trace["nodes"][e["node"]]["name"] for e in trace["events"] if e["kind"] == "op"]
    assert names == ["MulBackward0", "AddBackward0"]


def test_an_unreadable_file_is_a_clear_error(tmp_path):
    done = gradtrace("run", str(tmp_path / "missing.py"))
    assert done.returncode == 2
    assert "cannot read" in done.stderr


def test_run_past_the_event_cap_prints_everything_and_succeeds(snippet):
    code = "import torch\ny = torch.ones(2)\nfor i in range(30_000):\n    y = y * 1.0000001\n"
    code += "print(y)\n"
    done = gradtrace("run", snippet(code))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "tensor([1.0036, 1.0036])\n"
    assert done.stderr.strip().splitlines()[-1] == (
        "gradtrace: recording stopped at line 4 after 20,000 events; the snippet ran on to its "
        "end unrecorded"
    )


def test_version_names_the_package_and_the_engine():
    import engine

    done = gradtrace("--version")
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout == f"gradtrace {metadata.version('gradtrace')} (engine {engine.__version__})\n"
    )


@pytest.mark.parametrize("command", ["run", "export"])
def test_a_bad_setting_stops_a_command_with_its_variables_name(snippet, monkeypatch, command):
    path = snippet("print(1)\n")
    monkeypatch.setenv("GRADTRACE_SANDBOX_CPU_SECONDS", "lots")
    done = gradtrace(command, path, *(["--format", "html"] if command == "export" else []))
    assert done.returncode == 2
    assert done.stderr.startswith("gradtrace: GRADTRACE_SANDBOX_CPU_SECONDS: ")
    assert "Traceback" not in done.stderr
