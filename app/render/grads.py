"""What each tensor's `.grad` holds as the run goes on, as far as the trace can tell.

The player must never state a `.grad` the program would not print. The trace records every
gradient backward() puts into `.grad` (`accumulate`, and `retain_grad` once captured) and every
recorded in-place change of a `.grad` tensor (`w.grad.zero_()`), but not the plain Python that
changes `.grad` silently: `zero_grad()`, `x.grad = None`, `x.grad = torch.zeros(2)`. So:

- the snippet's source is read for such statements (`silent_changes`); where there are none,
  the events tell the whole story;
- where only resets to None are possible (`zero_grad()`, `x.grad = None`), a value stays known
  for as long as the trace proves it: until the next backward adds into the same `.grad` tensor
  (a reset would have made a new one), while an optimizer step still used it (optimizers
  skip a parameter whose `.grad` is None), or while the code has not reached a reset yet (the
  module's own statements run once, in order: see `_Order`). Past the last proof it is
  `UNKNOWN`;
- where anything is possible (`x.grad = <tensor>`, `zero_grad(set_to_none=False)`), a value is
  known only up to the end of the step that stated it (a backward counts as one step: nothing
  of the snippet's own runs in the middle of it).

A tensor's history starts when backward first reaches it: before that it states nothing. A
non-leaf tensor that backward went through without `retain_grad()` keeps no gradient, so from
the end of that backward its `.grad` is None, as printing it shows.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Any

# Statements that can only set a .grad back to None, and ones that can set it to anything.
_RESETS = re.compile(r"zero_grad\s*\(\s*(set_to_none\s*=\s*True\s*)?\)|\.grad\s*=\s*None\b|\bdel\b")
_ANYTHING = re.compile(
    r"\.grad\s*=(?!=)(?!\s*None\b)|zero_grad\s*\((?!\s*(set_to_none\s*=\s*True\s*)?\))"
    r"|setattr|__dict__|(?<![.\w])(exec|eval)\s*\(|\._grad\b|\.numpy\s*\(|vars\s*\("
)


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()  # the trace cannot tell what .grad holds here


@dataclass(frozen=True, slots=True)
class Known:
    """`.grad` is `value` (a trace value), held by tensor `holder`; value None: `.grad` is None."""

    value: Any
    holder: str | None = None


def silent_changes(code: str) -> str:
    """ "none", "resets" or "anything": what the snippet's source could do to a .grad without
    the trace seeing it (read conservatively: a match in a comment or a string counts too)."""
    if _ANYTHING.search(code):
        return "anything"
    if _RESETS.search(code):
        return "resets"
    return "none"


def history(trace: dict) -> dict[int, list[tuple[str, Known | _Unknown]]]:
    """seq → [(tensor id, what its .grad holds from right after that event on)], in order.

    One pass over the events, then one over each tensor's own entries: linear in the trace."""
    mode = silent_changes(trace.get("code", ""))
    events = trace["events"]
    tensors = trace["tensors"]
    stated: dict[str, dict[int, Known]] = {}  # tensor → seq → what was recorded there
    proofs: dict[str, list[int]] = {}  # tensor → seqs where its .grad was shown to be unchanged
    holder: dict[str, str] = {}  # tensor → its .grad tensor now
    owner: dict[str, str] = {}  # .grad tensor → whose .grad it is
    alias: dict[str, str] = {}  # a detach()/.data copy → the tensor whose memory it shares
    backward_of: dict[int, int] = {}  # seq inside a backward → that backward's last seq
    reached: list[str] = []  # the running backward's tensors, leaves or not
    begun: int | None = None
    for event in events:
        seq, kind = event["seq"], event["kind"]
        if kind == "backward_begin":
            begun, reached = seq, list(event["roots"])
        elif kind == "node_backward":
            reached += trace["nodes"][event["node"]]["outputs"]
        elif kind in ("accumulate", "retain_grad") and event.get("grad_tensor"):
            tid, grad = event["tensor"], event["grad_tensor"]
            stated.setdefault(tid, {})[seq] = Known(event["grad"], grad)
            holder[tid], owner[grad] = grad, tid
        elif kind == "tensor" and event["op"] in ("detach", "data") and event["inputs"]:
            source = event["inputs"][0]
            alias[event["tensor"]] = alias.get(source, source)
        elif kind == "inplace":
            target = alias.get(event["tensor"], event["tensor"])
            whose = owner.get(target)
            if whose is not None and holder.get(whose) == target and event["value"] is not None:
                stated.setdefault(whose, {})[seq] = Known(event["value"], target)
            elif event["name"] == "optimizer.step":
                proofs.setdefault(event["tensor"], []).append(seq)
        elif kind == "backward_end" and begun is not None:
            for s in range(begun, seq + 1):
                backward_of[s] = seq
            for tid in dict.fromkeys(reached):
                record = tensors.get(tid, {})
                if not record.get("is_leaf", True) and tid not in holder:
                    stated.setdefault(tid, {})[seq] = Known(None)  # autograd kept no gradient
            begun, reached = None, []
    out: dict[int, list[tuple[str, Known | _Unknown]]] = {}
    last = len(events) - 1
    order = _Order(trace.get("code", ""), events) if mode == "resets" else None
    for seq in range(last - 1, -1, -1):  # one call's events: nothing of the snippet between
        if events[seq]["span"] is not None and events[seq]["span"] == events[seq + 1]["span"]:
            backward_of[seq] = max(backward_of.get(seq, seq), backward_of.get(seq + 1, seq + 1))
    for tid, entries in stated.items():
        timeline: dict[int, Known | _Unknown] = {}
        seqs = sorted(entries)
        for i, seq in enumerate(seqs):
            entry = entries[seq]
            nxt = seqs[i + 1] if i + 1 < len(seqs) else None
            unknown_from = _doubt(mode, seq, nxt, entry, entries, proofs.get(tid, ()), backward_of)
            if unknown_from is not None and order is not None:
                unknown_from = order.first_doubt(unknown_from - 1)
            timeline[seq] = entry
            doubted = unknown_from is not None and unknown_from <= last
            if doubted and unknown_from not in entries and (nxt is None or unknown_from < nxt):
                timeline[unknown_from] = UNKNOWN
        for seq in sorted(timeline):
            out.setdefault(seq, []).append((tid, timeline[seq]))
    return out


def _doubt(
    mode: str,
    seq: int,
    nxt: int | None,
    entry: Known,
    entries: dict[int, Known],
    proofs: Any,
    backward_of: dict[int, int],
) -> int | None:
    """The first event after which a value stated at `seq` may no longer hold, or None."""
    end = backward_of.get(seq, seq)  # nothing of the snippet runs inside a backward
    if mode == "none":
        return None
    if mode == "anything":
        return end + 1
    if entry.value is None and entry.holder is None:
        return None  # a reset to None changes nothing
    if nxt is not None and entries[nxt].holder == entry.holder:
        return None  # the next backward added into the same tensor: never reset in between
    proven = max((p for p in proofs if p > seq and (nxt is None or p < nxt)), default=end)
    return max(proven, end) + 1


class _Order:
    """Where the module's own statements put each event, to tell when no reset can have run.

    Top-level statements run once, in order, so between two events made by top-level
    statements only the statements between them run. An event made inside a function, a class,
    a lambda or a generator (which may run later than it is written) has no place here; nor
    has anything if a reset statement sits inside one of those."""

    def __init__(self, code: str, events: list[dict]) -> None:
        self.usable = False
        try:
            body = ast.parse(code).body
        except (SyntaxError, ValueError):
            return
        starts = [node.lineno for node in body]
        opaque = {i for i, node in enumerate(body) if _deferred(node)}
        resets = []
        for i, node in enumerate(body):
            for inner in ast.walk(node):
                if _is_reset(inner):
                    if i in opaque:
                        return
                    resets.append(i)
        self.resets = sorted(set(resets))
        self.place: list[int | None] = []  # event seq → index of its top-level statement
        for event in events:
            span = event["span"]
            index = bisect.bisect_right(starts, span[0]) - 1 if span else -1
            ok = index >= 0 and index not in opaque and span[0] <= body[index].end_lineno
            self.place.append(index if ok else None)
        self.unplaced = [seq for seq, index in enumerate(self.place) if index is None]
        placed = [(index, seq) for seq, index in enumerate(self.place) if index is not None]
        self.placed_index = [index for index, _ in placed]  # non-decreasing: statements in order
        self.placed_seq = [seq for _, seq in placed]
        self.usable = self.placed_index == sorted(self.placed_index)

    def first_doubt(self, seq: int) -> int:
        """The first event after `seq` before which a reset may have run (a value known right
        after event `seq` may not hold from there on); len(events) if none."""
        after = seq + 1
        if not self.usable or after >= len(self.place) or self.place[seq] is None:
            return after
        start = self.place[seq]
        k = bisect.bisect_left(self.resets, start)
        if k == len(self.resets):
            reached = len(self.place)  # no reset is left to run
        else:  # the first event made at or past the next reset's statement
            j = bisect.bisect_left(self.placed_index, self.resets[k])
            reached = self.placed_seq[j] if j < len(self.placed_seq) else len(self.place)
        u = bisect.bisect_left(self.unplaced, after)
        unplaced = self.unplaced[u] if u < len(self.unplaced) else len(self.place)
        return max(after, min(reached, unplaced))


def _deferred(node: ast.AST) -> bool:
    """A top-level statement whose code may run at another time than where it stands."""
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.GeneratorExp)
    return any(isinstance(inner, kinds) for inner in ast.walk(node))


def _is_reset(node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        func = node.func
        return isinstance(func, ast.Attribute) and func.attr == "zero_grad"
    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else []
    return any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in targets)
