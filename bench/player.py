"""How heavy is a trace's page, and how fast does the player step? A real server and Chromium.

    .venv/bin/python bench/player.py [--steps 50]

Starts uvicorn (tests/live_server.py) on a free loopback port with a fresh database, stores
three snippets through the API, and opens each one's page `/t/{id}` in Chromium (Playwright, the
build tests/chromium.py names), in a fresh browser context so nothing is cached:

- bytes: what the page cost on the wire (the Resource Timing API's transferSize, headers
  included, and encodedBodySize, the compressed body) next to what it is uncompressed
  (decodedBodySize), per file; then the same after a reload (revalidation: 304s); and for the
  HTML, where its bytes go (the player's JSON, each SVG, the rest), each part gzipped alone;
- step time: from an ArrowRight keydown to the next painted frame (a requestAnimationFrame
  after the DOM update, then a task: what runs after that frame is painted), measured in the
  page with performance.now(), median over --steps steps (back to step 1, unmeasured, at the
  end). The baseline is the same measurement for a key the player ignores (F13): the cost of a
  frame on this machine with no work in it.

Target: the mlp-training page under 250 KB on the wire. Machines here are shared and noisy:
read step times against the baseline of the same run, not as milliseconds.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.examples import BY_SLUG  # noqa: E402
from tests import chromium  # noqa: E402
from tests.live_server import free_port, serving, uvicorn_command  # noqa: E402

# unthrottled frames: a step is timed to its own paint, not to the next 60 Hz tick
UNTHROTTLED = ["--disable-gpu-vsync", "--disable-frame-rate-limit"]
TARGET_BYTES = 250 * 1024

# 248 multiplications: 498 nodes in the tensors view (2 per step, and x and the constant),
# just under the 500 drawn one by one before a graph is stacked
CHAIN = """import torch
x = torch.tensor(1.0, requires_grad=True)
y = x
for _ in range(248):
    y = y * 1.01
y.backward()
print(x.grad.item())
"""
SNIPPETS = {
    "two-paths": BY_SLUG["two-paths"].code,
    "mlp-training": BY_SLUG["mlp-training"].code,
    "chain-500": CHAIN,
}

# the player has painted its first step
PLAYER_READY = "/Step \\d+/.test(document.querySelector('[data-counter]')?.textContent)"

# Every file the page loaded, the page itself first (navigation timing), with its sizes.
SIZES = """
() => [performance.getEntriesByType("navigation")[0], ...performance.getEntriesByType("resource")]
  .map((e) => ({
    name: new URL(e.name).pathname,
    transfer: e.transferSize,
    encoded: e.encodedBodySize,
    decoded: e.decodedBodySize,
  }))
"""

# `n` steps (ArrowRight) and `n` presses of a key the player ignores (F13), taken in turns so
# that the machine's noise falls on both alike, each timed to the frame painted after it.
STEP_TIMES = """
async (n) => {
  const counter = document.querySelector("[data-counter]");
  const where = () =>
    (/(\\d+)\\D+(\\d+)/.exec(counter?.textContent || "") || [0, 0, 0]).slice(1).map(Number);
  const painted = () => new Promise((resolve) => requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = resolve;
    channel.port2.postMessage(0);
  }));
  const press = (k) => document.dispatchEvent(
    new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
  await painted();
  const timed = async (key) => {
    const start = performance.now();
    press(key);
    await painted();
    return performance.now() - start;
  };
  const steps = [];
  const empty = [];
  for (let i = 0; i < n; i++) {
    const [at, of] = where();
    if (at >= of) {
      press("Home");
      await painted();
    }
    empty.push(await timed("F13"));
    steps.push(await timed("ArrowRight"));
  }
  return { steps, empty };
}
"""

# The fold alone (static/fold.js on the page's own steps, every step of every view, with
# checkpoints, as the player does): its mean per step, to tell its share of a step from the
# painting's. A mean of many, as the page's clock is coarsened to 0.1 ms.
FOLD_TIME = """
async () => {
  const { foldView } = await import("/static/fold.js");
  const data = JSON.parse(document.querySelector("script[data-player-data]").textContent);
  const views = Object.keys(data.views);
  const checkpoints = {};
  const start = performance.now();
  for (const view of views) {
    for (let k = 0; k < data.steps.length; k++) foldView(data.steps, view, k, checkpoints);
  }
  return (performance.now() - start) / (data.steps.length * views.length);
}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GRADTRACE_STORE_PATH=str(Path(tmp) / "traces.db"))
        with serving(uvicorn_command(port), port, env=env) as (_, url):
            idents = {name: _store(url, code) for name, code in SNIPPETS.items()}
            with sync_playwright() as playwright:
                browser = chromium.launch(playwright, UNTHROTTLED)
                try:
                    for name, ident in idents.items():
                        _bench_page(browser, url, name, ident, args.steps)
                finally:
                    browser.close()


def _store(url: str, code: str) -> str:
    answer = httpx.post(f"{url}/api/traces", json={"code": code}, timeout=120)
    answer.raise_for_status()
    return answer.json()["id"]


def _bench_page(browser, url: str, name: str, ident: str, steps: int) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{url}/t/{ident}")
    page.wait_for_function(PLAYER_READY)
    cold = page.evaluate(SIZES)
    print(f"\n== {name}  (/t/{ident})")
    _print_sizes("first visit", cold)
    wire = sum(entry["transfer"] for entry in cold)
    verdict = "under" if wire < TARGET_BYTES else "OVER"
    print(f"   on the wire: {wire / 1024:,.1f} KB ({verdict} the {TARGET_BYTES // 1024} KB target)")
    _print_html_parts(url, ident)

    times = page.evaluate(STEP_TIMES, steps)
    moved, floor = _median(times["steps"]), _median(times["empty"])
    fold = page.evaluate(FOLD_TIME)
    print(
        f"   step time (ArrowRight to painted frame, median of {steps}): {moved:.2f} ms; "
        f"an empty frame (baseline): {floor:.2f} ms; ratio {moved / max(floor, 0.01):.1f}; "
        f"of which the fold: {fold:.3f} ms"
    )

    page.reload()
    page.wait_for_function(PLAYER_READY)
    _print_sizes("reload (revalidated)", page.evaluate(SIZES))
    context.close()


def _print_sizes(title: str, entries: list[dict]) -> None:
    print(f"   {title}:")
    # Chromium counts a transfer as the compressed body plus 300 bytes for the headers; a 304
    # is those 300 alone
    print(f"     {'file':<28}{'wire':>10}{'body gz':>10}{'body':>10}")
    for e in entries:
        name = e["name"][:27]
        print(f"     {name:<28}{e['transfer']:>10,}{e['encoded']:>10,}{e['decoded']:>10,}")
    total = {key: sum(e[key] for e in entries) for key in ("transfer", "encoded", "decoded")}
    ratio = total["decoded"] / max(total["encoded"], 1)
    print(
        f"     {'total':<28}{total['transfer']:>10,}{total['encoded']:>10,}{total['decoded']:>10,}"
        f"   (uncompressed / compressed: {ratio:.1f}x)"
    )


def _print_html_parts(url: str, ident: str) -> None:
    """Where the HTML's bytes go: each part's size alone and gzipped alone (level 6, as
    served), so the parts' compressed sizes add up to roughly the page's."""
    html = httpx.get(f"{url}/t/{ident}", headers={"Accept-Encoding": "identity"}).text
    data = re.search(r"<script[^>]*data-player-data[^>]*>(.*?)</script>", html, re.S)
    svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
    parts = {"player data (JSON)": data.group(1) if data else ""}
    for i, svg in enumerate(svgs, 1):
        parts[f"svg {i}"] = svg
    rest = html
    for text in parts.values():
        rest = rest.replace(text, "", 1) if text else rest
    parts["the rest of the HTML"] = rest
    print("   the HTML, by part:  size / gzipped")
    for label, text in parts.items():
        raw = text.encode()
        print(f"     {label:<26}{len(raw):>10,}{len(gzip.compress(raw, 6)):>10,}")


def _median(times: list[float]) -> float:
    return statistics.median(times)


if __name__ == "__main__":
    main()
