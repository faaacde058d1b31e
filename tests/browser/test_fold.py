"""static/fold.js folds steps the way app/render/playback does, on every snippet we know.

Each trace is recorded and rendered in-process (tests/corpus.py, shared with the other layers);
Chromium imports /static/fold.js from the live server and folds every step of both views; the
result must equal `playback.state_at` (visible set, values, grads, marks, focus), and the state
classes `elementClasses` gives must equal the ones `playback.still` writes into the SVG
(`playback.element_classes`). The
snippets go to the browser in batches, many traces to one `evaluate`, and a batch's failure
names each snippet that differed.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app.examples import EXAMPLES
from app.render import playback, render
from app.render.layout import SVG
from engine.tracer import trace_snippet
from tests import corpus

TESTS = Path(__file__).resolve().parents[1]
NARRATION = json.loads((TESTS / "app" / "render" / "golden" / "narration.json").read_text())
TRUNCATED = next(s for s in NARRATION["snippets"] if s["slug"] == "truncated")
VIEWS = ("tensors", "autograd")
# the classes of every element at every step make a big answer for a long trace: it has them
# checked on this many steps, spread out, plus every error step
MAX_STILLS = 48
BATCHES = 16  # many traces per evaluate; enough batches to spread over the xdist workers


def _cases() -> list[tuple[str, str, dict]]:
    """(name, source, options) of every golden snippet but the long ones, every example, a
    truncated trace and a run a sandbox limit ended."""
    cases = [(slug, source, {}) for slug, source in corpus.STEPWISE_SOURCES.items()]
    cases.append(("truncated-at-8-events", TRUNCATED["source"], {"max_events": 8}))
    cases.append(("cpu-limit", EXAMPLES[0].code, {"outcome": "cpu_limit"}))
    return cases


CASES = _cases()


def _rendered(source: str, options: dict) -> dict:
    options = dict(options)
    outcome = options.pop("outcome", None)
    if not outcome:
        return corpus.rendered(source, **options)
    trace = dict(trace_snippet(source, **options))
    # how a sandbox limit ends a trace (app/sandbox sets it; here by hand)
    trace["outcome"] = {"status": outcome, "message": "Stopped after 5 s of CPU time."}
    return render(trace)


# One evaluate per batch of traces, sent and answered as JSON text. Per trace, every step of
# every view, folded in a jumping order (first, last, second, second to last, ...) with one
# checkpoints object, so checkpoints are both made and reused. `breakage` swaps in a
# deliberately wrong fold, to show this test can fail.
FOLD_EVERY_STEP = """
async (batch) => {
const real = await import("/static/fold.js");
return JSON.stringify(JSON.parse(batch).map(([steps, views, classSteps, breakage]) => {
  let foldView = real.foldView;
  let elementClasses = real.elementClasses;
  if (breakage === "step-behind") {
    foldView = (s, v, k, c) => real.foldView(s, v, Math.max(k - 1, 0), c);
  } else if (breakage === "ignores-hide") {
    const unhidden = steps.map((step) => Object.fromEntries(Object.entries(step).map(
      ([key, delta]) => [key, delta && typeof delta === "object" ? { ...delta, hide: [] } : delta],
    )));
    foldView = (s, v, k, c) => real.foldView(unhidden, v, k, c);
  } else if (breakage === "error-is-focus") {
    elementClasses = (state, id, phase) => real.elementClasses(state, id, "forward");
  }
  const n = steps.length;
  const order = [];
  for (let lo = 0, hi = n - 1; lo <= hi; lo++, hi--) order.push(...(lo === hi ? [lo] : [lo, hi]));
  const sorted = (items) => [...items].sort();
  const out = {};
  for (const [view, ids] of Object.entries(views)) {
    const checkpoints = {};
    const folded = new Array(n);
    const wanted = new Set(classSteps);
    for (const k of order) {
      const state = foldView(steps, view, k, checkpoints);
      const entry = {
        visible: sorted(state.visible),
        values: Object.fromEntries(state.values),
        grads: Object.fromEntries(state.grads),
        marks: Object.fromEntries(state.marks),
        focus: sorted(state.focus),
      };
      if (wanted.has(k)) {
        entry.classes = {};
        for (const id of ids) {
          const classes = elementClasses(state, id, steps[k].phase);
          if (classes.length) entry.classes[id] = classes;
        }
      }
      folded[k] = entry;
    }
    out[view] = folded;
  }
  return out;
}));
}
"""


@pytest.fixture(scope="module")
def fold_page(browser, server_url):
    """One page of the live server for the whole module (a page per trace would be 390), which
    fails every later test once any JavaScript error is seen."""
    context = browser.new_context()
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    # a bare JSON document has no <link rel=icon>: Chromium's own /favicon.ico try is no error
    page.route("**/favicon.ico", lambda route: route.fulfill(status=204))
    page.goto(server_url + "/healthz")
    page.problems = problems
    yield page
    context.close()


def _drawn(svg: str) -> list[tuple[str, list[str]]]:
    """(id, classes) of every node and edge group, the elements the state classes go on."""
    ns = f"{{{SVG}}}"
    out = []
    for group in ET.fromstring(svg).iter(f"{ns}g"):
        classes = (group.get("class") or "").split()
        if group.get("id") is not None and {"node", "edge"} & set(classes):
            out.append((group.get("id"), classes))
    return out


def _class_steps(steps: list[dict]) -> list[int]:
    n = len(steps)
    if n <= MAX_STILLS:
        return list(range(n))
    spread = {round(i * (n - 1) / (MAX_STILLS - 1)) for i in range(MAX_STILLS)}
    return sorted(spread | {k for k, step in enumerate(steps) if step["phase"] == "error"})


def _expected_classes(state: playback.State, phase: str, ids: list[str]) -> dict[str, list[str]]:
    """The classes playback.still adds to each element at a step (after the drawn ones)."""
    added = {}
    for gid in ids:
        if extra := playback.element_classes(state, gid, phase):
            added[gid] = extra
    return added


def differences(rendered: dict, folded: dict, class_steps: list[int]) -> list[str]:
    """Where the browser's fold differs from playback's: the first few, as readable lines."""
    steps = rendered["steps"]
    found: list[str] = []
    for view in VIEWS:
        ids = [gid for gid, _ in _drawn(rendered["views"][view]["svg"])]
        for k, state in enumerate(playback.states(steps, view)):
            expected = {
                "visible": sorted(state.visible),
                "values": state.values,
                "grads": state.grads,
                "marks": state.marks,
                "focus": sorted(set(state.focus)),
            }
            got = folded[view][k]
            for key, want in expected.items():
                if got[key] != want:
                    found.append(f"{view} step {k} {key}: fold.js {got[key]!r}, playback {want!r}")
            if k in class_steps:
                want = _expected_classes(state, steps[k]["phase"], ids)
                if got["classes"] != want:
                    wrong = {
                        i: (got["classes"].get(i), want.get(i))
                        for i in set(got["classes"]) | set(want)
                        if got["classes"].get(i) != want.get(i)
                    }
                    found.append(f"{view} step {k} classes (fold.js, still): {wrong}")
            if len(found) >= 5:
                return found
    return found


def fold_in_browser(page, batch: list[dict], breakage: str | None = None) -> list[tuple]:
    """Each rendered trace of `batch` folded by fold.js in one evaluate: (folded, class steps)
    per trace."""
    traces = []
    for rendered in batch:
        views = {view: [i for i, _ in _drawn(rendered["views"][view]["svg"])] for view in VIEWS}
        traces.append([rendered["steps"], views, _class_steps(rendered["steps"]), breakage])
    # one JSON string each way: Playwright checks every value it carries, which for thousands
    # of steps took far longer than the fold
    folded = json.loads(page.evaluate(FOLD_EVERY_STEP, json.dumps(traces)))
    assert page.problems == [], f"JavaScript errors: {page.problems}"
    return [(f, t[2]) for f, t in zip(folded, traces, strict=True)]


def fold_one(page, rendered: dict, breakage: str | None = None) -> tuple[dict, list[int]]:
    return fold_in_browser(page, [rendered], breakage)[0]


@pytest.mark.parametrize("batch", range(BATCHES), ids=lambda b: f"batch-{b + 1}-of-{BATCHES}")
def test_fold_js_agrees_with_playback_on_every_step(fold_page, batch):
    cases = CASES[batch::BATCHES]
    drawn = [_rendered(source, options) for _, source, options in cases]
    assert all(rendered["steps"] for rendered in drawn), "every trace has at least one step"
    folded = fold_in_browser(fold_page, drawn)
    wrong = {
        name: found
        for (name, _, _), rendered, (steps, class_steps) in zip(cases, drawn, folded, strict=True)
        if (found := differences(rendered, steps, class_steps))
    }
    assert wrong == {}


def test_every_case_is_in_one_batch():
    names = [name for batch in range(BATCHES) for name, _, _ in CASES[batch::BATCHES]]
    assert sorted(names) == sorted(name for name, _, _ in CASES) and len(set(names)) == len(names)
    assert len(CASES) > 800


ERROR_EXAMPLE = next(e for e in EXAMPLES if e.slug == "inplace-error")
MULTI_PASS_EXAMPLE = next(e for e in EXAMPLES if e.slug == "mlp-training")


@pytest.mark.parametrize(
    ("breakage", "example"),
    [
        ("step-behind", EXAMPLES[0]),
        ("ignores-hide", MULTI_PASS_EXAMPLE),  # hides happen only where a new pass begins
        ("error-is-focus", ERROR_EXAMPLE),  # the old player rule: focus stays focus on errors
    ],
)
def test_a_wrong_fold_is_caught(fold_page, breakage, example):
    rendered = _rendered(example.code, {})
    folded, class_steps = fold_one(fold_page, rendered, breakage)
    assert differences(rendered, folded, class_steps) != []


def test_an_error_step_turns_its_focus_into_error(fold_page):
    """The one rule for both: on an error step the failing node is `error`, not `focus`."""
    rendered = _rendered(ERROR_EXAMPLE.code, {})
    k, step = next((k, s) for k, s in enumerate(rendered["steps"]) if s["phase"] == "error")
    failing = step["autograd"]["focus"]
    assert failing, "the in-place error names the node it failed at"
    folded, _ = fold_one(fold_page, rendered)
    classes = folded["autograd"][k]["classes"]
    assert all("error" in classes[i] and "focus" not in classes[i] for i in failing)


# Counting the steps fold.js reads (a Proxy over the list) shows the checkpoints at work without
# timing anything: once made, a jump anywhere in 20,000 steps reads at most 64 of them.
COUNT_STEP_READS = """
async (n) => {
  const { foldView } = await import("/static/fold.js");
  const raw = Array.from({ length: n }, (_, i) => ({
    phase: "forward",
    v: {
      reveal: [`t${i}`],
      hide: i % 100 === 99 ? [`t${i - 50}`] : [],
      values: { [`t${i}`]: `${i}` },
      focus: [`t${i}`],
    },
  }));
  let reads = 0;
  const steps = new Proxy(raw, {
    get(target, key) {
      if (typeof key === "string" && /^[0-9]+$/.test(key)) reads++;
      return target[key];
    },
  });
  const checkpoints = {};
  const plain = (s) => [s.visible.size, [...s.visible].sort().join(), [...s.values].join()];
  const reference = (k) => plain(foldView(raw, "v", k));
  foldView(steps, "v", n - 1, checkpoints);
  const jumps = [n - 1, 0, 12345, 64, 63, 19999, 7000, 128, 1];
  const perJump = [];
  let same = true;
  for (const k of jumps) {
    reads = 0;
    const state = foldView(steps, "v", k, checkpoints);
    perJump.push(reads);
    same &&= JSON.stringify(plain(state)) === JSON.stringify(reference(k));
  }
  return { perJump, same };
}
"""


def test_checkpoints_keep_a_jump_across_20000_steps_short(fold_page):
    result = fold_page.evaluate(COUNT_STEP_READS, 20_000)
    assert result["same"], "a fold from a checkpoint equals a fold from the start"
    # steps k//64*64 .. k, and step k once more for its focus
    assert max(result["perJump"]) <= 64 + 1, result["perJump"]
