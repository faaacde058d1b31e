"""The renderer against hostile or huge traces: steps in linear time, Graphviz never handed
anything it interprets, and the ids it drew reported by the layout itself."""

from __future__ import annotations

import json
import re

import pytest

from app.render import graph, layout, render, steps
from app.render.graph import Element, Graph
from app.render.page import player_context
from app.sandbox import SandboxSettings, validate
from engine.tracer import trace_snippet
from tests.timing import cpu_seconds

LOOP = "import torch\nfor i in range({n}):\n    torch.ones(1)\n"


def _steps_seconds(trace: dict) -> float:
    return cpu_seconds(lambda: steps.build(graph.build(trace)), runs=1)


def _best(trace: dict, runs: int = 3) -> float:
    return cpu_seconds(lambda: steps.build(graph.build(trace)), runs)


def _prefix(trace: dict, n: int) -> dict:
    """The trace's first n events, whole (what they introduce and nothing after)."""
    return {
        **trace,
        "events": trace["events"][:n],
        "tensors": {k: v for k, v in trace["tensors"].items() if v["created"] < n},
        "nodes": {k: v for k, v in trace["nodes"].items() if v["created"] < n},
    }


@pytest.mark.slow
def test_steps_of_a_19999_op_loop_take_linear_time():
    """`for i in range(19999): torch.ones(1)` is one line run 19,999 times (one batch): 4n
    events take less than 8× the time of n (it was quadratic: 17 s for the whole loop)."""
    trace = trace_snippet(LOOP.format(n=19_999), max_events=100_000)
    assert len(trace["events"]) == 19_999
    small, large = _prefix(trace, 4_000), _prefix(trace, 16_000)
    _steps_seconds(small)  # warm up
    assert _best(large) < 8 * _best(small)


def forged_same_line(n: int) -> dict:
    """n quiet events (tensors the engine made without saying how) on one line, then a
    grad_mode switch on it each time: the shape of trace that made `_joins` quadratic."""
    tensors, events = {}, []
    for i in range(n):
        if i % 2:
            events.append({"seq": i, "kind": "grad_mode", "enabled": bool(i % 4 == 1),
                           "span": [2, 0, 2, 9]})  # fmt: skip
            continue
        tid = f"t{i + 1}"
        tensors[tid] = {
            "label": "x", "shape": [], "dtype": "float32", "requires_grad": False,
            "is_leaf": True, "grad_fn": None, "value": 1.0, "created": i,
        }  # fmt: skip
        events.append({"seq": i, "kind": "tensor", "tensor": tid, "op": None, "inputs": [],
                       "span": [2, 0, 2, 9]})  # fmt: skip
    return {
        "version": 1, "code": "import torch\nx = f(1)\n", "tensors": tensors, "nodes": {},
        "modules": [], "events": events, "stdout": "", "stderr": "", "outcome": {"status": "ok"},
        "limits": {"truncated": False, "max_events": n, "stopped_line": None},
        "unseeded_random": False,
    }  # fmt: skip


@pytest.mark.slow
def test_steps_of_a_forged_60000_event_line_take_linear_time():
    big = forged_same_line(60_000)
    validate.check(big, SandboxSettings(max_events=60_000))  # a trace the server would store
    small = forged_same_line(15_000)
    _steps_seconds(small)
    assert _best(big, 2) < 8 * _best(small)
    assert len(steps.build(graph.build(big))) == 1  # one quiet batch, as before


def test_an_op_with_one_input_repeated_names_its_edges_in_linear_time():
    def seconds(n: int) -> float:
        def connect() -> None:
            drawn = Graph("tensors")
            for _ in range(n):
                drawn.connect("t1", "o2", "t1", "o2", classes=("flow",))

        return cpu_seconds(connect, runs=2)

    seconds(1000)
    assert seconds(20_000) < 8 * seconds(5_000)


ESCAPES = "\\N\\G\\L\\E\\H\\T\\n\\l\\r" * 300 + "<<b>x</b>>{a|b}\0\r\n"
PLAIN = "x" * len(ESCAPES)  # the same length, nothing Graphviz could read as an escape


def _labelled(text: str) -> Graph:
    drawn = Graph("tensors")
    for i in range(1, 21):
        drawn.add(Element(id=f"t{i}", kind="tensor", classes=("tensor", "leaf"),
                          lines=(text,), value=text, title=text))  # fmt: skip
    return drawn


def _texts(text: str) -> dict[str, dict[str, str]]:
    return {f"t{i}": {"value": text} for i in range(1, 21)}


def _laid_out_afresh(text: str) -> None:
    """A drawing with Graphviz's layout made now, not one it made before (layout._LAYOUTS)."""
    layout._LAYOUTS.clear()
    layout.draw(_labelled(text), _texts(text))


def test_a_label_full_of_graphviz_escapes_stays_small_and_quick():
    """20 labels of 3,000-odd characters full of escapes (expanded, each \\N would be a node
    name again). "Quick" is measured without a clock: the CPU time of drawing them against
    that of 20 plain labels of the same length (Graphviz runs in this process, so
    tests.timing.cpu_seconds sees it all, and a busy machine slows both alike)."""
    drawing = layout.draw(_labelled(ESCAPES), _texts(ESCAPES))
    assert len(drawing.svg) < 20 * 4 * len(ESCAPES) + 50_000
    assert "\\N" in drawing.svg  # the text itself, written by ElementTree, kept as typed
    assert drawing.ids == [f"t{i}" for i in range(1, 21)]
    escaped = cpu_seconds(lambda: _laid_out_afresh(ESCAPES))
    plain = cpu_seconds(lambda: _laid_out_afresh(PLAIN))
    # about 1.2x now; with the escapes handed to Graphviz as typed (a `_measure` that keeps
    # them), it expands them and the drawing costs 3x the plain one, its SVG 4x the limit
    assert escaped < 2 * plain, (escaped, plain)


@pytest.mark.parametrize("bad", ["\\N", "t1\\N", "t1 -> t2", "T1", "t1<b>", "a" * 100])
def test_layout_refuses_ids_that_are_not_ours(bad):
    drawn = Graph("tensors")
    drawn.add(Element(id=bad, kind="tensor", classes=("tensor",), lines=("x",)))
    with pytest.raises(layout.UnsafeId):
        layout.draw(drawn, {})


def test_layout_refuses_an_edge_to_nothing():
    drawn = Graph("tensors")
    drawn.add(Element(id="t1", kind="tensor", classes=("tensor",), lines=("x",)))
    drawn.connect("t1", "t2", "t1", "t2", classes=("flow",))
    with pytest.raises(layout.UnsafeId, match="not drawn"):
        layout.draw(drawn, {})


SEED = """\
import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a*b + a
d.backward()
"""


def test_the_ids_render_reports_are_the_ids_in_the_svg():
    rendered = render(trace_snippet(SEED))
    for view in rendered["views"].values():
        in_svg = re.findall(r'<g id="([^"]+)" class="(?:node|edge)', view["svg"])
        assert view["ids"] == in_svg and view["ids"]


def test_player_context_is_json_and_inspects_what_was_drawn():
    trace = trace_snippet(SEED)
    context = player_context(trace, "abc")
    json.dumps(context, allow_nan=False)
    drawn = {i for view in context["rendered"]["views"].values() for i in view["ids"]}
    assert set(context["player_data"]["inspect"]) <= drawn
    assert {"t1", "t2", "n1"} <= set(context["player_data"]["inspect"])
    assert context["lines"] == trace["code"].splitlines() and context["ident"] == "abc"


GRADS_LOOP = (
    "import torch\n"
    "x = torch.tensor(1.0, requires_grad=True)\n"
    "opt = torch.optim.SGD([x], lr=0.0)\n"
    "for i in range({n}):\n"
    "    y = x * 2\n"
    "    y.retain_grad()\n"
    "    y.backward()\n"
    "    opt.zero_grad(set_to_none=False)\n"
    "    x.grad = torch.ones(())\n"
    "    x.grad = None\n"
    "    with torch.no_grad():\n"
    "        x.add_(0)\n"
)


def _steps_and_facts(trace: dict) -> None:
    from app.render.inspector import facts

    scene = graph.build(trace)
    final = steps.finish(steps.build(scene), {})
    facts(trace, [*scene.tensors.elements, *scene.autograd.elements], final)


@pytest.mark.slow
def test_grad_history_names_and_inspector_take_linear_time():
    """.grad knowledge (app/render/grads.py), subscripted names and the inspector's facts over a
    loop that rebinds y, retains its grad, zeroes, assigns and resets x.grad and bumps x's
    version each pass."""
    small = trace_snippet(GRADS_LOOP.format(n=150), max_events=100_000)
    large = trace_snippet(GRADS_LOOP.format(n=600), max_events=100_000)
    assert len(large["events"]) > 3.5 * len(small["events"])
    cpu_seconds(lambda: _steps_and_facts(small), runs=1)  # warm up
    assert cpu_seconds(lambda: _steps_and_facts(large), 2) < 8 * cpu_seconds(
        lambda: _steps_and_facts(small), 2
    )
