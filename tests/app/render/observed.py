"""A snippet's real run, watched: what each traced tensor really held right after each event.

The truth tests (test_grad_truth.py, test_value_truth.py) check what the player draws against
the engine's own objects, never against the trace the renderer reads. `observed_run(code, read)`
runs `code` through `engine.tracer.trace_snippet` with a Tracer that keeps (weakly) every tensor
it names and, right after each event is recorded, applies `read` to each of them. And `agrees`
reads a drawn text back into numbers, independently of how the renderer writes them.
"""

from __future__ import annotations

import re
import weakref
from bisect import bisect_right
from collections.abc import Callable, Iterator

import numpy as np

from app.render import playback
from engine.tracer import Tracer, trace_snippet

MISSING = object()  # the tensor was garbage collected: the program cannot print it
_NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf|nan)")


def grad_of(t) -> np.ndarray | None:
    return None if t._grad is None else t._grad._array.copy()


def value_of(t) -> np.ndarray:
    return t._array.copy()


class _Events(list):
    """The tracer's event list, which notes every tensor right after each append."""

    def __init__(self, observer: _Observing) -> None:
        super().__init__()
        self.observer = observer

    def append(self, event: dict) -> None:
        super().append(event)
        self.observer.note()


class _Observing(Tracer):
    def __init__(self, code: str, read: Callable, **options) -> None:
        super().__init__(code, **options)
        self.read = read
        self.objects: dict[str, weakref.ref] = {}
        self.after: list[dict[str, object]] = []  # event seq → tensor id → what `read` gave
        self.events = _Events(self)

    def _add_tensor(self, t, seq, span, label=None, handle=None):
        tid = super()._add_tensor(t, seq, span, label=label, handle=handle)
        self.objects[tid] = weakref.ref(t)
        return tid

    def note(self) -> None:
        seen = {}
        for tid, ref in self.objects.items():
            t = ref()
            seen[tid] = MISSING if t is None else self.read(t)
        self.after.append(seen)


def observed_run(code: str, read: Callable = grad_of) -> tuple[dict, list[dict[str, object]]]:
    """The trace of `code` and, per event seq, `read(tensor)` for every traced tensor just
    after it (`trace_snippet`'s own run, watched)."""
    made: list[_Observing] = []

    def make_tracer(*args, **options) -> _Observing:
        made.append(_Observing(*args, read=read, **options))
        return made[-1]

    trace = trace_snippet(code, make_tracer=make_tracer)
    return trace, made[-1].after


def ended_steps(final: list[dict]) -> Iterator[tuple[int, int]]:
    """(k, the last event seq at or before step k) for every step after the first event: the
    moment whose truth the program's state after that event tells."""
    last_seq = -1
    for k, step in enumerate(final):
        if step["seq"]:
            last_seq = step["seq"][1]
        if last_seq >= 0:
            yield k, last_seq


def ended_states(final: list[dict], *views: str) -> Iterator[tuple[int, int, tuple]]:
    """`ended_steps`, each with the state of every view in `views` at step k (folded once, in
    one pass, not from the start for every step)."""
    ends = dict(ended_steps(final))
    folds = [playback.states(final, view) for view in views]
    for k, states in enumerate(zip(*folds, strict=True)):
        if k in ends:
            yield k, ends[k], states


def versions(trace: dict) -> list[dict[str, int]]:
    """Per event seq, the version of every tensor an in-place change has reached by then
    (only the changed ones, shared between seqs until the next change)."""
    now: dict[str, int] = {}
    out = []
    for event in trace["events"]:
        if event["kind"] == "inplace":
            now = {**now, event["tensor"]: event["version"]}
        out.append(now)
    return out


def timeline(detail: str | list) -> Callable[[int], str]:
    """A fact (contract C1: a string, or [step, text] pairs from step 0) as step k → what it
    says at step k."""
    if isinstance(detail, str):
        return lambda k: detail
    starts = [step for step, _ in detail]
    assert starts[0] == 0 and starts == sorted(starts)
    texts = [text for _, text in detail]
    return lambda k: texts[bisect_right(starts, k) - 1]


def agrees(said: str, actual: object) -> bool:
    """Whether a box's text ("None", "5", "[1, 2]", "3 values", "2×4") fits the real array."""
    if actual is None or said == "None":
        return actual is None and said == "None"
    array = np.asarray(actual)
    if m := re.fullmatch(r"([\d,]+) values", said):
        return array.shape == (int(m.group(1).replace(",", "")),)
    if re.fullmatch(r"\d+(×\d+)+", said):
        return list(array.shape) == [int(n) for n in said.split("×")]
    if array.dtype == bool:
        words = re.findall(r"True|False", said)
        return words == ["True" if b else "False" for b in array.ravel()]
    numbers = [float(n) for n in _NUMBER.findall(said)]
    flat = array.ravel()
    if len(numbers) != flat.size:
        return False
    return bool(np.allclose(flat, numbers, rtol=1e-3, atol=1e-4, equal_nan=True))
