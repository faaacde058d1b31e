"""The self-check, /healthz, `gradtrace serve`'s refusal, and the zygote's own life."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from app.config import Settings, StoreSettings
from app.main import create_app
from app.sandbox import SandboxClient, SandboxSettings, probe, seccomp
from tests.live_server import free_port, wait_until_healthy

LAYERS = {
    "clean_environment", "process_group", "uid", "no_new_privs", "not_dumpable",
    "parent_death_signal", "closed_descriptors", "namespaces", "landlock", "seccomp",
    "cpu_timer", "rlimits",
}  # fmt: skip


def test_every_layer_holds_here(layers):
    assert set(layers["layers"]) == LAYERS
    states = {name: layer["state"] for name, layer in layers["layers"].items()}
    assert layers["strong"], states
    expected_uid = probe.ACTIVE if os.geteuid() == 0 else probe.NOT_NEEDED
    assert states.pop("uid") == expected_uid
    assert set(states.values()) == {probe.ACTIVE}


def test_the_zygote_is_clean_and_single_threaded(sandbox):
    assert set(sandbox.ready["environment"]) <= probe.CLEAN_ENVIRONMENT
    assert sandbox.ready["threads"] == 1
    with open(f"/proc/{sandbox.zygote_pid()}/environ", "rb") as environ:
        names = {item.split(b"=")[0].decode() for item in environ.read().split(b"\0") if item}
    assert names <= probe.CLEAN_ENVIRONMENT


def test_healthz_reports_each_layer(tmp_path, layers):
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "t.db")))
    with TestClient(app, base_url="http://localhost") as client:
        health = client.get("/healthz").json()
    sandbox = health["sandbox"]
    assert sandbox["mode"] == "zygote"
    assert sandbox["strong"] is True
    assert set(sandbox["layers"]) == LAYERS
    assert all(layer["state"] in ("active", "not-needed") for layer in sandbox["layers"].values())
    assert sandbox["limits"]["max_output_bytes"] == 64 * 1024


def _serve(db, *args: str, weak: bool) -> subprocess.Popen:
    env = dict(os.environ, GRADTRACE_STORE_PATH=str(db / "traces.db"))
    if weak:  # no namespaces: one layer short of strong
        env["GRADTRACE_SANDBOX_NAMESPACES"] = "0"
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_healthy(process: subprocess.Popen, port: int) -> dict:
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(url, process)
    return httpx.get(f"{url}/healthz", timeout=5).json()


@pytest.mark.slow
def test_serve_refuses_a_public_address_without_every_layer(tmp_path):
    process = _serve(tmp_path, "--host", "0.0.0.0", "--port", str(free_port()), weak=True)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    assert "refusing to serve 0.0.0.0" in stderr
    assert "namespaces" in stderr


@pytest.mark.slow
def test_serve_allows_a_weak_sandbox_when_told_to_loudly(tmp_path):
    port = free_port()
    args = ("--host", "0.0.0.0", "--port", str(port), "--allow-weak-sandbox")
    process = _serve(tmp_path, *args, weak=True)
    try:
        health = _wait_healthy(process, port)
        assert health["sandbox"]["strong"] is False
        assert health["sandbox"]["layers"]["namespaces"]["state"] == "unavailable"
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert "WEAK SANDBOX" in stderr


@pytest.mark.slow
def test_serve_on_loopback_starts_with_a_warning_when_weak(tmp_path):
    port = free_port()
    process = _serve(tmp_path, "--port", str(port), weak=True)
    try:
        assert _wait_healthy(process, port)["status"] == "ok"
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert "the sandbox is WEAK here" in stderr


def test_a_dead_zygote_is_replaced():
    client = SandboxClient(SandboxSettings())
    client.start()
    try:
        first = client.zygote_pid()
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while client.zygote_pid() is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        trace = client.run_blocking("print(6 * 7)\n")
        assert trace["stdout"] == "42\n"
        assert client.zygote_pid() not in (None, first)
    finally:
        client.close()


def test_the_zygote_is_recycled_after_its_runs():
    client = SandboxClient(SandboxSettings(recycle_after_runs=3))
    client.start()
    try:
        first = client.zygote_pid()
        # the replacement starts in the background (1.5-2 s, more on a busy machine): wait for
        # it by time, not by a number of runs
        deadline, i = time.monotonic() + 60, 0
        while client.zygote_pid() == first and time.monotonic() < deadline:
            assert client.run_blocking(f"print({i})\n")["stdout"] == f"{i}\n"
            i += 1
            time.sleep(0.05)
        assert client.zygote_pid() != first
        assert client.run_blocking("print('after')\n")["stdout"] == "after\n"
    finally:
        client.close()


@pytest.mark.parametrize("arch", sorted(seccomp.NUMBERS))
def test_the_seccomp_program_is_well_formed(arch):
    program = seccomp.program(arch)
    assert len(program) < 4096  # BPF_MAXINSNS
    assert program[0] == (seccomp.LD_W_ABS, 0, 0, seccomp.ARCH_OFFSET)
    assert program[-1] == (seccomp.RET_K, 0, 0, seccomp.RET_ERRNO | 1)  # default: EPERM
    for code, jt, jf, _ in program:
        assert code != seccomp.RET_K or jt == jf == 0
        assert jt < 256 and jf < 256
    numbers = seccomp.NUMBERS[arch]
    assert all(name in numbers for name in ("socket", "execve", "kill", "clone", "ptrace"))
    assert set(seccomp.ALLOWED).isdisjoint(seccomp.KILLED)


def test_replacing_a_dead_zygote_never_blocks_the_event_loop():
    """A zygote takes about a second to start; the run waiting for it must not hold the loop.

    Told by the order of events, not by a clock: a ticker on the event loop notes each tick
    in the same list where the client's zygote start (on a thread of its own) notes when it
    began and when it was done. A loop held for the start could not tick in between; one left
    free ticks there every 20 ms (some 30 times here), however busy the machine."""
    client = SandboxClient(SandboxSettings())
    client.start()
    events: list[str] = []  # list.append is atomic: the two threads need no lock for it
    starting = client._replace  # what the client's start thread runs (see _replace_soon)

    def noted_start() -> None:
        events.append("start begun")
        try:
            starting()
        finally:
            events.append("start done")

    client._replace = noted_start
    try:
        first = client.zygote_pid()
        os.kill(first, signal.SIGKILL)
        trace = asyncio.run(_run_beside_a_ticker(client, "print(6 * 7)\n", events))
        assert trace["stdout"] == "42\n"
        assert client.zygote_pid() not in (None, first)
        assert events.count("start begun") == events.count("start done") == 1, events
        begun, done = events.index("start begun"), events.index("start done")
        assert events.index("run returned") > done  # the run waited for the new zygote…
        assert events[begun:done].count("tick") >= 5, events  # …and the loop did not
        assert events.count("tick") > 10  # the ticker ran all along
    finally:
        client.close()


async def _run_beside_a_ticker(client: SandboxClient, code: str, events: list[str]) -> dict:
    running = True

    async def ticker() -> None:
        while running:
            await asyncio.sleep(0.02)
            events.append("tick")

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    trace = await client.run(code)
    events.append("run returned")
    running = False
    await ticking
    return trace
