"""layout.py gives Graphviz its nodes and edges through pygraphviz's own C calls, skipping
pygraphviz's Python objects (25 ms of a 20-pass MLP's drawing): the graph, its dot text and
the drawing are the ones pygraphviz's add_node and add_edge give, labels from user code and all."""

from __future__ import annotations

import pytest

from app.examples import BY_SLUG
from app.render import layout, render
from engine.tracer import trace_snippet

HOSTILE = """import torch
x = torch.tensor(2.0, requires_grad=True)
é = x * 3
é.retain_grad()
z = é.sum()
z.backward()
print("<script>\\\\N \\" ' & \\u2028 é")
"""


def _through_pygraphviz(agraph, name, attrs):
    agraph.add_node(name, **attrs)


def _edge_through_pygraphviz(agraph, tail, head, key, attrs):
    agraph.add_edge(tail, head, key=key, **attrs)


def _drawn(trace, monkeypatch, *, slow: bool):
    """The dot texts Graphviz was given, and the drawings, with or without pygraphviz's API."""
    given: list[str] = []
    laid_out = layout._laid_out

    def watched(agraph):
        given.append(agraph.string())
        return laid_out(agraph)

    with monkeypatch.context() as patched:
        patched.setattr(layout, "_laid_out", watched)
        patched.setattr(layout, "_LAYOUTS", type(layout._LAYOUTS)())
        if slow:
            patched.setattr(layout, "_add_node", _through_pygraphviz)
            patched.setattr(layout, "_add_edge", _edge_through_pygraphviz)
        drawn = render(trace)
    return given, {name: view["svg"] for name, view in drawn["views"].items()}


@pytest.mark.parametrize("code", [BY_SLUG["mlp-training"].code, HOSTILE], ids=["mlp", "hostile"])
def test_the_graph_is_the_one_pygraphvizs_api_gives(code, monkeypatch):
    trace = trace_snippet(code)
    given, drawn = _drawn(trace, monkeypatch, slow=False)
    expected_given, expected_drawn = _drawn(trace, monkeypatch, slow=True)
    assert len(given) == 2 and all(given)
    assert given == expected_given
    assert drawn == expected_drawn
