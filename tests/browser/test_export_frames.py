"""Image exports are the live player's steps: a frame shows what the player shows at its step,
Cairo draws a frame as Chromium draws the same SVG, and the served files hold a frame or a page
per step (of the whole trace, or of a range).

The trace is stored through the API of a real server (the `server_url` fixture); its frames
are drawn in-process from the trace the server answered, and the files are fetched from
`/t/{id}/export.*`.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
import zipfile

import httpx
import pytest
from PIL import Image, ImageChops, ImageStat
from playwright.sync_api import expect
from pypdf import PdfReader

from app.examples import DEFAULT
from app.export import raster
from app.export.frames import frames
from app.export.options import StepRange
from app.render import render
from app.render.layout import SVG

VIEWS = ("tensors", "autograd")
# Cairo and Chromium antialias and hint text each their own way: the same drawing differs by a
# few levels on average (1 to 4 here); a different step is also checked to be farther away
MEAN_DIFFERENCE = 8.0

# The live player's view at this step: each shown node and edge, and its value and grad texts.
LIVE_STATE = """
(view) => {
  const svg = document.querySelector(`figure[data-view="${view}"] svg`);
  const shown = svg.querySelectorAll("g.node[id]:not(.hidden), g.edge[id]:not(.hidden)");
  return Object.fromEntries([...shown].map((el) => [
    el.id,
    [...el.querySelectorAll("text.value, text.grad")].map((t) => [t.classList[0], t.textContent]),
  ]));
}
"""


@pytest.fixture(scope="module")
def stored(server_url):
    """The default example stored on the server: its id and the trace the server keeps."""
    answer = httpx.post(f"{server_url}/api/traces", json={"code": DEFAULT.code}, timeout=120)
    answer.raise_for_status()
    return answer.json()["id"], answer.json()["trace"]


@pytest.fixture(scope="module")
def rendered(stored):
    return render(stored[1])


def chosen_steps(rendered: dict) -> dict[str, int]:
    """The first step, the first of the backward pass and the last (0-based)."""
    steps = rendered["steps"]
    backward = next(k for k, step in enumerate(steps) if step["phase"] == "backward")
    return {"first": 0, "backward": backward, "last": len(steps) - 1}


def frame_state(svg: str) -> dict[str, list[list[str]]]:
    """What a frame shows, read as LIVE_STATE reads the page: each node and edge not hidden,
    with its value and grad texts in document order."""
    shown = {}
    for group in ET.fromstring(svg).iter(f"{{{SVG}}}g"):
        classes = (group.get("class") or "").split()
        if group.get("id") is None or not {"node", "edge"} & set(classes) or "hidden" in classes:
            continue
        texts = []
        for text in group.iter(f"{{{SVG}}}text"):
            kind = (text.get("class") or "").split()
            if kind and kind[0] in ("value", "grad"):
                texts.append([kind[0], "".join(text.itertext())])
        shown[group.get("id")] = texts
    return shown


@pytest.mark.parametrize("view", VIEWS)
def test_a_frame_shows_what_the_live_player_shows_at_its_step(
    page, server_url, stored, rendered, view
):
    ident, _ = stored
    total = len(rendered["steps"])
    drawn = list(frames(rendered, view, StepRange.of(total)))
    shown = {}
    for name, k in chosen_steps(rendered).items():
        page.goto(f"{server_url}/t/{ident}#step={k + 1}")
        expect(page.locator("[data-counter]")).to_have_text(f"Step {k + 1} of {total}")
        page.get_by_role("radio", name=view).check()
        live = page.evaluate(LIVE_STATE, view)
        assert frame_state(drawn[k].svg) == live, f"{view} at step {k + 1} ({name})"
        shown[name] = live
    # at the last step the whole graph is drawn: the comparison is not of two empty views
    assert shown["last"] and len(shown["last"]) > len(shown["first"])


def chromium_picture(page, svg: str, size: tuple[int, int]) -> Image.Image:
    """The SVG as Chromium draws it, at `size` pixels."""
    page.set_viewport_size({"width": size[0] + 40, "height": size[1] + 40})
    page.set_content(f"<!doctype html><body style='margin:0'>{svg}</body>")
    picture = page.locator("body > svg").screenshot()
    return Image.open(io.BytesIO(picture)).convert("RGB").resize(size, Image.Resampling.LANCZOS)


def mean_difference(one: Image.Image, other: Image.Image) -> float:
    """Mean absolute difference per channel, 0 to 255."""
    return sum(ImageStat.Stat(ImageChops.difference(one, other)).mean) / 3


@pytest.mark.parametrize("view", VIEWS)
def test_cairo_draws_a_frame_as_chromium_draws_it(page, rendered, view):
    total = len(rendered["steps"])
    drawn = list(frames(rendered, view, StepRange.of(total)))
    steps = chosen_steps(rendered)
    # Chromium draws at one CSS pixel per SVG pixel (4/3 of a point), Cairo at PNG_SCALE
    # pixels per point: both are brought to the size Chromium drew
    size = (round(drawn[0].width * 4 / 3), round(drawn[0].height * 4 / 3))
    cairo, chromium = {}, {}
    for k in steps.values():
        png = Image.open(io.BytesIO(raster.png(drawn[k].svg))).convert("RGB")
        cairo[k] = png.resize(size, Image.Resampling.LANCZOS)
        chromium[k] = chromium_picture(page, drawn[k].svg, size)
    for name, k in steps.items():
        differences = {other: mean_difference(cairo[k], chromium[other]) for other in chromium}
        same = differences[k]
        assert same < MEAN_DIFFERENCE, f"{view} step {k + 1} ({name}): {same:.1f}"
        # and the bound is no blur: Cairo's step is nearer Chromium's same step than any other
        nearest = min(differences, key=differences.get)
        assert nearest == k, f"{view} step {k + 1} ({name}) is nearest step {nearest + 1}"


def fetched(server_url: str, ident: str, format: str, query: str = "") -> bytes:
    answer = httpx.get(f"{server_url}/t/{ident}/export.{format}{query}", timeout=120)
    assert answer.status_code == 200, answer.text
    return answer.content


@pytest.mark.parametrize(("query", "first", "last"), [("", None, None), ("?from=2&to=4", 2, 4)])
def test_frames_and_pages_are_one_per_step(server_url, stored, rendered, query, first, last):
    ident, _ = stored
    total = len(rendered["steps"])
    steps = StepRange.of(total, first, last)
    assert len(steps) == (total if first is None else 3)

    gif = Image.open(io.BytesIO(fetched(server_url, ident, "gif", query)))
    assert gif.format == "GIF"
    assert gif.n_frames == len(steps)

    pdf = PdfReader(io.BytesIO(fetched(server_url, ident, "pdf", query)))
    assert len(pdf.pages) == len(steps)

    archive = zipfile.ZipFile(io.BytesIO(fetched(server_url, ident, "zip", query)))
    names = archive.namelist()
    expected = [f"step-{k + 1:03d}.{kind}" for k in steps.indices for kind in ("svg", "png")]
    assert sorted(n for n in names if re.fullmatch(r"step-\d{3}\.(svg|png)", n)) == sorted(expected)
    for k in steps.indices:
        png = archive.read(f"step-{k + 1:03d}.png")
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        assert Image.open(io.BytesIO(png)).size[0] > 0
        ET.fromstring(archive.read(f"step-{k + 1:03d}.svg"))  # each SVG is well-formed
