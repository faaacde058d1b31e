"""No run can read another run's code, output or trace, however it reads its own memory.

A child is a fork of the zygote and a snippet can read all of its memory (the kernel is the
wall, not Python). So the zygote must never hold anyone's data, not even freed: the victims here
carry canaries in their code and in what they print, and an attacker reaches `sys` by four
routes and hunts for canaries in the frames above it, in every object the collector knows, and
in the raw pages of the heap it inherited (conftest.hunter). It must find its own canary each
way (so each way works) and never a victim's: after victims that have finished, and beside
victims still running or sent in the same moment.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import wait

import pytest

from app.sandbox import SandboxClient, SandboxSettings

RADIUS = 512 << 20  # around each of the attacker's own objects
# the hunt reads a few hundred MiB; ample CPU for it even on a busy machine
ATTACKER_LIMITS = {"cpu_seconds": 30, "wall_seconds": 90}
FOUND = re.compile(r"^(frames \d+|gc|raw .*pages read:) (\[.*\])$", re.MULTILINE)

VICTIM = """import torch
secret = "{code_canary}"
x = torch.tensor([1.0, 2.0], requires_grad=True)
(x * 3).sum().backward()
print("GTLEAK-vout-" + "%016x" % ({seed} * 7919 + 0 * len(secret)), x.grad)
"""
LONG_VICTIM = VICTIM + "while True:\n    x = x * 1.0\n"


@pytest.fixture(scope="module")
def roomy_sandbox(layers):
    """A sandbox of its own (a fresh zygote that has run nothing else), with room for hunts."""
    settings = SandboxSettings(cpu_seconds=30.0, wall_seconds=90.0, max_events=10**6)
    client = SandboxClient(settings)
    client.start()
    yield client
    client.close()


def victim(hunt, seed: int, code: str = VICTIM) -> tuple[str, set[str]]:
    code_canary = hunt.canary("vcode", seed)
    return code.format(code_canary=code_canary, seed=seed), {
        code_canary,
        hunt.canary("vout", seed),
    }


def findings(trace: dict) -> dict[str, list[str]]:
    """What the hunter reported, by way: frames, gc, raw."""
    found = {}
    for way, listed in FOUND.findall(trace["stdout"]):
        found[way.split()[0]] = json.loads(listed.replace("'", '"'))
    return found


def check_hunt(trace: dict, hunt, seed: int, victims: set[str]) -> None:
    assert trace["outcome"] == {"status": "ok"}, (trace["outcome"], trace["stdout"][-2000:])
    stdout = trace["stdout"]
    assert "routes ['__globals__', 'numpy', 'subclasses', 'warnings.sys']" in stdout, stdout
    found = findings(trace)
    assert set(found) == {"frames", "gc", "raw"}, stdout
    own = hunt.canary("self", seed)
    for way, tokens in found.items():
        assert own in tokens, f"the {way} hunt did not even find its own canary: {stdout}"
    pages = int(re.search(r"(\d+) pages read", stdout).group(1))
    assert pages > 10_000, stdout  # more than 40 MiB: the inherited heap, not a corner of it
    leaked = {token for token in victims if token in json.dumps(trace)}
    assert not leaked, f"the attacker read other runs' canaries: {leaked}\n{stdout}"


def test_the_victims_own_runs_show_their_canaries(roomy_sandbox, hunt):
    """The canaries really are in a victim's code and output (the checks below mean something)."""
    code, tokens = victim(hunt, 11)
    trace = roomy_sandbox.run_blocking(code, client="victim")
    assert trace["outcome"] == {"status": "ok"}
    assert hunt.canary("vcode", 11) in trace["code"]
    assert hunt.canary("vout", 11) in trace["stdout"]
    assert hunt.canary("vout", 11) not in code  # made at run time only


def test_an_attacker_finds_nothing_of_runs_that_finished_before_it(roomy_sandbox, hunt):
    victims = set()
    for seed in (101, 102, 103, 104):
        code, tokens = victim(hunt, seed)
        assert roomy_sandbox.run_blocking(code, client="victim")["outcome"] == {"status": "ok"}
        victims |= tokens
    attack = hunt.code(seed=105, radius=RADIUS)
    trace = roomy_sandbox.run_blocking(attack, client="attacker", limits=ATTACKER_LIMITS)
    check_hunt(trace, hunt, 105, victims)


@pytest.mark.slow
def test_an_attacker_finds_nothing_of_runs_beside_it_or_sent_with_it(roomy_sandbox, hunt):
    """A victim still running when the attacker forks, and victims sent in the same moment
    (before and after it, so that they reach the zygote together)."""
    running, running_tokens = victim(hunt, 201, LONG_VICTIM)
    long_run = roomy_sandbox.submit(running, client="victim-long", limits={"cpu_seconds": 3})
    runs, victims = [], set(running_tokens)
    for seed in (202, 203):
        code, tokens = victim(hunt, seed)
        runs.append(roomy_sandbox.submit(code, client=f"victim-{seed}"))
        victims |= tokens
    attack = hunt.code(seed=204, radius=RADIUS)
    attacker = roomy_sandbox.submit(attack, client="attacker", limits=ATTACKER_LIMITS)
    code, tokens = victim(hunt, 205)
    runs.append(roomy_sandbox.submit(code, client="victim-after"))
    victims |= tokens
    wait([long_run, attacker, *runs], timeout=180)
    # stopped by a limit while the others ran: its CPU time, or first the memory its growing
    # trace takes (which one depends on how fast this machine traces)
    assert long_run.result()["outcome"]["status"] in ("cpu_limit", "memory_limit")
    assert all(run.result()["outcome"] == {"status": "ok"} for run in runs)
    check_hunt(attacker.result(), hunt, 204, victims)
