"""How fast is the render layer? Layout and whole-render times for graphs of 50, 200 and 500
drawn nodes, and for a 1,000-iteration training loop (stacked); then the long-trace cases
(steps for a 19,999-op loop and a forged 60,000-event line, a 20,000-event page and its
generated quiz) and the render worker's round trip against drawing in-process; then a stored
trace's first draw as the server makes it (read from the store, drawn by a worker, kept as text)
beside the same page drawn in-process, in the same run.

    .venv/bin/python bench/render.py [--repeat 5] [--only first-draw]

Each snippet is traced once, then rendered several times; medians are printed, with the
trace's own time as the baseline measured in the same run (machines here are shared and noisy,
so the ratio says more than the milliseconds). "largest step" is the most ids one step changes,
which bounds the player's work per step.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.lessons import quiz  # noqa: E402
from app.render import graph, layout, render, stacks, steps  # noqa: E402
from app.render.page import drawn_page, player_context  # noqa: E402
from app.render_pool import RenderPool, RenderSettings  # noqa: E402
from engine.tracer import trace_snippet  # noqa: E402

# Each pass of the loop adds a multiply, an add and a tanh: 6 elements to the tensors view and
# 5 to the autograd view (3 nodes and 2 saved tensors), so `passes` sets the graph's size.
RECURRENCE = """
import torch
w = torch.tensor(0.9, requires_grad=True)
b = torch.tensor(0.1, requires_grad=True)
h = torch.tensor(0.5)
for step in range({passes}):
    h = torch.tanh(h * w + b)
h.backward()
"""

TRAINING = """
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


# One line run 19,999 times: a single batch of `tensor` events (quadratic to group, once).
LOOP = """
import torch
for i in range(19999):
    torch.ones(1)
"""

SEED = """
import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a*b + a
d.backward()
"""


def forged_line(n: int) -> dict:
    """What a hostile child can write: n quiet events (engine tensors) on one line."""
    tensors = {
        f"t{i + 1}": {
            "label": "x", "shape": [], "dtype": "float32", "requires_grad": False,
            "is_leaf": True, "grad_fn": None, "value": 1.0, "created": i,
        }
        for i in range(n)
    }  # fmt: skip
    events = [
        {"seq": i, "kind": "tensor", "tensor": f"t{i + 1}", "op": None, "inputs": [],
         "span": [2, 0, 2, 9]}
        for i in range(n)
    ]  # fmt: skip
    return {
        "version": 1, "code": "import torch\nx = f(1)\n", "tensors": tensors, "nodes": {},
        "events": events, "stdout": "", "stderr": "", "outcome": {"status": "ok"},
        "limits": {"truncated": False, "max_events": n},
    }  # fmt: skip


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def layouts(trace: dict, repeat: int) -> dict[str, tuple[int, float]]:
    """Drawn nodes and median layout (Graphviz + SVG rewrite) time, per view."""
    scene = graph.build(trace)
    raw = steps.build(scene)
    out = {}
    for view in ("tensors", "autograd"):
        drawn = stacks.stack(scene.view(view))
        final = steps.finish(raw, {view: drawn.rename})
        texts: dict[str, dict[str, str]] = {}
        for step in final:
            for key in ("values", "grads"):
                for element, text in step[view].get(key, {}).items():
                    held = texts.setdefault(element, {})
                    if len(text) > len(held.get(key[:-1], "")):
                        held[key[:-1]] = text
        seconds = median_time(lambda d=drawn, t=texts: layout.draw(d.graph, t), repeat)
        out[view] = (len(drawn.graph.elements), seconds)
    return out


def row(name: str, code: str, repeat: int) -> None:
    start = time.perf_counter()
    trace = trace_snippet(code)
    traced = time.perf_counter() - start
    rendered = render(trace)
    whole = median_time(lambda: render(trace), repeat)
    per_view = layouts(trace, repeat)
    largest = max(
        sum(
            len(step[view].get(key, ()))
            for key in ("reveal", "hide", "focus", "values", "grads", "marks")
        )
        for step in rendered["steps"]
        for view in ("tensors", "autograd")
    )
    size = len(json.dumps(rendered, ensure_ascii=False).encode())
    views = "  ".join(
        f"{view} {nodes:>4} nodes, layout {seconds * 1000:6.1f} ms"
        for view, (nodes, seconds) in per_view.items()
    )
    print(
        f"{name:<22} {len(trace['events']):>6} events  {views}  render {whole * 1000:7.1f} ms "
        f"({whole / traced:4.1f}× the trace's {traced * 1000:.0f} ms)  "
        f"{len(rendered['steps']):>5} steps, largest step {largest:>4} ids, {size / 1024:,.0f} KiB"
    )


def long_traces(repeat: int) -> None:
    """Step building for the traces that were quadratic, and a whole 20,000-event page."""
    loop = trace_snippet(LOOP, max_events=100_000)
    forged = forged_line(60_000)
    for name, trace in (("19,999-op loop", loop), ("forged 60,000-event line", forged)):
        seconds = median_time(lambda t=trace: steps.build(graph.build(t)), repeat)
        print(f"{name:<26} {len(trace['events']):>6} events  steps {seconds * 1000:7.1f} ms")
    page = trace_snippet(TRAINING.replace("range(1000)", "range(1100)"))  # cut at 20,000
    seconds = median_time(lambda: player_context(page, "bench"), max(1, repeat // 2))
    name = "20,000-event page"
    print(f"{name:<26} {len(page['events']):>6} events  page  {seconds * 1000:7.1f} ms")
    # Quiz me on the same trace works out its facts in the same worker, under the same budget
    quizzed = median_time(lambda: quiz.context(page), max(1, repeat // 2))
    print(
        f"{name:<26} {len(page['events']):>6} events  quiz  {quizzed * 1000:7.1f} ms "
        f"({quizzed / seconds:.2f}x the page)"
    )


def first_draw(repeat: int) -> None:
    """A stored 20,000-event trace's page the first time anyone asks for it, as the server
    draws it (app/service.py Traces.page: the stored text read and handed to a worker as it
    is, the finished page handed back), each time with an empty page cache; beside the same
    page drawn in-process (app.render.page.drawn_page), the floor it cannot go below."""
    import tempfile

    from app.config import Settings, StoreSettings
    from app.page_cache import PageCache
    from app.sandbox import Requester
    from app.service import Traces
    from app.store import Store

    code = TRAINING.replace("range(1000)", "range(1100)")  # cut at 20,000 events
    trace = trace_snippet(code)
    local = median_time(lambda: drawn_page(trace, "bench"), repeat)

    async def main(folder: str) -> list[float]:
        store = Store(f"{folder}/traces.db")
        ident, _ = store.put(code, trace)
        pool = RenderPool(RenderSettings(workers=1))
        reader = Requester("bench", "bench")
        try:
            await pool.start()
            times = []
            for _ in range(repeat):
                traces = Traces(
                    store, Settings(store=StoreSettings(path=store.path)), pool, PageCache()
                )
                start = time.perf_counter()
                await traces.page(ident, reader)
                times.append(time.perf_counter() - start)
            return times
        finally:
            await pool.close()

    with tempfile.TemporaryDirectory() as folder:
        drawn = statistics.median(asyncio.run(main(folder)))
    name = f"{len(trace['events']):,}-event page"
    print(
        f"{name:<26} first draw in-process {local * 1000:7.1f} ms  as served "
        f"{drawn * 1000:7.1f} ms  ({drawn / local:.2f}x)"
    )


def round_trip(repeat: int) -> None:
    """A page drawn by a render worker against the same page drawn in-process."""
    big = trace_snippet(TRAINING.replace("range(1000)", "range(1100)"))  # cut at 20,000 events
    cases = [("seed page", trace_snippet(SEED)), ("20,000-event page", big)]

    async def timed(pool: RenderPool, trace: dict) -> float:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            await pool.page(trace, "bench", ())
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    async def main() -> list[float]:
        pool = RenderPool(RenderSettings(workers=1))
        try:
            await pool.start()
            await pool.page(cases[0][1], "warm", ())
            return [await timed(pool, trace) for _, trace in cases]
        finally:
            await pool.close()

    pooled = asyncio.run(main())
    for (name, trace), worker in zip(cases, pooled, strict=True):
        local = median_time(lambda t=trace: player_context(t, "bench"), repeat)
        print(
            f"{name:<26} in-process {local * 1000:7.1f} ms  worker {worker * 1000:7.1f} ms  "
            f"(+{(worker - local) * 1000:.1f} ms round trip)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=["first-draw"], help="only this part")
    args = parser.parse_args()
    repeat = args.repeat
    gc.collect()
    if args.only == "first-draw":
        first_draw(repeat)
        return
    for target in (50, 200, 500):
        passes = max(1, (target - 4) // 6)  # the tensors view is the bigger one
        row(f"{target}-node graph", RECURRENCE.format(passes=passes), repeat)
    row("1,000-pass loop", TRAINING, max(1, repeat // 2))
    long_traces(repeat)
    round_trip(repeat)
    first_draw(repeat)


if __name__ == "__main__":
    main()
