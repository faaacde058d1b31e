"""A GIF is written a frame at a time: it reads back as Pillow reads any animated GIF (a frame
per step, their delays, looping, each frame's picture), and holds one frame whatever their
number."""

from __future__ import annotations

import gc
import io

import pytest
from PIL import Image, ImageChops

from app.export import encode, raster
from app.export.frames import Frame
from app.render.layout import SVG


def _frame(k: int, words: str) -> Frame:
    """A small frame (96 × 54 pt, 192 × 108 pixels in a GIF) with a moving box and words."""
    svg = (
        f'<svg xmlns="{SVG}" width="96pt" height="54pt" viewBox="0 0 96 54">'
        '<rect width="100%" height="100%" fill="#ffffff"/>'
        f'<rect x="{4 + 3 * (k % 20)}" y="6" width="20" height="14" fill="#56B4E9"/>'
        f'<text x="4" y="44" font-size="9" font-family="DejaVu Sans">{words}</text></svg>'
    )
    return Frame(k, svg, 96.0, 54.0)


def _expected(frame: Frame) -> Image.Image:
    """The frame as the GIF should show it: rasterised and quantised as gif_of does."""
    scale = raster.scale_within(frame.width, frame.height, encode.GIF_SCALE, encode.GIF_MAX_SIDE)
    image = Image.open(io.BytesIO(raster.png(frame.svg, scale))).convert("RGB")
    return image.quantize(colors=128, dither=Image.Dither.NONE).convert("RGB")


def test_a_gif_reads_back_frame_by_frame_with_its_delays_looping():
    drawn = [_frame(k, f"step {k + 1}") for k in range(6)]
    drawn.insert(3, drawn[2])  # a step that looks like the one before is a frame of its own
    data = encode.gif_of(iter(drawn), len(drawn))
    gif = Image.open(io.BytesIO(data))
    assert gif.format == "GIF" and gif.n_frames == len(drawn) and gif.info["loop"] == 0
    assert gif.size == (192, 108)
    durations = []
    for k, frame in enumerate(drawn):
        gif.seek(k)
        durations.append(gif.info["duration"])
        assert ImageChops.difference(gif.convert("RGB"), _expected(frame)).getbbox() is None
    assert durations == [encode.GIF_FRAME_MS] * (len(drawn) - 1) + [encode.GIF_LAST_FRAME_MS]


def _most_images_held(count: int) -> int:
    """The most Pillow images alive at once while gif_of encodes `count` frames."""
    most = 0

    def progress(done: int, total: int) -> None:
        nonlocal most
        if done % 10 == 0 or done == total:  # (a count walks every object: not every frame)
            most = max(most, sum(isinstance(o, Image.Image) for o in gc.get_objects()))

    gc.collect()
    encode.gif_of((_frame(k, f"step {k + 1}") for k in range(count)), count, progress)
    return most


@pytest.mark.parametrize("count", [60, 240])
def test_a_gif_holds_one_frame_however_many_it_has(count):
    """Pillow's animated save held every frame until the end: 240 frames of a big trace filled
    a render worker's 1 GiB."""
    assert _most_images_held(count) <= _most_images_held(10)
