"""An image export's cost is known before its first frame is drawn: past MAX_COST it is a
BadOption saying how many steps to ask for instead, and a range that long is drawn."""

from __future__ import annotations

import re

import pytest

from app.examples import BY_SLUG
from app.export import cost, make, raster
from app.export.options import MAX_FRAMES, BadOption, ExportRequest, StepRange
from app.render import render
from app.render.playback import shown_counts, state_at
from engine.tracer import trace_snippet

# 15 weights summed as squares, 5 passes: 376 steps, up to 189 elements shown in a step
BIG = """import torch
ws = [torch.tensor(float(i), requires_grad=True) for i in range(15)]
for step in range(5):
    total = ws[0] * 0.5
    for w in ws[1:]:
        total = total + w * w
    total.backward()
"""
FORMATS = ("zip", "pdf", "gif")


@pytest.fixture(scope="module")
def big():
    trace = trace_snippet(BIG)
    return trace, render(trace)


def test_the_count_of_elements_shown_is_the_players_fold(big):
    _, rendered = big
    steps = rendered["steps"]
    for view in ("tensors", "autograd"):
        counts = shown_counts(steps, view)
        assert [counts[k] for k in (0, 100, 375)] == [
            len(state_at(steps, view, k).visible) for k in (0, 100, 375)
        ]


@pytest.mark.parametrize("format", FORMATS)
def test_a_costly_export_is_refused_before_a_frame_is_drawn(big, format, monkeypatch):
    trace, rendered = big

    def drawn(*args, **kwargs):
        raise AssertionError("a frame was drawn")

    monkeypatch.setattr(raster, "png", drawn)
    monkeypatch.setattr(raster, "pdf_page", drawn)
    with pytest.raises(BadOption) as refused:
        make.export(trace, "big", ExportRequest.checked(format, first=1, last=MAX_FRAMES))
    said = str(refused.value)
    found = re.search(r"ask for at most (\d+) steps \(from= and to=\)", said)
    assert found, said
    most = int(found[1])
    assert 1 <= most < MAX_FRAMES
    # any range that long within the one asked for is drawn
    total = len(rendered["steps"])
    for first in (1, 60, MAX_FRAMES - most + 1):
        cost.check(rendered, "tensors", format, StepRange.of(total, first, first + most - 1))


def test_the_longest_example_still_exports_its_first_max_frames_steps_as_a_pdf():
    """mlp-training: 404 steps of 20 passes, a few dozen elements shown at a time: a PDF page
    has no pixels of its own to draw (a GIF of that many asks for fewer: docs/exports.md)."""
    rendered = render(trace_snippet(BY_SLUG["mlp-training"].code))
    steps = StepRange.of(len(rendered["steps"]), 1, MAX_FRAMES)
    for view in ("tensors", "autograd"):
        cost.check(rendered, view, "pdf", steps)
