"""A step on paper (app/render/playback.py): the pass whole when its labels are legible at the
paper's size, else a window of the paper's shape at 9 pt on what the step is about, inside the
pass. The exports frame their slides with it, and the page carries the printed handout's
windows by it (app/render/page.py, `handout_windows`)."""

from __future__ import annotations

import pytest

from app.render import playback

A4_PICTURE = playback.HANDOUT_PAPER  # the handout's: A4's text width by 8 cm


def test_a_legible_frame_is_shown_whole():
    frame = [10.0, 20.0, 500.0, 200.0]  # fitted at 1.02: 10 pt labels at 10.2 pt
    assert playback.paper_window(frame, [400, 30, 20, 20], 10.0, A4_PICTURE) == frame


def test_an_illegible_frame_is_seen_through_a_window_at_9_pt_centred_on_the_spot():
    frame = [0.0, 0.0, 4000.0, 3000.0]
    window = playback.paper_window(frame, [1990.0, 1490.0, 20.0, 20.0], 10.0, A4_PICTURE)
    x, y, width, height = window
    assert A4_PICTURE[0] / width * 10 == pytest.approx(playback.MIN_LABEL_PT, abs=0.01)
    assert width / height == pytest.approx(A4_PICTURE[0] / A4_PICTURE[1], abs=0.01)
    assert (x + width / 2, y + height / 2) == pytest.approx((2000.0, 1500.0), abs=0.01)


def test_the_window_stays_inside_the_frame_and_centres_what_it_cannot_hold():
    frame = [100.0, 50.0, 4000.0, 200.0]  # wide, and lower than the window
    x, y, width, height = playback.paper_window(frame, [90.0, 60.0, 10.0, 10.0], 10.0, A4_PICTURE)
    assert x == pytest.approx(100.0)  # the spot is at the frame's left edge: no further left
    assert y + height / 2 == pytest.approx(150.0, abs=0.01)  # the frame's middle, up and down
    x, _, width, _ = playback.paper_window(frame, [4095, 60, 10, 10], 10.0, A4_PICTURE)
    assert x + width == pytest.approx(4100.0, abs=0.01)
    x, y, width, height = playback.paper_window(frame, None, 10.0, A4_PICTURE)
    assert (x + width / 2, y + height / 2) == pytest.approx((2100.0, 150.0), abs=0.01)


def test_a_step_is_about_its_focus_else_what_it_reveals_else_its_passs_newest_nodes():
    boxes = {"a": (0, 0, 10, 10), "b": (100, 0, 110, 10), "c": (200, 0, 210, 10)}
    view = "tensors"
    steps = [
        {"generation": 1, view: {"reveal": ["a", "b"]}},
        {"generation": 1, view: {"reveal": ["c"], "focus": ["a", "e-a-b"]}},
        {"generation": 1, view: {"focus": ["e-a-b"]}},  # an edge only: no box of its own
        {"generation": 2, view: {"hide": ["c"]}},  # a new pass has revealed nothing yet
    ]
    assert playback.spots(steps, view, boxes) == [
        [0, 0, 110, 10],
        [0, 0, 10, 10],
        [200, 0, 10, 10],
        None,
    ]
