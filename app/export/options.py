"""What a reader may choose about how a trace is shown outside its page: which view, which
theme, which steps, and for an export which format. One place, read by the embed's options, the
exports' query strings and `gradtrace export`, so the three can never disagree about what
`from=3` or `theme=dark` means.

Steps are numbered from 1 here, as people see them (the page's `#step=N`, the player's
counter); the renderer's steps are 0-based, and `StepRange.indices` converts.
"""

from __future__ import annotations

from dataclasses import dataclass

VIEWS = ("tensors", "autograd")
THEMES = ("light", "dark")


class BadOption(ValueError):
    """An option a reader gave that cannot be used; the message says what to give instead."""


@dataclass(frozen=True)
class StepRange:
    """Steps `first`..`last` (1-based, both included) of a trace of `total` steps."""

    first: int
    last: int
    total: int

    @classmethod
    def of(cls, total: int, first: int | None = None, last: int | None = None) -> StepRange:
        """The range `first`..`last` (either may be left out: the trace's own end), checked
        against a trace of `total` steps."""
        first = 1 if first is None else first
        last = total if last is None else last
        if not 1 <= first <= total:
            raise BadOption(f"from={first}: this trace has steps 1 to {total}.")
        if not 1 <= last <= total:
            raise BadOption(f"to={last}: this trace has steps 1 to {total}.")
        if first > last:
            raise BadOption(f"from={first} is after to={last}: give a range that goes forwards.")
        return cls(first, last, total)

    @property
    def indices(self) -> range:
        """The renderer's 0-based step indices in this range."""
        return range(self.first - 1, self.last)

    def __len__(self) -> int:
        return self.last - self.first + 1


def choice(name: str, value: str | None, allowed: tuple[str, ...]) -> str:
    """`value` if it is one of `allowed`, the first of them if it was left out."""
    if value is None or value == "":
        return allowed[0]
    if value not in allowed:
        raise BadOption(f"{name}={value!r} is not known: use one of {', '.join(allowed)}.")
    return value


# format: (media type, what it is for)
FORMATS = {
    "html": ("text/html; charset=utf-8", "one file that plays the trace offline"),
    "zip": ("application/zip", "an SVG and a PNG of every step"),
    "pdf": ("application/pdf", "a page per step"),
    "gif": ("image/gif", "the steps animated, with the narration as a caption"),
}
# an image export draws every step of its range: past this many, a range must be chosen (the
# HTML file holds any number, as the page does). The Share box reads both from the page.
MAX_FRAMES = 240
DRAWN_STEP_BY_STEP = frozenset(FORMATS) - {"html"}


@dataclass(frozen=True)
class ExportRequest:
    format: str
    view: str = "tensors"
    theme: str = "light"
    first: int | None = None  # 1-based, as people number steps; None: the trace's own end
    last: int | None = None

    @classmethod
    def checked(cls, format: str, view=None, theme=None, first=None, last=None) -> ExportRequest:
        """The request, each option checked that can be without the trace."""
        if format not in FORMATS:
            raise BadOption(f"No export is called {format!r}: use one of {', '.join(FORMATS)}.")
        return cls(format, choice("view", view, VIEWS), choice("theme", theme, THEMES), first, last)

    def steps(self, total: int) -> StepRange:
        """The range asked for, checked against a trace of `total` steps."""
        steps = StepRange.of(total, self.first, self.last)
        if self.format in DRAWN_STEP_BY_STEP and len(steps) > MAX_FRAMES:
            raise BadOption(
                f"This range has {len(steps):,} steps, and an image export draws at most "
                f"{MAX_FRAMES} at a time: choose from= and to= (steps 1 to {total:,})."
            )
        return steps

    def filename(self, ident: str) -> str:
        part = "" if self.first is None and self.last is None else f"-steps-{self._range_name()}"
        return f"gradtrace-{ident}{part}.{self.format}"

    def _range_name(self) -> str:
        return f"{self.first or 1}-{self.last or 'end'}"
