"""What a reader may choose about how a trace is shown outside its page: which view, which
theme, which steps. One place, read by the embed's options, the exports' query strings and
`gradtrace export`, so the three can never disagree about what `from=3` or `theme=dark` means.

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
