"""Many learners at once while one client throws bombs: everyone else's runs still finish."""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.sandbox import SandboxBusy, SandboxClient, SandboxSettings
from app.sandbox.admission import Admission

SEED = """import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a * b + a
d.backward()
print(a.grad.item(), b.grad.item())
"""

BOMBS = [
    "while True:\n    pass\n",
    "x = bytearray(2 ** 31)\n",
    "grow = []\nwhile True:\n    grow.append([0] * 10 ** 7)\n",
    "import torch\na = torch.randn(300, 300)\nwhile True:\n    a = (a @ a).tanh()\n",
    "import warnings\nl = warnings.sys.modules['_thread'].allocate_lock()\nl.acquire()\n"
    "l.acquire()\n",
]


@pytest.mark.alone
def test_benign_runs_finish_while_one_client_streams_bombs(sandbox, layers):
    """Ten learners run the seed ten times each while one client keeps its queue full of bombs
    (each ends at a limit: up to 2 s of wall clock, 0.5 s of CPU, or memory at once).

    Told by the order of events, not by a clock: one list, under a lock, gets each bomb's end
    and each learner run's start and end; what is counted is how many bombs ended while each
    learner run was waiting or running. The bomber holds at most per_client_in_flight (2) of
    the slots and the learners share the rest, so no learner run waits for a bomb: most see
    none end (now 70-80 of the 100), and the odd one that overlaps them sees the two in
    flight end, or a fast memory bomb after them (now at most 2). Had the bombs taken every
    slot, each learner run would wait for one to end (the median would be 1); stuck behind
    the bomber's queue, for several. A busy machine slows bombs and learners alike."""
    stop = threading.Event()
    bomb_statuses: list[str] = []
    turned_away = []
    events: list[tuple[str, int]] = []  # ("bomb", -1), ("start", run), ("end", run)
    lock = threading.Lock()

    def note(what: str, run: int = -1) -> None:
        with lock:
            events.append((what, run))

    def bomber() -> None:
        futures = []
        i = 0
        while not stop.is_set():
            try:
                bomb = BOMBS[i % len(BOMBS)]
                future = sandbox.submit(bomb, client="bomber", limits={"wall_seconds": 2})
                future.add_done_callback(lambda _: note("bomb"))
                futures.append(future)
                i += 1
            except SandboxBusy as busy:
                turned_away.append(busy.status_code)
                time.sleep(0.05)
        bomb_statuses.extend(f.result(timeout=30)["outcome"]["status"] for f in futures)

    def learner(n: int) -> None:
        for k in range(10):
            note("start", 10 * n + k)
            trace = sandbox.run_blocking(SEED, client=f"learner-{n}")
            note("end", 10 * n + k)
            assert trace["outcome"] == {"status": "ok"}, trace["outcome"]
            assert trace["stdout"] == "5.0 3.0\n"

    bombing = threading.Thread(target=bomber)
    bombing.start()
    time.sleep(0.5)  # let the bombs take their share of the slots first
    try:
        with ThreadPoolExecutor(10) as pool:
            list(pool.map(learner, range(10)))
    finally:
        stop.set()
        bombing.join(timeout=60)
    seen = sorted(_bombs_seen(events).values())
    assert len(seen) == 100
    assert statistics.median(seen) == 0, seen
    assert seen[98] <= 3, seen
    assert set(turned_away) == {429}  # the bomber's own queue filled; nobody else's did
    assert bomb_statuses and set(bomb_statuses) <= {"cpu_limit", "memory_limit", "wall_limit"}
    assert sandbox.zygote_pid() is not None


def _bombs_seen(events: list[tuple[str, int]]) -> dict[int, int]:
    """For each learner run, how many bombs ended between its start and its end."""
    ended = 0
    started: dict[int, int] = {}
    seen: dict[int, int] = {}
    for what, run in events:
        if what == "bomb":
            ended += 1
        elif what == "start":
            started[run] = ended
        else:
            seen[run] = ended - started[run]
    return seen


def _admission(**overrides) -> Admission:
    limits = dict(max_in_flight=2, max_queue=3, per_client_in_flight=1, per_client_queue=2)
    limits.update(overrides)
    return Admission(**limits, typical_seconds=1.0)


def test_admission_takes_waiting_clients_in_turn():
    admission = _admission(max_queue=10, per_client_in_flight=2, per_client_queue=10)
    order = []
    tickets = {}
    for name in ["a1", "a2", "a3", "a4", "a5", "b1", "b2"]:
        tickets[name] = admission.enter(name[0], lambda ticket, name=name: order.append(name))
    assert order == ["a1", "a2"]
    admission.leave(tickets["a1"])
    admission.leave(tickets["a2"])
    # a has had two runs, b none: b's two come before a's next
    assert order == ["a1", "a2", "b1", "b2"]
    admission.leave(tickets["b1"])
    assert order[-1] == "a3"  # even again: in turn
    assert admission.stats() == {"in_flight": 2, "queued": 2}


def test_admission_turns_away_a_greedy_client_with_429_and_everyone_with_503():
    admission = _admission()
    admission.enter("a", lambda ticket: None)
    admission.enter("a", lambda ticket: None)
    admission.enter("a", lambda ticket: None)
    with pytest.raises(SandboxBusy) as greedy:
        admission.enter("a", lambda ticket: None)
    assert greedy.value.status_code == 429 and greedy.value.retry_after >= 1
    admission.enter("b", lambda ticket: None)  # b gets the second slot
    admission.enter("b", lambda ticket: None)  # the queue is now full (3)
    with pytest.raises(SandboxBusy) as full:
        admission.enter("c", lambda ticket: None)
    assert full.value.status_code == 503 and full.value.retry_after >= 1


def test_a_cancelled_waiting_run_leaves_the_queue():
    admission = _admission()
    admission.enter("a", lambda ticket: None)
    waiting = admission.enter("a", lambda ticket: pytest.fail("a cancelled run started"))
    assert admission.cancel(waiting)
    assert admission.stats() == {"in_flight": 1, "queued": 0}


def test_a_started_run_whose_caller_has_gone_is_stopped():
    """A run nobody waits for any more is killed, its slot freed at once, not at its limits: a
    client that asks and hangs up cannot keep the sandbox busy for nobody."""
    settings = SandboxSettings(cpu_seconds=4.0, wall_seconds=8.0)
    sandbox = SandboxClient(settings)
    sandbox.start()
    submitted = []
    submit = sandbox.submit
    sandbox.submit = lambda *args, **kwargs: (
        submitted.append(submit(*args, **kwargs)) or (submitted[-1])
    )

    async def body() -> float:
        run = asyncio.ensure_future(sandbox.run("while True:\n    pass\n", client="hangs-up"))
        while sandbox.admission.stats()["in_flight"] == 0:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # well started
        run.cancel()
        cancelled = time.monotonic()
        # the zygote reports the child's end (its slot in the admission is freed either way)
        while submitted[0].run.ending is None:
            await asyncio.sleep(0.05)
        return time.monotonic() - cancelled

    try:
        freed_after = asyncio.run(asyncio.wait_for(body(), 30))
    finally:
        sandbox.close()
    # (its CPU limit alone would have ended it after 4 s)
    assert freed_after < 2.0, f"the child ran on {freed_after:.1f} s after its caller left"
