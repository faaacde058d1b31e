"""Every golden snippet recorded from real PyTorch: the core list and one file per area.

tools/record_goldens.py writes the core snippets to golden/snippets.json and each area of
tools/goldens/ (reductions, losses, autograd, ...) to golden/areas/<area>.json, so areas can be
recorded, reviewed and grown apart. Tests read them all through SNIPPETS.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
