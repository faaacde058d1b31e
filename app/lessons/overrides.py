"""A lesson's own words for some steps, put in place of the generated narration.

An override names its step by number or by the source text of the code it runs (the first step
at that span). The page's steps are shared with every other page of the same trace (the page
cache holds them), so the lesson gets changed copies, never the originals.
"""

from __future__ import annotations

from app.lessons.model import Override
from app.render.spans import span_text


def overridden(steps: list[dict], lines: list[str], overrides: list[Override]) -> list[dict]:
    """`steps` with the overrides' texts; a step or span that is not there changes nothing
    (`gradtrace lessons check` reports it)."""
    texts: dict[int, str] = {}
    for override in overrides:
        index = _index(steps, lines, override)
        if index is not None:
            texts[index] = override.text
    return [
        {**step, "text": texts[index], "overridden": True} if index in texts else step
        for index, step in enumerate(steps)
    ]


def at_span(steps: list[dict], lines: list[str], text: str) -> int | None:
    """The index of the first step whose span's source text is `text`."""
    for index, step in enumerate(steps):
        if step.get("span") and span_text(lines, step["span"]) == text:
            return index
    return None


def _index(steps: list[dict], lines: list[str], override: Override) -> int | None:
    if override.step is not None:
        return override.step - 1 if override.step <= len(steps) else None
    return at_span(steps, lines, override.span)
