"""Golden snippets by area: each module here lists the snippets of one part of the API.

A module defines `SNIPPETS = []` and `S = collect(SNIPPETS)`, then one `S(slug, source)` per
snippet (the flags are those of tools/record_goldens.py, plus `near`: a known difference in
printed digits, with its tolerance and the reason). `record_goldens.py AREA...` records
the named areas into tests/engine/golden/areas/AREA.json.
"""

from __future__ import annotations

import textwrap
from typing import Any


def collect(into: list[dict[str, Any]]):
    """The S() that appends one snippet to `into`."""

    def S(  # noqa: N802
        slug: str,
        source: str,
        *,
        unsupported: bool = False,
        skip: tuple = (),
        why: str = "",
        near: dict | None = None,
        long: bool = False,
    ):
        entry: dict[str, Any] = {"slug": slug, "source": textwrap.dedent(source).strip() + "\n"}
        if unsupported:
            entry["unsupported"] = True
        if long:
            # a training loop of thousands of steps: its trace reaches the event cap, so the
            # app's step-by-step oracles leave it to the shorter snippets (tests/engine/goldens.py)
            entry["long"] = True
        if near:
            # printed numbers may differ from PyTorch's within near["rtol"]/near["atol"], for
            # the reason near["why"]; everything else printed must match exactly
            entry["near"] = near
        if skip:
            entry["skip"] = list(skip)
            entry["why"] = why
        into.append(entry)

    return S
