"""Render workers: pages drawn out of process match the in-process render, and every way a
task can go wrong (memory, time, a killed worker, a huge reply, a full queue) ends that task
only; the page cache draws a popular link once."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import time
from itertools import pairwise

import pytest

from app.page_cache import PageCache
from app.render.page import SHOWN_TRACE_FIELDS, drawn_page
from app.render_pool import RenderBusy, RenderPool, RenderSettings, TooLargeToDraw
from app.render_worker import NICENESS
from engine.tracer import trace_snippet

SEED = """\
import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a*b + a
d.backward()
print(a.grad.item(), b.grad.item())
"""

TRAINING = """\
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
X = torch.randn(8, 3)
Y = torch.randn(8)
opt = torch.optim.SGD([w, b], lr=0.1)
for step in range(1000):
    opt.zero_grad()
    loss = ((X @ w + b - Y) ** 2).mean()
    loss.backward()
    opt.step()
"""


@pytest.fixture(scope="module")
def seed() -> dict:
    return trace_snippet(SEED)


def _run(settings: RenderSettings, body):
    """Run `body(pool)` on a fresh pool in a fresh event loop, closing the pool after."""

    async def main():
        pool = RenderPool(settings)
        try:
            return await body(pool)
        finally:
            await pool.close()

    return asyncio.run(main())


def _settings(**changes) -> RenderSettings:
    return RenderSettings(**{"workers": 1, "queue": 4, "test_tasks": True, **changes})


def test_a_page_drawn_by_a_worker_is_the_in_process_page(seed):
    async def body(pool):
        return await pool.page(seed, "abc123", ()), await pool.narration(seed)

    page, told = _run(_settings(), body)
    assert page == json.loads(json.dumps(drawn_page(seed, "abc123")))
    steps = json.loads(page["player_json"])["steps"]
    assert told["steps"] and told["steps"] == [step["text"] for step in steps]
    shown = {key: seed[key] for key in SHOWN_TRACE_FIELDS}
    assert told["trace"] == page["trace"] == {**shown, "event_count": len(seed["events"])}


def test_a_task_past_its_memory_fails_alone(seed):
    async def body(pool):
        await pool.start()
        before = pool.pids
        with pytest.raises(TooLargeToDraw, match="out of memory"):
            await pool.run({"kind": "allocate", "mib": 2048})
        page = await pool.page(seed, "x", ())
        return before, pool.pids, page

    before, after, page = _run(_settings(memory_mib=768), body)
    assert page["rendered"]["step_count"]
    assert before != after  # the worker that ran out was replaced


def test_a_task_past_its_budget_is_killed_and_replaced(seed):
    """The 30 s task is cut at its 0.5 s budget, not waited out. Shown without a clock: the
    worker that ran it died of SIGKILL having written nothing after its READY. A worker writes
    a task's reply the moment the task ends, so the sleep never got to its end."""

    async def body(pool):
        await pool.start()
        before = pool.pids
        (worker,) = pool._live
        output = _record_output(worker)
        with pytest.raises(TooLargeToDraw, match="budget"):
            await pool.run({"kind": "sleep", "seconds": 30})
        page = await pool.page(seed, "x", ())
        return before, pool.pids, worker, output, page

    before, after, worker, output, page = _run(_settings(budget_seconds=0.5), body)
    assert page["rendered"]["step_count"] and before != after
    assert worker.process.returncode == -signal.SIGKILL
    assert output and b"".join(output) == b"", output  # no reply: it was killed mid-sleep


def _record_output(worker) -> list[bytes]:
    """What the pool reads from `worker`'s stdout from now on, its draining at the end too."""
    output: list[bytes] = []
    stdout = worker.process.stdout

    def recording(read):
        async def recorded(*args):
            data = await read(*args)
            output.append(data)
            return data

        return recorded

    stdout.read, stdout.readexactly = recording(stdout.read), recording(stdout.readexactly)
    return output


def test_a_workers_start_is_not_charged_to_its_first_task(seed):
    # A worker's imports take about half a second, more on a busy machine: the budget counts
    # from its READY, so a budget shorter than the start still lets a quick task through.
    async def body(pool):
        first = await pool.run({"kind": "echo", "size": 3})
        (pid,) = pool.pids
        with pytest.raises(TooLargeToDraw, match="budget"):
            await pool.run({"kind": "sleep", "seconds": 30})
        return first, pid, await pool.run({"kind": "echo", "size": 2}), pool.pids

    first, pid, second, after = _run(_settings(budget_seconds=0.05), body)
    assert first == "xxx" and second == "xx" and pid not in after


def test_a_worker_that_never_says_ready_fails_the_task_and_is_stopped():
    async def body(pool):
        with pytest.raises(TooLargeToDraw, match="did not start"):
            await pool.run({"kind": "echo", "size": 3})
        await asyncio.sleep(0)  # let the stopped worker's reaping begin
        return pool.pids

    assert _run(_settings(start_seconds=0.001), body) == []


def test_a_worker_killed_mid_task_fails_that_task_and_is_replaced(seed):
    async def body(pool):
        await pool.start()
        (pid,) = pool.pids
        task = asyncio.ensure_future(pool.run({"kind": "sleep", "seconds": 30}))
        await asyncio.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(TooLargeToDraw, match="SIGKILL"):
            await task
        page = await pool.page(seed, "x", ())
        return pid, pool.pids, page

    pid, after, page = _run(_settings(), body)
    assert page["rendered"]["step_count"] and pid not in after


def test_a_reply_too_large_is_refused(seed):
    async def body(pool):
        with pytest.raises(TooLargeToDraw, match="larger than"):
            await pool.run({"kind": "echo", "size": 200_000})
        return await pool.run({"kind": "echo", "size": 10})

    assert _run(_settings(max_reply_bytes=100_000), body) == "x" * 10


def test_a_renderer_failure_is_too_large_to_draw_and_the_worker_stays(seed):
    broken = {**seed, "events": "not a list"}

    async def body(pool):
        await pool.start()
        before = pool.pids
        with pytest.raises(TooLargeToDraw, match="renderer failed"):
            await pool.page(broken, "x", ())
        return before, pool.pids

    before, after = _run(_settings(), body)
    assert before == after


def test_past_the_queue_the_pool_is_busy():
    async def body(pool):
        sleeping = [
            asyncio.ensure_future(pool.run({"kind": "sleep", "seconds": 1})) for _ in range(2)
        ]
        await asyncio.sleep(0.05)  # one running, one waiting: the queue is full
        with pytest.raises(RenderBusy) as busy:
            await pool.run({"kind": "sleep", "seconds": 0})
        await asyncio.gather(*sleeping)
        return busy.value.retry_after

    assert _run(_settings(workers=1, queue=1), body) > 0


def test_workers_draw_at_a_lower_priority_than_the_server():
    async def body(pool):
        return await pool.run({"kind": "niceness"})

    assert _run(_settings(), body) >= NICENESS > os.getpriority(os.PRIO_PROCESS, 0)


def test_workers_get_none_of_the_servers_environment(monkeypatch):
    monkeypatch.setenv("GRADTRACE_SECRET_KEY", "hunter2")

    async def body(pool):
        return await pool.run({"kind": "environ"})

    names = _run(_settings(), body)
    assert "GRADTRACE_SECRET_KEY" not in names
    assert set(names) <= {
        "PATH", "PYTHONPATH", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "LANG",
        "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "GRADTRACE_RENDER_TEST_TASKS", "LC_CTYPE",
    }  # fmt: skip


def test_the_cache_draws_a_popular_page_once(seed):
    async def body(pool):
        cache = PageCache()

        def produce():
            return pool.page(seed, "abc", ())

        pages = await asyncio.gather(*(cache.get(("abc", ()), produce) for _ in range(8)))
        again = await cache.get(("abc", ()), produce)
        return cache, pages, again

    cache, pages, again = _run(_settings(workers=2), body)
    assert cache.renders == 1
    assert all(page == pages[0] for page in pages) and again == pages[0]
    assert 0 < cache.bytes <= cache.max_bytes


def test_a_render_goes_on_while_anyone_waits_and_stops_when_all_have_gone(seed):
    """One visitor leaving does not stop a shared render, nor the last one leaving if someone
    asks again within the grace; once nobody has for that long, it is cancelled, and the worker
    drawing it is stopped rather than left to finish for nobody."""

    async def body(pool):
        cache = PageCache(abandon_after=0.3)
        await pool.start()
        first_pids = pool.pids

        def produce():
            return pool.run({"kind": "sleep", "seconds": 30}, budget=60)

        waiters = [asyncio.ensure_future(cache.get("slow", produce)) for _ in range(2)]
        await asyncio.sleep(0.5)
        waiters[0].cancel()
        waiters[1].cancel()
        await asyncio.sleep(0.1)  # within the grace, someone asks again
        waiters.append(asyncio.ensure_future(cache.get("slow", produce)))
        await asyncio.sleep(0.5)
        still_drawing = cache.in_flight and cache.renders == 1
        waiters[2].cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
        await asyncio.sleep(0.8)
        # the worker was stopped: a new one draws the next page at once
        page = await asyncio.wait_for(pool.page(seed, "abc", ()), 20)
        return still_drawing, cache.in_flight, first_pids, pool.pids, page

    still_drawing, after, first_pids, pids, page = _run(_settings(), body)
    assert still_drawing == 1 and after == 0
    assert pids and pids != first_pids and page["rendered"]["step_count"]


def test_the_cache_is_bounded_by_bytes_and_remembers_failures():
    async def body():
        cache = PageCache(max_bytes=100, size_of=len)
        calls = []

        async def make(text):
            calls.append(text)
            return text

        for n in range(5):
            await cache.get(n, lambda n=n: make("x" * 40 + str(n)))
        assert len(cache) == 2 and cache.bytes <= 100  # the oldest went
        await cache.get(4, lambda: make("again"))
        assert calls[-1] != "again"  # still cached

        async def fail():
            calls.append("fail")
            raise TooLargeToDraw("budget")

        for _ in range(3):
            with pytest.raises(TooLargeToDraw):
                await cache.get("bad", fail)
        assert calls.count("fail") == 1

    asyncio.run(body())


@pytest.mark.slow
def test_the_event_loop_keeps_ticking_while_big_pages_are_drawn():
    """Two renders of a 19,000-event loop by one worker (the second waits its turn), and a
    ticker on the event loop every 20 ms (waiting is on pipes, not on the server's threads or
    GIL).

    Measured in CPU time, not on a clock, so that a busy machine delaying the ticker does not
    count against the pool: at each tick the ticker notes this process's CPU time and the
    worker's (/proc). Between two ticks, neither may have used more than a fifth of what one
    page costs the worker (about 1.3 s here; each uses at most 0.06 s between ticks now), a
    ratio that holds on slower and faster machines alike. A loop that waited on the worker's
    pipe itself would let a whole page of the worker's CPU in between two ticks; a page drawn
    in this process, or a trace written out without slices (0.6 s), counts against ours."""
    trace = trace_snippet(TRAINING)

    async def body(pool):
        await pool.start()
        (pid,) = pool.pids
        samples = []  # (this process's CPU, the worker's), at each tick
        done = asyncio.Event()

        async def ticker():
            while True:
                samples.append((time.process_time(), _cpu_of(pid)))
                if done.is_set():
                    return
                await asyncio.sleep(0.02)

        ticking = asyncio.ensure_future(ticker())  # its first sample comes before the pages
        pages = await asyncio.gather(*(pool.page(trace, f"p{i}", ()) for i in range(2)))
        done.set()
        await ticking
        return samples, pages

    # The test's own 19,000-event trace is a few hundred thousand objects; a collector pass
    # over them (0.17 s) would count against any loop, pool or none. Frozen, they are not
    # scanned, and what is left to measure is the pool.
    gc.collect()
    gc.freeze()
    try:
        # (a budget far past the render's time: what is measured here is the loop)
        samples, pages = _run(RenderSettings(workers=1, queue=4, budget_seconds=120), body)
    finally:
        gc.unfreeze()
    assert all(page["rendered"]["step_count"] for page in pages)
    assert len(samples) > 5  # the ticker ran all along
    ours = [after[0] - before[0] for before, after in pairwise(samples)]
    workers = [after[1] - before[1] for before, after in pairwise(samples)]
    page = sum(workers) / len(pages)  # the worker's CPU for one page
    assert max(ours) < page / 5, (max(ours), page)
    assert max(workers) < page / 5, (max(workers), page)
    assert sum(ours) < sum(workers) / 2, (sum(ours), sum(workers))  # drawn elsewhere (now 1/5)


def _cpu_of(pid: int) -> float:
    """The CPU seconds (user and system) process `pid` has used, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()  # after the name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_exports_take_fewer_workers_than_there_are_so_pages_are_still_drawn():
    """However many exports are asked for (each may hold a worker for a minute), one runs at a
    time with two workers; the next waits its turn, the one past the queue is turned away at
    once, and a page is drawn meanwhile."""
    trace = trace_snippet(SEED)

    async def body(pool):
        release = asyncio.Event()
        real_run = pool.run

        async def slow_export(request, budget=None):
            if request["kind"] == "export":
                await release.wait()  # a long export, holding its worker
                return {"data": ""}
            return await real_run(request, budget)

        pool.run = slow_export
        first = asyncio.ensure_future(pool.export(trace, "t", {"format": "gif"}, None))
        await asyncio.sleep(0)
        waiting = asyncio.ensure_future(pool.export(trace, "t", {"format": "zip"}, None))
        await asyncio.sleep(0)
        with pytest.raises(RenderBusy) as turned_away:  # at once: not after the first one ends
            await asyncio.wait_for(pool.export(trace, "t", {"format": "pdf"}, None), 5)
        page = await pool.page(trace, "t")  # the other worker draws pages
        assert not waiting.done()
        release.set()
        await first
        return turned_away.value.retry_after, page, await waiting

    settings = RenderSettings(workers=2, budget_seconds=60, export_queue=1)
    retry_after, page, waited = _run(settings, body)
    assert retry_after == RenderSettings.export_retry_after
    assert page["rendered"]["step_count"]
    assert waited == {"data": ""}  # a slot freed is the next one's
