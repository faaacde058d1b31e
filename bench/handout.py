"""How long does a trace page take to print its handout? A real server and Chromium.

    .venv/bin/python bench/handout.py [--runs 3]

Starts uvicorn (tests/live_server.py) on a free loopback port with a fresh database (and a
drawing budget of 60 s, so a loaded machine still draws the big one), stores the snippets below
and opens each one's page `/t/{id}` in Chromium, a fresh page each run:

- build: static/handout.js's buildHandout on the live player, timed in the page (what runs in
  `beforeprint`, before the browser lays the pages out); the median of --runs;
- print: Chromium's whole PDF print of the page (Playwright's page.pdf(): beforeprint, the
  handout, layout, the PDF), timed from Python, and the number of pages it gave.

Snippets: the biggest example (mlp-training: 404 steps, 20 passes, a 636 KB drawing) and a
loop of 100 backward() calls (501 steps, 100 passes): both print their first and last pass
step by step and each pass between as one block (docs/render.md, "Printing a handout"). Machines
here are shared and noisy: read the numbers as orders of magnitude.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.examples import BY_SLUG  # noqa: E402
from tests import chromium  # noqa: E402
from tests.live_server import free_port, serving, uvicorn_command  # noqa: E402

LOOP_500 = """import torch
w = torch.tensor(1.0, requires_grad=True)
for i in range(100):
    y = w * 2.0
    y.backward()
"""
SNIPPETS = {"mlp-training": BY_SLUG["mlp-training"].code, "loop-500": LOOP_500}
PLAYER_READY = "/Step \\d+/.test(document.querySelector('[data-counter]')?.textContent)"
BUILD = """
async () => {
  const { buildHandout } = await import("/static/handout.js");
  const player = document.querySelector("grad-player");
  const start = performance.now();
  const section = buildHandout(player);
  return { ms: performance.now() - start, blocks: section.querySelectorAll(".handout-step").length,
           steps: player.steps.length };
}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(
            os.environ,
            GRADTRACE_STORE_PATH=str(Path(tmp) / "traces.db"),
            GRADTRACE_RENDER_BUDGET_SECONDS="60",
        )
        with (
            serving(uvicorn_command(port), port, env=env) as (_, url),
            sync_playwright() as playwright,
        ):
            browser = chromium.launch(playwright)
            try:
                for name, code in SNIPPETS.items():
                    _bench(browser, f"{url}/t/{_store(url, code)}", name, args.runs)
            finally:
                browser.close()


def _store(url: str, code: str) -> str:
    answer = httpx.post(f"{url}/api/traces", json={"code": code}, timeout=120)
    answer.raise_for_status()
    return answer.json()["id"]


def _open(browser, address: str):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(address, timeout=120_000)
    page.wait_for_function(PLAYER_READY, timeout=120_000)
    return page


def _bench(browser, address: str, name: str, runs: int) -> None:
    builds, prints = [], []
    for _ in range(runs):
        page = _open(browser, address)
        built = page.evaluate(BUILD)
        builds.append(built["ms"])
        page.close()
        page = _open(browser, address)
        start = time.perf_counter()
        pdf = page.pdf()
        prints.append(time.perf_counter() - start)
        pages = len(PdfReader(io.BytesIO(pdf)).pages)
        page.close()
    print(
        f"{name}: {built['steps']} steps, {built['blocks']} in the handout; "
        f"build {statistics.median(builds):.0f} ms, whole PDF print "
        f"{statistics.median(prints):.1f} s ({pages} pages; median of {runs})"
    )


if __name__ == "__main__":
    main()
