"""A live edit that changes only numbers reuses Graphviz's layout (app/render/layout.py), and
the page drawn from it is the one a fresh layout would give."""

from __future__ import annotations

import pygraphviz
import pytest

from app.render import layout, render
from engine.tracer import trace_snippet

CODE = """import torch
a = torch.tensor({a}, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a * b + a
d.backward()
"""


@pytest.fixture
def layouts(monkeypatch):
    """Count Graphviz's layouts, from an empty memory of them."""
    monkeypatch.setattr(layout, "_LAYOUTS", type(layout._LAYOUTS)())
    calls = []
    original = pygraphviz.AGraph.layout

    def counted(self, *args, **kwargs):
        calls.append(self.name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(pygraphviz.AGraph, "layout", counted)
    return calls


def test_an_edit_of_digits_only_is_laid_out_once_and_drawn_as_afresh(layouts):
    first = render(trace_snippet(CODE.format(a="3.0")))
    laid_out = len(layouts)
    assert laid_out == 2  # each view once
    edited = trace_snippet(CODE.format(a="7.0"))
    reused = render(edited)
    assert len(layouts) == laid_out  # the same dot text: no new layout
    assert reused["views"]["tensors"]["svg"] != first["views"]["tensors"]["svg"]  # new values
    layout._LAYOUTS.clear()
    fresh = render(edited)
    assert len(layouts) == laid_out + 2
    assert fresh == reused


def test_a_different_graph_is_laid_out_anew(layouts):
    render(trace_snippet(CODE.format(a="3.0")))
    render(trace_snippet(CODE.format(a="3.0").replace("a * b + a", "a * b * a")))
    assert len(layouts) == 4
