"""How soon does a live edit show? From the end of the pause in typing to the updated picture.

    .venv/bin/python bench/live.py [--edits 20]

Starts uvicorn (tests/live_server.py) on a free loopback port with a fresh database and opens
the playground in Chromium (Playwright, the build tests/chromium.py names). For the seed snippet
(the playground's default example) and the 20-pass MLP example, it makes `--edits` edits, each
a number changed to a value not used before (so no run, page or drawing is cached), and reads
static/live.js's own measure `gradtrace:live`: from the moment the debounce fires (the end of
the pause) to the new player connected and painted at the restored step. Each edit's time is
split with the request's Resource Timing: the round trip of POST /live, within it the server's
`Server-Timing` (the sandbox run, the drawing), and the rest in the page (parse, swap, the new
player's first paint).

Baseline, in the same run and taken in turns with the edits so that the machine's noise falls
on both alike: the Run round trip of the same snippet, also with a new value each time (click
to the new player painted: run, store, draw, swap). Read the ratio, not the milliseconds: the
machines here are shared and noisy.

Targets: seed p50 <= 100 ms, MLP p50 <= 400 ms; and typing steadily for 10 s (a key every
120 ms, in four bursts with a pause after each) sends at most one run per pause, none mid-burst.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.examples import BY_SLUG  # noqa: E402
from tests import chromium  # noqa: E402
from tests.live_server import free_port, serving, uvicorn_command  # noqa: E402

# unthrottled frames: an update is timed to its own paint, not to the next 60 Hz tick
UNTHROTTLED = ["--disable-gpu-vsync", "--disable-frame-rate-limit"]
# each snippet, the number an edit changes (its first occurrence), and its target p50 in ms
CASES = {
    "seed (two-paths)": ("two-paths", "torch.tensor(4.0", 100.0),
    "mlp-training (20 passes)": ("mlp-training", "lr=0.1", 400.0),
}

# An edit as the editor makes it: the textarea's new value and its input event (what
# static/editor.js sends for each CodeMirror change), then the page's own measure of it.
LIVE_EDIT = """
async (code) => {
  const shown = new Promise((resolve) =>
    document.addEventListener("grad-live-shown", (e) => resolve(e.detail), { once: true }));
  const textarea = document.querySelector("[data-run-form] textarea");
  textarea.value = code;
  textarea.dispatchEvent(new Event("input", { bubbles: true }));
  const { duration } = await shown;
  const request = performance.getEntriesByType("resource")
    .filter((e) => new URL(e.name).pathname === "/live").at(-1);
  const server = Object.fromEntries(request.serverTiming.map((t) => [t.name, t.duration]));
  return {
    total: duration,
    request: request.responseEnd - request.startTime,
    run: server.run ?? NaN,
    draw: server.draw ?? NaN,
  };
}
"""

# Run, pressed with the same kind of new code: click to the new player painted.
RUN_ROUND_TRIP = """
async (code) => {
  const painted = () =>
    new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  const form = document.querySelector("[data-run-form]");
  const swapped = new Promise((resolve) =>
    document.addEventListener("htmx:afterSettle", resolve, { once: true }));
  form.querySelector("textarea").value = code;
  const start = performance.now();
  form.requestSubmit();
  await swapped;
  await painted();
  return performance.now() - start;
}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20)
    args = parser.parse_args()
    port = free_port()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GRADTRACE_STORE_PATH=str(Path(tmp) / "traces.db"))
        with (
            serving(uvicorn_command(port), port, env=env) as (_, url),
            sync_playwright() as playwright,
        ):
            browser = chromium.launch(playwright, UNTHROTTLED)
            try:
                for name, (slug, number, target) in CASES.items():
                    rows.append((name, target, _bench(browser, url, slug, number, args.edits)))
                steady = _steady_typing(browser, url)
            finally:
                browser.close()
    _report(rows, args.edits)
    _report_steady(steady)


def _variants(code: str, number: str, count: int, offset: int) -> list[str]:
    """`count` versions of `code`, each with `number` nudged to a value no other one has."""
    head, value = number.rsplit("(" if "(" in number else "=", 1)
    joint = "(" if "(" in number else "="
    assert number in code, number
    return [
        code.replace(number, f"{head}{joint}{float(value) + (offset + i + 1) * 1e-4:.4f}", 1)
        for i in range(count)
    ]


def _bench(browser, url: str, slug: str, number: str, edits: int) -> dict[str, list[float]]:
    context = browser.new_context(viewport={"width": 1600, "height": 900})
    page = context.new_page()
    page.goto(f"{url}/?example={slug}")
    page.wait_for_selector("[data-live-toggle]:not([hidden])")
    code = BY_SLUG[slug].code
    live = _variants(code, number, edits + 1, 0)
    runs = _variants(code, number, edits + 1, 5000)
    page.evaluate(LIVE_EDIT, live[0])  # warm: the first run of a page loads what it needs
    page.evaluate(RUN_ROUND_TRIP, runs[0])
    times: dict[str, list[float]] = {"total": [], "request": [], "run": [], "draw": [], "Run": []}
    for edit, pressed in zip(live[1:], runs[1:], strict=True):
        measured = page.evaluate(LIVE_EDIT, edit)
        for key in ("total", "request", "run", "draw"):
            times[key].append(measured[key])
        times["Run"].append(page.evaluate(RUN_ROUND_TRIP, pressed))
    context.close()
    return times


# Steady typing: TYPING_SECONDS of keys, KEY_MS apart (a fast typist's pace, under the 300 ms
# pause), broken by PAUSES pauses of PAUSE_MS: a run may go out only in a pause (no key for
# 300 ms: the debounce's), and at most one in each.
TYPING_SECONDS = 10.0
KEY_MS = 120
PAUSES = 3
PAUSE_MS = 800
DEBOUNCE_MS = 300  # static/live.js's PAUSE_MS
KEYS_AND_RUNS = """
() => ({
  keys: window.benchKeys,
  runs: performance.getEntriesByType("resource")
    .filter((e) => new URL(e.name).pathname === "/live").map((e) => e.startTime),
})
"""


def _steady_typing(browser, url: str) -> dict:
    """Type into the real editor (CodeMirror) for TYPING_SECONDS in PAUSES + 1 bursts, and
    check every live run sent against the keys' own times, as the page saw them (a loaded
    machine may stall the typing itself: such a stall is a pause too)."""
    context = browser.new_context(viewport={"width": 1600, "height": 900})
    page = context.new_page()
    page.add_init_script(
        "window.benchKeys = [];"
        "document.addEventListener('keydown', () => benchKeys.push(performance.now()), true)"
    )
    page.goto(f"{url}/?example=two-paths")
    page.locator(".cm-content[contenteditable=true]").click()  # once CodeMirror has mounted
    page.keyboard.press("ControlOrMeta+End")
    burst_ms = TYPING_SECONDS * 1000 / (PAUSES + 1)
    for burst in range(PAUSES + 1):
        started = now = page.evaluate("performance.now()")
        page.keyboard.type(f"\n# burst {burst} ", delay=KEY_MS)
        while now - started < burst_ms:
            page.keyboard.type("xxxx", delay=KEY_MS)
            now = page.evaluate("performance.now()")
        page.wait_for_timeout(PAUSE_MS)
    seen = page.evaluate(KEYS_AND_RUNS)
    context.close()
    keys, runs = seen["keys"], seen["runs"]
    # the pauses: each gap of DEBOUNCE_MS or more after a key (the last key's included)
    after = [*keys[1:], float("inf")]
    pauses = [(k, n) for k, n in zip(keys, after, strict=True) if n - k >= DEBOUNCE_MS]
    per_pause = [sum(1 for t in runs if k < t < n) for k, n in pauses]
    while_typing = len(runs) - sum(per_pause)
    gaps = [b - a for a, b in itertools.pairwise(keys)]
    return {
        "typed": (keys[-1] - keys[0]) / 1000,
        "keys": len(keys),
        "pauses": len(pauses),
        "sent": len(runs),
        "most_in_a_pause": max(per_pause, default=0),
        "while_typing": while_typing,
        "typical_gap": statistics.median(gaps),
    }


def _report_steady(steady: dict) -> None:
    ok = steady["most_in_a_pause"] <= 1 and steady["while_typing"] == 0
    print(
        f"\nSteady typing: {steady['keys']} keys over {steady['typed']:.1f} s (median gap "
        f"{steady['typical_gap']:.0f} ms), {steady['pauses']} pauses of {DEBOUNCE_MS} ms or "
        f"more: {steady['sent']} live runs sent, at most {steady['most_in_a_pause']} in a "
        f"pause, {steady['while_typing']} while typing "
        f"({'ok: at most one per pause' if ok else 'MISS'})"
    )


def _pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _report(rows, edits: int) -> None:
    print(f"\nLive edit: end of the pause to the updated picture ({edits} edits each), in ms")
    header = f"{'snippet':<28}{'p50':>8}{'p90':>8}{'target':>8}{'':>6}"
    header += f"{'request':>9}{'run':>7}{'draw':>7}{'page':>7}{'Run p50':>9}{'ratio':>7}"
    print(header)
    for name, target, t in rows:
        p50, p90 = _pct(t["total"], 50), _pct(t["total"], 90)
        request = statistics.median(t["request"])
        page = statistics.median([a - b for a, b in zip(t["total"], t["request"], strict=True)])
        run_p50 = _pct(t["Run"], 50)
        verdict = "ok" if p50 <= target else "MISS"
        print(
            f"{name:<28}{p50:>8.1f}{p90:>8.1f}{target:>8.0f}{verdict:>6}"
            f"{request:>9.1f}{statistics.median(t['run']):>7.1f}"
            f"{statistics.median(t['draw']):>7.1f}{page:>7.1f}{run_p50:>9.1f}"
            f"{p50 / run_p50:>7.2f}"
        )
    print(
        "request: POST /live's round trip (median); run, draw: the server's share of it "
        "(Server-Timing); page: the rest (parse, swap, first paint). Run p50: the Run round "
        "trip of the same snippet with new code, taken in turns with the edits; ratio: live "
        "p50 / Run p50."
    )


if __name__ == "__main__":
    main()
