"""Every golden snippet recorded from real PyTorch: the core list and one file per area.

tools/record_goldens.py writes the core snippets to golden/snippets.json and each area of
tools/goldens/ (reductions, losses, autograd, ...) to golden/areas/<area>.json, so areas can be
recorded, reviewed and grown apart. Tests read them all through SNIPPETS.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

GOLDEN = Path(__file__).parent / "golden"
CORE = GOLDEN / "snippets.json"
AREAS = GOLDEN / "areas"


def _load() -> list[dict[str, Any]]:
    snippets = json.loads(CORE.read_text())["snippets"]
    for path in sorted(AREAS.glob("*.json")):
        snippets += [dict(s, area=path.stem) for s in json.loads(path.read_text())["snippets"]]
    slugs = [s["slug"] for s in snippets]
    duplicated = {slug for slug in slugs if slugs.count(slug) > 1}
    assert not duplicated, f"golden slugs recorded twice: {sorted(duplicated)}"
    return snippets


SNIPPETS: list[dict[str, Any]] = _load()
BY_SLUG: dict[str, dict[str, Any]] = {s["slug"]: s for s in SNIPPETS}
# The ones the app's step-by-step oracles and the browser's fold check walk: all but the few
# flagged `long` (thousands of training steps, a trace at the event cap), which cost more than
# every other snippet together there and test nothing the shorter loops do not.
STEPWISE: list[dict[str, Any]] = [s for s in SNIPPETS if not s.get("long")]
LONG_RUN_EVENTS = 5000  # a snippet whose trace has more events must be flagged `long`


PRINTED_NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")


def assert_text_near(got: str, want: str, near: dict, where: str) -> None:
    """The same text, its numbers within a known difference's tolerance (near["why"])."""
    assert PRINTED_NUMBER.sub("#", got) == PRINTED_NUMBER.sub("#", want), where
    np.testing.assert_allclose(
        [float(n) for n in PRINTED_NUMBER.findall(got)],
        [float(n) for n in PRINTED_NUMBER.findall(want)],
        rtol=near["rtol"],
        atol=near["atol"],
        err_msg=where,
    )


def assert_printed(got: str, snippet: dict[str, Any]) -> None:
    """What the engine printed is what PyTorch printed; for a known difference (`near`), the
    same text with its numbers within the stated tolerance, and still different (once the
    engine prints PyTorch's digits, the flag must go)."""
    want, near = snippet["stdout"], snippet.get("near")
    if near is None:
        assert got == want
        return
    assert_text_near(got, want, near, "stdout")
    assert got != want, "the engine now prints exactly what PyTorch does: drop `near`"
