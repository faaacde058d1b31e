"""How much memory and time does a GIF of a big trace take? Issue 21: 240 frames of a
6,000-event trace filled a render worker's 1 GiB, because every frame was held to the end.

    .venv/bin/python bench/export_gif.py [--frames 240]

The trace: 60 scalar weights summed as squares, 20 passes of backward() (6,080 events, 918
steps; its tensors view is 7,452 × 10,343 pt, up to 673 elements shown in a step). Each run is a
fresh process, which reports its wall time and its peak memory (VmHWM, resident, and VmPeak,
the address space a worker's RLIMIT_AS caps):

- pillow: its first --frames steps through Pillow's animated save (save_all with
  append_images), as app/export/encode.gif_of did before: every frame held to the end;
- streamed: the same frames through today's gif_of, one frame held at a time;
- allowed: the longest range the refusal of those steps asks for, taken at their end (the
  densest steps), as the server makes it (app/export/make.export: the trace drawn, the cost
  checked, then the frames): the largest export app/export/cost.py allows of this trace.

It also prints the CPU time per frame of a small and a big drawing, the two numbers
app/export/cost.py is built on. Machines here are shared and noisy: read orders of magnitude.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BIG = """import torch
ws = [torch.tensor(float(i), requires_grad=True) for i in range(60)]
for step in range(20):
    total = ws[0] * 0.5
    for w in ws[1:]:
        total = total + w * w
    total.backward()
"""


def _peaks() -> dict[str, float]:
    status = Path("/proc/self/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {key: int(fields[key].split()[0]) / 1024 for key in ("VmHWM", "VmPeak")}  # MiB


def _pillow_gif(frames, total: int) -> bytes:
    """gif_of as it was: every quantised frame kept, then Pillow's save_all."""
    from PIL import Image

    from app.export import encode, raster

    images = []
    for frame in frames:
        scale = raster.scale_within(
            frame.width, frame.height, encode.GIF_SCALE, encode.GIF_MAX_SIDE
        )
        image = Image.open(io.BytesIO(raster.png(frame.svg, scale))).convert("RGB")
        images.append(image.quantize(colors=128, dither=Image.Dither.NONE))
    durations = [encode.GIF_FRAME_MS] * (len(images) - 1) + [encode.GIF_LAST_FRAME_MS]
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


def child(kind: str, count: int) -> dict:
    from app.export import cost, encode
    from app.export.frames import frames
    from app.export.make import export
    from app.export.options import BadOption, ExportRequest, StepRange
    from app.render import render
    from engine.tracer import trace_snippet

    trace = trace_snippet(BIG)
    start = time.perf_counter()
    if kind == "allowed":  # the range the refusal of steps 1 to `count` asks for, at its end
        rendered = render(trace)
        asked = StepRange.of(len(rendered["steps"]), 1, count)
        try:
            cost.check(rendered, "tensors", "gif", asked)
        except BadOption as refused:
            count = int(re.search(r"at most (\d+) steps", str(refused))[1])
        start = time.perf_counter()
        wanted = ExportRequest.checked("gif", first=asked.last - count + 1, last=asked.last)
        data = export(trace, "bench", wanted)
    else:
        rendered = render(trace)
        drawn = frames(rendered, "tensors", StepRange.of(len(rendered["steps"]), 1, count))
        data = _pillow_gif(drawn, count) if kind == "pillow" else encode.gif_of(drawn, count)
    return {"frames": count, "seconds": time.perf_counter() - start, "bytes": len(data), **_peaks()}


def per_frame_cpu() -> list[str]:
    """CPU seconds per GIF frame, for a small drawing and for the big one."""
    from app.examples import DEFAULT
    from app.export import encode
    from app.export.frames import frames
    from app.export.options import StepRange
    from app.render import render
    from app.render.playback import shown_counts
    from engine.tracer import trace_snippet

    lines = []
    for name, code in (("seed", DEFAULT.code), ("6,000 events", BIG)):
        rendered = render(trace_snippet(code))
        total = len(rendered["steps"])
        steps = StepRange.of(total, max(1, total - 9), total)
        drawn = list(frames(rendered, "tensors", steps))
        start = time.process_time()
        encode.gif_of(drawn, len(drawn))
        seconds = (time.process_time() - start) / len(drawn)
        shown = shown_counts(rendered["steps"], "tensors")
        elements = sum(shown[k] for k in steps.indices) / len(steps)
        lines.append(f"{name:>12}: {seconds * 1000:4.0f} ms CPU a frame, {elements:4.0f} elements")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=240)
    parser.add_argument("--child", choices=["pillow", "streamed", "allowed"])
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.frames)))
        return
    for kind in ("pillow", "streamed", "allowed"):
        done = subprocess.run(
            [sys.executable, __file__, "--child", kind, "--frames", str(args.frames)],
            capture_output=True,
            text=True,
            check=True,
        )
        got = json.loads(done.stdout.splitlines()[-1])
        print(
            f"{kind:>9}: {got['frames']:3d} frames in {got['seconds']:6.1f} s, "
            f"{got['bytes'] / 1e6:5.1f} MB; peak {got['VmHWM']:6.0f} MiB resident, "
            f"{got['VmPeak']:6.0f} MiB address space"
        )
    print(*per_frame_cpu(), sep="\n")


if __name__ == "__main__":
    main()
