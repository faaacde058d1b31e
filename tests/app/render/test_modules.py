"""The module view (app/render/modules.py): past 100 elements a view, each nn.Module call is one
box; `expand` opens a module's calls; what was made outside every call is drawn as before."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.examples import BY_SLUG
from app.render import render
from app.render.layout import SVG
from app.render.page import module_links, player_context
from engine.tracer import trace_snippet

NS = {"svg": SVG}

SMALL = """\
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
loss = model(torch.ones(1, 2)).sum()
loss.backward()
"""


@pytest.fixture(scope="module")
def mlp() -> dict:
    return trace_snippet(BY_SLUG["mlp-training"].code)


@pytest.fixture(scope="module")
def drawn(mlp) -> dict:
    return render(mlp)


def nodes(svg: str) -> dict[str, ET.Element]:
    root = ET.fromstring(svg)
    return {
        g.get("id"): g for g in root.iter(f"{{{SVG}}}g") if "node" in (g.get("class") or "").split()
    }


def labels(node: ET.Element) -> list[str]:
    return [t.text or "" for t in node.findall("svg:text", NS)]


def test_a_small_network_is_drawn_whole():
    view = render(trace_snippet(SMALL))
    assert view["boxes"] == {} and view["modules"] == {}
    for name in ("tensors", "autograd"):
        assert view["views"][name]["nodes"] <= 100
        assert not [
            n for n in nodes(view["views"][name]["svg"]).values() if "module" in n.get("class")
        ]


def test_each_pass_draws_the_model_as_one_box_with_its_parameters_outside(mlp, drawn):
    tensors = nodes(drawn["views"]["tensors"]["svg"])
    boxes = {bid: about for bid, about in drawn["boxes"].items() if not bid.endswith("-fn")}
    assert len(boxes) == 20  # one call of model a pass
    for bid, about in boxes.items():
        assert labels(tensors[bid])[:2] == ["model · Sequential", "5 operations inside"]
        assert about["operations"] == 5
    # the parameters were made when the model was built, not called: drawn one by one, and
    # their AccumulateGrad nodes stay outside the autograd boxes too
    params = [t for t, record in mlp["tensors"].items() if record["label"].startswith("model[")]
    assert params and all(t in tensors for t in params)
    autograd = nodes(drawn["views"]["autograd"]["svg"])
    accumulate = [n for n, record in mlp["nodes"].items() if record["name"] == "AccumulateGrad"]
    assert accumulate and all(n in autograd for n in accumulate)
    # everything the call made stands behind the box; the loss the MSELoss made (one op) does not
    members = {m for about in boxes.values() for m in about["members"]}
    assert not members & set(tensors)
    losses = [t for t, record in mlp["tensors"].items() if record["label"] == "loss"]
    assert len(losses) == 20 and all(t in tensors for t in losses)
    assert drawn["modules"] == {"m1": {"name": "model", "type": "Sequential", "opened": False}}


def test_a_box_names_no_number_from_inside_it(drawn):
    boxes = set(drawn["boxes"])
    for step in drawn["steps"]:
        for name in ("tensors", "autograd"):
            change = step[name]
            assert not boxes & set(change.get("values", {})), step["index"]
            assert not boxes & set(change.get("grads", {})), step["index"]


def test_steps_inside_a_call_focus_its_box(mlp, drawn):
    first_call = next(bid for bid, a in drawn["boxes"].items() if not bid.endswith("-fn"))
    focused = [s["index"] for s in drawn["steps"] if first_call in s["tensors"].get("focus", [])]
    # the forward of pass 1 through the model: each of its five operations is a step on the box
    assert len(focused) >= 5


def test_opening_the_model_draws_its_layers_as_boxes_and_the_relu_as_itself(mlp):
    opened = render(mlp, expand=["m1"])
    shown = {a["name"] for a in opened["boxes"].values()}
    assert shown == {"model[0]", "model[2]"}  # the ReLU did one op: drawn as that op
    assert opened["modules"]["m1"]["opened"] is True
    tensors = nodes(opened["views"]["tensors"]["svg"])
    relus = [n for n in tensors.values() if n.find("svg:title", NS).text == "ReluBackward0"]
    assert len(relus) == 20
    # opening every module draws what the network did op by op: no box is left
    every = render(mlp, expand=["m1", "m2", "m4"])
    assert every["boxes"] == {}


def test_the_links_open_and_close_one_thing_each():
    shown = {
        "m1": {"name": "model", "type": "Sequential", "opened": True},
        "m2": {"name": "model[0]", "type": "Linear", "opened": False},
        "m7": {"name": None, "type": "Net", "opened": False},
    }
    links = module_links(shown, ["g3", "m1"])
    assert [(link["text"], link["expand"]) for link in links] == [
        ("Close model", "g3"),
        ("Open model[0]", "g3,m1,m2"),
        ("Open Net", "g3,m1,m7"),
    ]


def test_the_inspector_says_what_a_box_stands_for(mlp):
    context = player_context(mlp, "x", [])
    inspect = context["player_data"]["inspect"]
    box = next(b for b in context["rendered"]["boxes"] if not b.endswith("-fn"))
    rows = dict(inspect[box])
    assert rows["module"] == "model · Sequential"
    assert "5 operations inside" in rows["drawn as"]
    assert "Open model" in rows["to see inside"]
    assert [link["text"] for link in context["module_links"]] == ["Open model"]
