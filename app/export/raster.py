"""SVG frames into pixels and PDF pages, by Cairo (CairoSVG): the same SVG the player shows,
so a PNG frame is the live step, not a second drawing of it.

CairoSVG needs the system's Cairo library (Debian's libcairo2; `make install` puts it there)
and fonts (fonts-dejavu-core). Where Cairo is missing, image exports fail with
`ExportUnavailable`, saying what to install, and everything else works on.
"""

from __future__ import annotations

import io
from functools import cache

# A frame's SVG is sized in points; Cairo draws a point as 4/3 of a pixel (CSS's 96 per inch),
# and a PNG frame at twice that, up to MAX_PNG_SIDE
PIXELS_PER_POINT = 4 / 3
PNG_SCALE = 2.0
# a frame is a 960 × 540 pt slide: drawn 1,920 × 1,080, a full-HD projector's own pixels
# (its 9 pt labels 18 pixels high); twice that would take twice the time, for no projector
MAX_PNG_SIDE = 1920
# the thumbnail oEmbed names (`/t/{id}.png`): a fixed size, the drawing fitted inside it
THUMBNAIL_SIZE = (640, 400)


class ExportUnavailable(RuntimeError):
    """This machine cannot draw images (no Cairo): the message says what to install."""


@cache
def _cairosvg():
    try:
        import cairosvg
    except (ImportError, OSError) as error:  # cairocffi raises OSError when libcairo is absent
        raise ExportUnavailable(
            "Image exports need the Cairo library, which this server lacks "
            f"(apt-get install libcairo2 fonts-dejavu-core): {error}"
        ) from None
    return cairosvg


def png(svg: str, scale: float = PNG_SCALE) -> bytes:
    """The SVG as a PNG, at `scale` times its CSS pixel size."""
    return _cairosvg().svg2png(bytestring=svg.encode("utf-8"), scale=scale)


def scale_within(width: float, height: float, scale: float, max_side: int) -> float:
    """`scale`, or less if a frame of `width` by `height` points would be drawn with a side
    longer than `max_side` pixels."""
    longest = max(width, height) * PIXELS_PER_POINT * scale
    return scale if longest <= max_side else scale * max_side / longest


def png_fitted(svg: str, svg_width: float, size: tuple[int, int]) -> bytes:
    """The SVG (`svg_width` units wide) as a PNG of exactly `size` pixels, drawn as large as
    fits and centred on white."""
    from PIL import Image

    width, height = size
    drawn = Image.open(io.BytesIO(png(svg, 1.0)))  # its size in pixels at one per unit
    ratio = min(width / drawn.width, height / drawn.height, 4.0) * drawn.width / svg_width
    drawn = Image.open(io.BytesIO(png(svg, ratio))).convert("RGBA")
    drawn.thumbnail(size)
    canvas = Image.new("RGBA", size, "white")
    canvas.alpha_composite(drawn, ((width - drawn.width) // 2, (height - drawn.height) // 2))
    out = io.BytesIO()
    canvas.convert("RGB").save(out, "PNG", optimize=True)
    return out.getvalue()


def pdf_page(svg: str) -> bytes:
    """The SVG as a one-page PDF, its page the SVG's size, its drawing vector."""
    return _cairosvg().svg2pdf(bytestring=svg.encode("utf-8"))
