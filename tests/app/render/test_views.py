"""The two drawn views: stable ids, nothing moving between steps, safe text, big graphs stacked.

Every render here is of a real trace (engine.tracer.trace_snippet), so these tests also hold the
renderer to the trace format as the engine writes it.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from app.render import UNSEEDED_NOTICE, render
from app.render.layout import SVG
from app.render.page import printed_by_step
from app.render.playback import element_classes, state_at, states, still
from engine.tracer import trace_snippet
from tests import corpus

NS = {"svg": SVG}
VIEWS = ("tensors", "autograd")

SEED = """\
import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a*b + a
d.backward()
print(a.grad.item(), b.grad.item())
"""

LINEAR = """\
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
y = torch.tensor([[1.0], [2.0]])
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
"""

DYNAMIC = """\
import torch
weights = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)

def dynamic_model(x, threshold=0.5):
    result = 0
    for val in x:
        if val > threshold:
            result += val * weights[0]
        else:
            result += val * weights[1]
    return result

loss = dynamic_model(torch.tensor([0.1, 0.8, 0.2, 0.9]))
loss.backward()
"""

HOSTILE = r"""
import torch
π = torch.tensor([1.0, 2.0], requires_grad=True)
s = (π * len("<script>alert('&')</script>")).sum()
t = (π * len("\\N\\G")).sum()
with torch.no_grad():
    z = π * 2
(s + t).backward()
"""

ERRORS = """\
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x.exp()
y += 1
y.sum().backward()
"""

CHAIN = """\
import torch
x = torch.tensor(1.0, requires_grad=True)
y = x
for i in range(200):
    y = y * 1.001
y.backward()
"""

TRAINING = """\
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
X = torch.randn(8, 3)
Y = torch.randn(8)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(200):
    opt.zero_grad()
    loss = ((X @ w - Y) ** 2).mean()
    loss.backward()
    opt.step()
"""

SNIPPETS = {
    "seed": SEED,
    "linear": LINEAR,
    "dynamic": DYNAMIC,
    "hostile": HOSTILE,
    "errors": ERRORS,
    "chain": CHAIN,
    "training": TRAINING,
}


def rendered(name: str) -> dict:
    return corpus.rendered(SNIPPETS[name])


def svg_ids(svg: str) -> dict[str, ET.Element]:
    root = ET.fromstring(svg)
    ids: dict[str, ET.Element] = {}
    for element in root.iter():
        if "id" in element.attrib:
            assert element.attrib["id"] not in ids, f"duplicate id {element.attrib['id']}"
            ids[element.attrib["id"]] = element
    return ids


def slot(element: ET.Element, name: str) -> list[ET.Element]:
    return [t for t in element.findall("svg:text", NS) if t.get("class") == name]


@pytest.mark.parametrize("name", SNIPPETS)
def test_every_id_a_step_names_is_drawn_in_its_view(name):
    view = rendered(name)
    for vname in VIEWS:
        ids = svg_ids(view["views"][vname]["svg"])
        for step in view["steps"]:
            delta = step[vname]
            for key in ("reveal", "hide", "focus"):
                for i in delta.get(key, ()):
                    assert i in ids, f"step {step['index']} {key}s {i}, not in the {vname} SVG"
            for i in delta.get("values", {}):
                assert slot(ids[i], "value"), f"{i} has no value line to relabel"
            for i in delta.get("grads", {}):
                assert slot(ids[i], "grad"), f"{i} has no grad text"
            for i in delta.get("marks", {}):
                assert i in ids


@pytest.mark.parametrize("name", SNIPPETS)
def test_rendering_is_deterministic(name):
    trace = trace_snippet(SNIPPETS[name])
    first = json.dumps(render(trace), ensure_ascii=False)
    assert json.dumps(render(trace), ensure_ascii=False) == first


def _geometry(svg: str) -> list[tuple]:
    """Every shape's tag and position attributes, in document order."""
    keep = ("points", "d", "cx", "cy", "rx", "ry", "x", "y", "transform", "viewBox")
    root = ET.fromstring(svg)
    return [
        (e.tag, tuple((k, e.get(k)) for k in keep if k in e.attrib))
        for e in root.iter()
        if e.tag != f"{{{SVG}}}style"
    ]


@pytest.mark.parametrize("name", ["seed", "linear", "dynamic", "errors"])
def test_positions_are_identical_at_every_step(name):
    view = rendered(name)
    for vname in VIEWS:
        base = _geometry(view["views"][vname]["svg"])
        for k in range(len(view["steps"])):
            assert _geometry(still(view, vname, k)) == base, f"step {k} moved something"


@pytest.mark.parametrize("name", ["training", "errors"])
def test_states_fold_every_step_as_state_at_does(name):
    view = rendered(name)
    for vname in VIEWS:
        folded = list(states(view["steps"], vname))
        assert folded == [state_at(view["steps"], vname, k) for k in range(len(view["steps"]))]


def _classes(svg: str) -> dict[str, list[str]]:
    return {
        group.get("id"): group.get("class").split()
        for group in ET.fromstring(svg).iter(f"{{{SVG}}}g")
        if {"node", "edge"} & set((group.get("class") or "").split()) and group.get("id")
    }


@pytest.mark.parametrize("name", ["training", "errors"])
def test_a_still_adds_the_element_classes_of_its_step(name):
    """What still writes is element_classes, which the fold test holds fold.js to."""
    view = rendered(name)
    for vname in VIEWS:
        drawn = _classes(view["views"][vname]["svg"])
        for k, state in enumerate(states(view["steps"], vname)):
            phase = view["steps"][k]["phase"]
            want = {
                gid: [*classes, *element_classes(state, gid, phase)]
                for gid, classes in drawn.items()
            }
            assert _classes(still(view, vname, k)) == want, f"{vname} step {k}"


def test_the_two_views_can_share_a_page():
    view = rendered("linear")
    tensors = svg_ids(view["views"]["tensors"]["svg"])
    autograd = svg_ids(view["views"]["autograd"]["svg"])
    assert not set(tensors) & set(autograd)


@pytest.mark.parametrize("name", SNIPPETS)
def test_svg_is_clean(name):
    for vname in VIEWS:
        svg = rendered(name)["views"][vname]["svg"]
        assert svg.startswith("<svg")
        assert "<!DOCTYPE" not in svg and "<?xml" not in svg and "<!--" not in svg
        root = ET.fromstring(svg)
        for group in root.iter(f"{{{SVG}}}g"):
            if "edge" in group.get("class", "").split():
                assert group.find("svg:title", NS) is None  # Graphviz's "t1->o2" tooltips


def test_the_tensors_view_is_the_snippets_variables_and_ops():
    view = rendered("seed")
    ids = svg_ids(view["views"]["tensors"]["svg"])
    assert {"t1", "t2", "t3", "t4", "o2", "o3", "e-t1-o2", "e-o2-t3", "e-t1-o3"} <= set(ids)
    assert ids["t1"].get("class") == "node tensor leaf requires-grad"
    assert ids["t3"].get("class") == "node tensor nonleaf"
    assert ids["o2"].get("class") == "node op"
    assert ids["o2"].get("data-kind") == "op"
    assert [t.text for t in ids["t1"].findall("svg:text", NS)][:2] == ["a", "3"]
    assert slot(ids["o2"], "label")[0].text == "×"


def test_the_autograd_view_is_pytorchs_graph():
    view = rendered("seed")
    ids = svg_ids(view["views"]["autograd"]["svg"])
    # MulBackward0 (n1) with its saved a and b, AccumulateGrad for a (n2) and b (n3),
    # AddBackward0 (n4), and d where backward() starts
    assert ids["n1"].get("class") == "node fn"
    assert slot(ids["n1"], "label")[0].text == "MulBackward0"
    assert ids["n2"].get("class") == "node accumulate"
    assert slot(ids["n2"], "value")[0].text == "a.grad = None"
    assert ids["n1-s0"].get("data-kind") == "saved"
    assert ids["t4-root"].get("data-kind") == "root"
    # edges follow next_functions: AddBackward0 → MulBackward0 and → a's AccumulateGrad
    assert {"e-n4-n1", "e-n4-n2", "e-n1-n2", "e-n1-n3", "e-t4-root-n4"} <= set(ids)
    assert ids["e-n4-n1"].get("class") == "edge next"


def test_backward_is_drawn_with_the_numbers():
    view = rendered("seed")
    steps = view["steps"]
    mul = next(s for s in steps if s["kind"] == "node_backward" and "MulBackward0" in s["text"])
    assert mul["autograd"]["grads"] == {"e-n1-n2": "4", "e-n1-n3": "3"}
    # the gradient passing through a*b is a badge (a*b keeps no .grad); d's badge is cleared
    assert mul["tensors"]["grads"] == {
        "t4": "",
        "t3": "∂d/∂(a*b) = 1",
        "e-t1-o2": "4",
        "e-t2-o2": "3",
    }
    acc = next(s for s in steps if s["kind"] == "accumulate")
    assert acc["autograd"]["values"] == {"n2": "a.grad = 5"}
    freed = next(s for s in steps if s["kind"] == "free")
    assert freed["phase"] == "freed"
    assert freed["autograd"]["marks"] == {"n1": "freed", "n1-s0": "freed", "n1-s1": "freed"}
    final = state_at(steps, "autograd", len(steps) - 1)
    assert final.values["n2"] == "a.grad = 5" and final.marks["n1"] == "freed"


def test_a_new_forward_pass_shows_a_fresh_graph():
    view = rendered("linear")
    steps = view["steps"]
    starts = [next(s for s in steps if s["generation"] == g) for g in (1, 2, 3)]
    assert "A new forward pass begins (pass 2)" in starts[1]["text"]
    for start in starts[1:]:
        before = state_at(steps, "autograd", start["index"] - 1)
        after = state_at(steps, "autograd", start["index"])
        gone = set(before.visible) - set(after.visible)
        # the last pass's grad_fn nodes go; the parameters' AccumulateGrad nodes stay
        assert gone and all(view_kind(view, "autograd", i) != "accumulate" for i in gone)
        assert {"n2", "n4"} <= set(after.visible)
    frames = view["views"]["tensors"]["frames"]
    assert len(frames) == 3 and all(len(f) == 4 for f in frames)


def view_kind(view: dict, vname: str, element: str) -> str | None:
    return svg_ids(view["views"][vname]["svg"])[element].get("data-kind")


def test_user_text_stays_text():
    view = rendered("hostile")
    for vname in VIEWS:
        svg = view["views"][vname]["svg"]
        root = ET.fromstring(svg)
        tags = {element.tag.split("}")[-1] for element in root.iter()}
        assert tags <= {"svg", "g", "title", "text", "path", "polygon", "ellipse", "polyline"}
    texts = [
        t.text or "" for t in ET.fromstring(view["views"]["tensors"]["svg"]).iter(f"{{{SVG}}}text")
    ]
    assert "π" in texts
    assert any("<script>alert('&')</script>" in t for t in texts)
    assert any("\\\\N" in t for t in texts)  # not Graphviz's \N (the node's name)
    assert "&lt;script&gt;" in view["views"]["tensors"]["svg"]


def test_an_error_step_points_at_the_failing_node():
    view = rendered("errors")
    error = view["steps"][-1]
    assert error["phase"] == "error" and error["kind"] == "error"
    assert error["span"] == [5, 0, 5, 18]
    assert error["error"]["type"] == "RuntimeError"
    assert error["error"]["message"].startswith("one of the variables needed")
    assert "y = y + 1" in error["error"]["explanation"]
    assert "n1" in error["autograd"]["focus"]  # ExpBackward0, whose saved result was changed


def test_a_long_chain_is_drawn_whole_below_the_limit():
    view = rendered("chain")
    assert view["views"]["autograd"]["nodes"] == 202  # 200 × MulBackward0, AccumulateGrad, root
    assert view["views"]["tensors"]["nodes"] == 402  # x, x.grad, 200 × (op, result)
    assert view["views"]["autograd"]["notice"] is None and not view["groups"]


def test_a_big_graph_is_stacked_and_says_so():
    view = rendered("training")
    for vname in VIEWS:
        assert view["views"][vname]["nodes"] <= 500
        assert "stacked" in view["views"][vname]["notice"]
    assert view["notices"]
    gid, group = next(iter(view["groups"].items()))
    assert len(group["members"]) == 200
    drawn = svg_ids(view["views"][group["view"]]["svg"])[gid]
    assert drawn.get("data-group").split() == group["members"]
    assert "× 200" in [t.text for t in drawn.findall("svg:text", NS)]
    # a long loop's middle passes are one step each, and say so
    passes = [s for s in view["steps"] if s["kind"] == "pass"]
    assert passes and "each pass is one step" in passes[0]["text"]


def test_a_stack_can_be_expanded():
    trace = trace_snippet(TRAINING)
    view = render(trace)
    gid = next(g for g, group in view["groups"].items() if group["view"] == "autograd")
    members = view["groups"][gid]["members"]
    expanded = render(trace, expand=[gid])
    ids = svg_ids(expanded["views"]["autograd"]["svg"])
    assert gid not in ids and set(members) <= set(ids)
    assert expanded["groups"][gid]["expanded"] is True


def test_an_empty_view_says_why():
    view = render(trace_snippet("import torch\nx = torch.ones(2) * 3\n"))
    assert view["views"]["autograd"]["nodes"] == 0
    assert view["views"]["autograd"]["notice"].startswith("No graph was recorded")
    nothing = render(trace_snippet("x = 1\n"))
    assert [s["kind"] for s in nothing["steps"]] == ["done"]


def test_a_run_that_drew_before_any_seed_says_so_and_a_seeded_one_does_not():
    unseeded = render(trace_snippet("import torch\nx = torch.randn(3)\nprint(x)\n"))
    assert UNSEEDED_NOTICE in unseeded["notices"]
    seeded = render(trace_snippet("import torch\ntorch.manual_seed(0)\nx = torch.randn(3)\n"))
    assert UNSEEDED_NOTICE not in seeded["notices"]


def test_a_trace_stored_before_the_unseeded_flag_renders_without_its_notice():
    trace = trace_snippet("import torch\nx = torch.randn(3)\n")
    del trace["unseeded_random"]  # the quiz and API routes can still meet such a trace
    assert UNSEEDED_NOTICE not in render(trace)["notices"]


def test_ids_are_the_traces():
    view = rendered("dynamic")
    trace = trace_snippet(DYNAMIC)
    tensors = svg_ids(view["views"]["tensors"]["svg"])
    autograd = svg_ids(view["views"]["autograd"]["svg"])
    assert set(trace["tensors"]) <= set(tensors)
    assert set(trace["nodes"]) <= set(autograd)
    pattern = re.compile(r"^(t\d+(-v\d+)?|o\d+|e-.+|tensors-graph)$")
    assert all(pattern.match(i) for i in tensors)


UNFILLED = re.compile(r"\{(\d+|g|i)\}")  # a narration template slot left unfilled


@pytest.mark.parametrize("snippet", corpus.spread(corpus.SNIPPETS, lambda s: s["slug"]))
def test_every_snippet_the_engine_knows_renders(snippet):
    """The engine's golden snippets (every op, error and feature it has), the long ones too:
    each renders, each step has words, and every id a step names is drawn in its view."""
    view = corpus.rendered(snippet["source"])
    for vname in VIEWS:
        ids = set(svg_ids(view["views"][vname]["svg"]))
        for step in view["steps"]:
            assert step["text"] and not UNFILLED.search(step["text"]), step
            delta = step[vname]
            named = [*delta.get("reveal", ()), *delta.get("hide", ()), *delta.get("focus", ())]
            named += [*delta.get("values", {}), *delta.get("grads", {}), *delta.get("marks", {})]
            missing = set(named) - ids
            assert not missing, (vname, step["index"], missing)


def test_the_output_printed_by_each_step_is_counted_as_the_browser_slices_it():
    # a character outside the BMP is two UTF-16 units in the browser, one in Python
    code = (
        "import torch\na = torch.ones(2, requires_grad=True)\n"
        'print("π 🙂")\nb = a * 2\nprint(b.sum().item())\n'
    )
    trace = trace_snippet(code)
    steps = render(trace)["steps"]
    printed = printed_by_step(trace, steps)
    assert len(printed) == len(steps)
    assert printed == sorted(printed) and printed[0] == 0  # step 1 makes `a`, printing nothing
    first = len("π 🙂\n".encode("utf-16-le")) // 2
    assert first in printed  # the first print's step shows just its line
    assert printed[-1] == len(trace["stdout"].encode("utf-16-le")) // 2 == first + len("4.0\n")
    # a run cut at the event cap prints on unrecorded: the rest belongs to the last step
    cut = trace_snippet(
        "import torch\nfor i in range(50):\n    x = torch.ones(1) * i\nprint('done')\n",
        max_events=10,
    )
    assert cut["limits"]["truncated"]
    assert printed_by_step(cut, render(cut)["steps"])[-1] == len(cut["stdout"])
