"""Cairo draws a frame at the size asked for; without Cairo, image exports say what to install."""

from __future__ import annotations

import io
import sys

import pytest
from PIL import Image

from app.examples import DEFAULT
from app.export import raster
from app.export.frames import frames
from app.export.options import StepRange
from app.render import render
from engine.tracer import trace_snippet


@pytest.fixture(scope="module")
def frame():
    rendered = render(trace_snippet(DEFAULT.code))
    return next(frames(rendered, "tensors", StepRange.of(len(rendered["steps"]), 4, 4)))


def test_a_png_is_drawn_at_its_scale(frame):
    image = Image.open(io.BytesIO(raster.png(frame.svg)))
    scale = raster.PNG_SCALE * raster.PIXELS_PER_POINT
    assert image.size == (round(frame.width * scale), round(frame.height * scale))


def test_a_fitted_png_is_exactly_the_size_asked_for_and_not_blank(frame):
    image = Image.open(io.BytesIO(raster.png_fitted(frame.svg, frame.width, (640, 400))))
    assert image.size == (640, 400)
    colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is not None and len(colours) > 20  # a drawing, not an empty canvas


def test_a_pdf_page_is_the_frames_size(frame):
    from pypdf import PdfReader

    (page,) = PdfReader(io.BytesIO(raster.pdf_page(frame.svg))).pages
    assert float(page.mediabox.width) == pytest.approx(frame.width, abs=1)
    assert float(page.mediabox.height) == pytest.approx(frame.height, abs=1)
    assert "Step 4 of" in page.extract_text()  # vector: the caption is text, not pixels


def test_without_cairo_an_image_export_says_what_to_install(frame, monkeypatch):
    raster._cairosvg.cache_clear()
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # import fails as on a machine without it
    try:
        with pytest.raises(raster.ExportUnavailable, match="libcairo2"):
            raster.png(frame.svg)
    finally:
        raster._cairosvg.cache_clear()


def test_a_big_frame_is_drawn_within_the_longest_side_allowed():
    assert raster.scale_within(400, 300, 2.0, 2400) == 2.0  # small: as asked
    scale = raster.scale_within(1660, 1175, 2.0, 2400)
    assert max(1660, 1175) * raster.PIXELS_PER_POINT * scale == pytest.approx(2400)
