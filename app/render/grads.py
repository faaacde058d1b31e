"""What each tensor's `.grad` holds as the run goes on: a fold of the trace's events.

The trace records every change of a `.grad` (docs/trace-format.md):

- backward() filling it: `accumulate` for a leaf, a captured `retain_grad` for a non-leaf;
- the program replacing it: `grad_set` (`x.grad = g`, `x.grad = None`, `del x.grad`,
  `zero_grad()`);
- an in-place change of the `.grad` tensor itself: `inplace` (`w.grad.zero_()`,
  `zero_grad(set_to_none=False)`), also through a `detach()` or `.data` copy or a view of it
  (the event's `aliases`), a write through `.numpy()` (`write`) or `w.grad.data = t`
  (`data_set`).

A tensor's history starts when it first gets a `.grad` (or backward first reaches it): before
that it states nothing. A non-leaf tensor that backward went through without `retain_grad()`
keeps no gradient, so from the end of that backward its `.grad` is None, as printing it shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Known:
    """`.grad` is `value` (a trace value), held by tensor `holder`; value None: `.grad` is None."""

    value: Any
    holder: str | None = None
    dtype: str | None = None  # when `w.data = other` changed the holder's dtype since it was made


NONE = Known(None)


def history(trace: dict) -> dict[int, list[tuple[str, Known]]]:
    """seq → [(tensor id, what its .grad holds from right after that event on)], in order.

    One pass over the events: linear in the trace."""
    tensors = trace["tensors"]
    out: dict[int, list[tuple[str, Known]]] = {}
    holder: dict[str, str] = {}  # tensor → its .grad tensor now
    owners: dict[str, dict[str, None]] = {}  # .grad tensor → whose .grad it is (maybe several)
    alias: dict[str, str] = {}  # a detach()/.data copy → the tensor whose memory it shares
    reached: list[str] = []  # the running backward's tensors, leaves or not
    dtype_now: dict[str, str] = {}  # a tensor whose `.data = …` gave it another dtype → that dtype

    def state(seq: int, tid: str, known: Known) -> None:
        if known.holder in dtype_now:
            known = Known(known.value, known.holder, dtype_now[known.holder])
        old = holder.pop(tid, None)
        if old is not None:
            owners[old].pop(tid, None)
        if known.holder is not None:
            holder[tid] = known.holder
            owners.setdefault(known.holder, {})[tid] = None
        out.setdefault(seq, []).append((tid, known))

    for event in trace["events"]:
        seq, kind = event["seq"], event["kind"]
        if kind == "backward_begin":
            reached = list(event["roots"])
        elif kind == "node_backward":
            reached += trace["nodes"][event["node"]]["outputs"]
        elif kind in ("accumulate", "retain_grad", "grad_set") and "grad_tensor" in event:
            grad = event["grad_tensor"]
            state(seq, event["tensor"], NONE if grad is None else Known(event["grad"], grad))
        elif kind == "tensor" and event["op"] in ("detach", "data") and event["inputs"]:
            source = event["inputs"][0]
            alias[event["tensor"]] = alias.get(source, source)
        elif kind in ("inplace", "write", "data_set") and event["value"] is not None:
            if kind == "data_set" and event["source"] in tensors:
                dtype_now[event["tensor"]] = tensors[event["source"]].get("dtype", "float32")
            # the changed tensor, and every other one sharing its memory (`aliases`)
            changed = {alias.get(event["tensor"], event["tensor"]): event["value"]}
            for shared in event.get("aliases", ()):
                changed.setdefault(shared["tensor"], shared["value"])
            for target, value in changed.items():
                for whose in list(owners.get(target, ())):
                    state(seq, whose, Known(value, target))
        elif kind == "backward_end":
            for tid in dict.fromkeys(reached):
                if not tensors.get(tid, {}).get("is_leaf", True) and tid not in holder:
                    out.setdefault(seq, []).append((tid, NONE))  # autograd kept no gradient
            reached = []
    return out
