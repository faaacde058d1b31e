"""What an image export costs to draw, known before its first frame is: past MAX_COST it is a
`BadOption` saying how many steps to ask for instead.

A frame's cost is an estimate of its time, from what the trace's drawing already says: its own
pixels (FRAME_MS: the slide drawn, compressed, read back and, for a GIF, quantised), the
elements its step shows (Cairo walks each one a frame keeps: app/export/frames.py), and the
view's SVG, parsed again for every frame. Measured on this 2-core machine, in CPU time, it came
within a tenth of the real time for the seed, a 500-step loop, mlp-training and a 6,000-event
trace (bench/export_gif.py). The drawing's area does not track it: a layout grows in both
directions at once, so the 6,000-event trace's four times the area of a smaller one took twice
as long.
"""

from __future__ import annotations

from app.export.options import BadOption, StepRange
from app.render.playback import shown_counts

FRAME_MS = {"gif": 110, "zip": 90, "pdf": 25}  # a PDF page has no pixels
ELEMENT_MS = 1.1  # each element the frame shows
SVG_BYTES_PER_MS = 10_000  # the view's SVG, parsed for each frame
# 30 s of CPU here, what MAX_FRAMES steps of a small drawing take as a GIF (the seed's size: 29 s),
# and half the 60 s an export may take (RenderSettings.export_budget_seconds): the rest is for
# the trace's own layout (a second) and a busier machine. mlp-training's 240 steps as a GIF
# (42 s) ask for 148; a 6,000-event trace's densest 32 steps took 31 s of CPU (42 s on the clock
# beside others' work) and peaked at 146 MiB resident, 415 MiB of the worker's 1 GiB address
# space (bench/export_gif.py).
MAX_COST = 30_000  # ms


def check(rendered: dict, view: str, format: str, steps: StepRange) -> None:
    """Refuse an export of `steps` of `view` in `format` that would cost more than MAX_COST."""
    shown = shown_counts(rendered["steps"], view)
    each = FRAME_MS[format] + len(rendered["views"][view]["svg"]) / SVG_BYTES_PER_MS
    costs = [each + ELEMENT_MS * shown[k] for k in steps.indices]
    if sum(costs) <= MAX_COST:
        return
    most = int(MAX_COST // max(costs))  # any range this long costs no more than the cap
    if most == 0:
        raise BadOption(
            f"A step of this trace would take about {max(costs) / 1000:.0f} s to draw as an "
            "image, more than an export is given: the HTML file (export.html) plays every step."
        )
    raise BadOption(
        f"Steps {steps.first} to {steps.last} would take about {sum(costs) / 1000:.0f} s to draw "
        f"as images, more than an export is given: ask for at most {most} steps (from= and to=), "
        "or the HTML file, which plays them all."
    )
