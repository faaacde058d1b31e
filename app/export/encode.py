"""Frames into the files a slide deck or a handout takes: a zip of SVG and PNG per step, a PDF
of one page per step, an animated GIF. Libraries do the encoding (zipfile, Cairo and pypdf,
Pillow); this module only puts the frames in order.

Each takes the frames as an iterable and `progress(done, total)`, called after each frame, so
the command line can show a long export moving.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterable

from app.export import raster
from app.export.frames import Frame

Progress = Callable[[int, int], None]

# a GIF frame holds its step this long: time to read the caption (the player's 1x is 1.2 s,
# but a slide's viewer cannot pause it); the last frame a little longer before it loops
GIF_FRAME_MS = 2500
GIF_LAST_FRAME_MS = 5000
GIF_SCALE = 1.5  # of raster's 4/3 pixels per point, up to GIF_MAX_SIDE
# pixels: a GIF's frames are whole pictures, each with its own palette; a 960 × 540 pt slide
# is drawn 1,280 × 720 (its 9 pt labels 12 pixels high), a few hundred KB a trace
GIF_MAX_SIDE = 1280
# zip entries carry this date, so the same trace exports to the same bytes
ZIP_DATE = (2020, 1, 1, 0, 0, 0)


def _quiet(done: int, total: int) -> None:
    pass


def zip_of(frames: Iterable[Frame], total: int, steps_text: str, progress: Progress = _quiet):
    """`step-001.svg`, `step-001.png`, ... and `steps.txt` (each step's narration)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for done, frame in enumerate(frames, 1):
            name = f"step-{frame.index + 1:03d}"
            archive.writestr(zipfile.ZipInfo(f"{name}.svg", ZIP_DATE), frame.svg)
            # PNGs are compressed already: stored, not deflated again
            info = zipfile.ZipInfo(f"{name}.png", ZIP_DATE)
            scale = raster.scale_within(
                frame.width, frame.height, raster.PNG_SCALE, raster.MAX_PNG_SIDE
            )
            archive.writestr(info, raster.png(frame.svg, scale), zipfile.ZIP_STORED)
            progress(done, total)
        archive.writestr(zipfile.ZipInfo("steps.txt", ZIP_DATE), steps_text)
    return out.getvalue()


def pdf_of(frames: Iterable[Frame], total: int, title: str, progress: Progress = _quiet):
    """One page per frame, each the frame's size, its drawing vector (text stays text)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for done, frame in enumerate(frames, 1):
        writer.append(PdfReader(io.BytesIO(raster.pdf_page(frame.svg))))
        progress(done, total)
    writer.add_metadata({"/Title": title, "/Creator": "gradtrace"})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def gif_of(frames: Iterable[Frame], total: int, progress: Progress = _quiet) -> bytes:
    """An animated GIF, one frame per step, looping."""
    from PIL import Image

    images = []
    for done, frame in enumerate(frames, 1):
        scale = raster.scale_within(frame.width, frame.height, GIF_SCALE, GIF_MAX_SIDE)
        image = Image.open(io.BytesIO(raster.png(frame.svg, scale))).convert("RGB")
        # one adaptive palette per frame: the drawing's few colours and the caption's
        images.append(image.quantize(colors=128, dither=Image.Dither.NONE))
        progress(done, total)
    durations = [GIF_FRAME_MS] * (len(images) - 1) + [GIF_LAST_FRAME_MS]
    out = io.BytesIO()
    images[0].save(
        out,
        "GIF",
        save_all=True,
        append_images=images[1:],
        duration=durations,
        loop=0,
        optimize=False,
        disposal=1,
    )
    return out.getvalue()
