"""Frames into the files a slide deck or a handout takes: a zip of SVG and PNG per step, a PDF
of one page per step, an animated GIF. Libraries do the encoding (zipfile, Cairo and pypdf,
Pillow); this module puts the frames in order, and writes a GIF's container itself.

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
    """An animated GIF, one frame per step, looping.

    Written a frame at a time, holding one frame, whatever the count: Pillow's own animated
    save (save_all) keeps every frame until the end, and a 240-frame export of a big trace
    filled the render worker's 1 GiB. So Pillow encodes each frame alone
    (GifImagePlugin.getdata: the frame's delay, its own palette and its LZW data), and this
    writes the container around them: the header, the loop, the trailer."""
    from PIL import GifImagePlugin, Image, ImageChops

    out = io.BytesIO()
    shown = None  # the picture as the frames so far leave it, RGB
    for done, frame in enumerate(frames, 1):
        scale = raster.scale_within(frame.width, frame.height, GIF_SCALE, GIF_MAX_SIDE)
        image = Image.open(io.BytesIO(raster.png(frame.svg, scale))).convert("RGB")
        # one adaptive palette per frame: the drawing's few colours and the caption's
        quantized = image.quantize(colors=128, dither=Image.Dither.NONE)
        now = quantized.convert("RGB")
        if shown is None:
            out.write(_gif_start(*image.size))
            box = (0, 0, *image.size)
        else:  # only what changed is written, over the frame before (disposal 1: kept)
            box = ImageChops.difference(now, shown).getbbox() or (0, 0, 1, 1)
        shown = now
        duration = GIF_LAST_FRAME_MS if done == total else GIF_FRAME_MS
        for part in GifImagePlugin.getdata(
            quantized.crop(box), box[:2], duration=duration, disposal=1, include_color_table=True
        ):
            out.write(part)
        progress(done, total)
    out.write(b";")  # the trailer
    return out.getvalue()


def _gif_start(width: int, height: int) -> bytes:
    """A GIF89a's header: its size, no global palette (each frame brings its own), and the
    NETSCAPE2.0 extension that loops it forever."""
    screen = width.to_bytes(2, "little") + height.to_bytes(2, "little") + bytes(3)
    loop = b"!\xff\x0bNETSCAPE2.0\x03\x01" + (0).to_bytes(2, "little") + b"\x00"
    return b"GIF89a" + screen + loop
