"""How fast is a cold `gradtrace export --format html` next to torch + torchviz drawing one
static SVG of the same snippet? Target (issue 11): well under half their time.

    .venv/bin/python bench/export.py [--repeats 7]

Both sides are a fresh process per repeat, timed by the wall clock from start to exit, and
taken in turns (ours, theirs, ours, ...) so the machine's noise falls on both alike:

- ours: `.venv/bin/gradtrace export seed.py --format html -o out.html` (the sandbox started,
  the snippet run in it, the page drawn and written);
- theirs: `.venv-torch/bin/python` running the same snippet on real PyTorch, then torchviz's
  `make_dot` and its DOT source laid out and drawn as SVG by Graphviz (pygraphviz: the same
  `dot` layout as torchviz's `render`, without needing the `dot` binary).

The seed snippet is the site's default example (app/examples.py). Medians, min and max, and
the ratio ours / theirs; machines here are shared and noisy, so read the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.examples import DEFAULT  # noqa: E402

OURS = ROOT / ".venv" / "bin" / "gradtrace"
TORCH_PYTHON = ROOT / ".venv-torch" / "bin" / "python"
TARGET = 0.5

# the snippet on real PyTorch, its graph drawn as one SVG as torchviz users do
THEIRS = """
import sys

import pygraphviz
import torch
import torchviz

exec(compile(open(sys.argv[1]).read(), "seed.py", "exec"))
dot = torchviz.make_dot(d, params={"a": a, "b": b})
pygraphviz.AGraph(string=dot.source).draw(sys.argv[2], format="svg", prog="dot")
"""


def timed(command: list[str], output: Path) -> float:
    output.unlink(missing_ok=True)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0 or not output.exists():
        sys.exit(f"bench/export.py: {command[0]} failed:\n{done.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    repeats = parser.parse_args().repeats
    if not TORCH_PYTHON.exists():
        sys.exit(
            "bench/export.py needs real PyTorch with torchviz in .venv-torch: run `make goldens`, "
            "then `.venv-torch/bin/pip install torchviz pygraphviz`"
        )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        seed = work / "seed.py"
        seed.write_text(DEFAULT.code)
        (work / "theirs.py").write_text(THEIRS)
        html, svg = work / "out.html", work / "out.svg"
        ours_command = [str(OURS), "export", str(seed), "--format", "html", "-o", str(html)]
        theirs_command = [str(TORCH_PYTHON), str(work / "theirs.py"), str(seed), str(svg)]
        ours, theirs = [], []
        for _ in range(repeats):
            ours.append(timed(ours_command, html))
            theirs.append(timed(theirs_command, svg))
    for name, times in (("gradtrace export --format html", ours), ("torch + torchviz SVG", theirs)):
        print(
            f"{name:<32} median {statistics.median(times):6.3f} s  "
            f"min {min(times):6.3f} s  max {max(times):6.3f} s  ({repeats} cold runs)"
        )
    ratio = statistics.median(ours) / statistics.median(theirs)
    verdict = "meets" if ratio < TARGET else "MISSES"
    print(f"ours / theirs: {ratio:.2f} ({verdict} the target of well under {TARGET})")


if __name__ == "__main__":
    main()
