"""Cutting a trace short: what it was after its first N events, ending with a given outcome.

Both the sandbox's child (a trace past the bytes it may hand back) and the store (a trace past
the bytes it keeps) cut the same way, so a cut trace is still a valid trace: every tensor and
node it keeps was created by an event it keeps, every module call it lists holds an event it
keeps, and `limits.truncated` says it was cut.
"""

from __future__ import annotations


def keep_first(trace: dict, events: int, outcome: dict) -> dict:
    """`trace` up to (not including) event number `events`, ending with `outcome`."""
    kept = trace["events"][:events]
    calls, kept = _calls_of(trace["modules"], kept)
    return {
        **trace,
        "events": kept,
        "tensors": {k: v for k, v in trace["tensors"].items() if v["created"] < events},
        "nodes": {k: v for k, v in trace["nodes"].items() if v["created"] < events},
        "modules": calls,
        # the outcome says why it was cut; where the event cap had stopped recording, if it
        # had, is no longer where the trace ends
        "limits": {**trace["limits"], "truncated": True, "stopped_line": None},
        "outcome": outcome,
    }


def _calls_of(calls: list[dict], events: list[dict]) -> tuple[list[dict], list[dict]]:
    """The module calls `events` happened in, and the calls around them, renumbered in order;
    and `events` with their `module` indexes renumbered to match.

    The tracer lists a call at the first event inside it, so for its traces the calls kept are
    the first ones and nothing is renumbered; any valid trace is cut validly all the same."""
    wanted = [False] * len(calls)
    for event in events:
        index = event.get("module")
        while index is not None and not wanted[index]:
            wanted[index] = True
            index = calls[index]["parent"]
    renumbered: dict[int, int] = {}
    kept: list[dict] = []
    for index, call in enumerate(calls):
        if wanted[index]:
            renumbered[index] = len(kept)
            parent = call["parent"]
            moved = parent is not None and renumbered[parent] != parent
            kept.append({**call, "parent": renumbered[parent]} if moved else call)
    if all(old == new for old, new in renumbered.items()):
        return kept, events
    moved = [
        {**event, "module": renumbered[event["module"]]} if "module" in event else event
        for event in events
    ]
    return kept, moved


def fit(trace: dict, size, limit: int, outcome_for) -> dict:
    """The longest prefix of `trace` whose `size(trace)` is at most `limit` (whole events).

    `outcome_for(kept)` is the outcome a cut trace ends with. Each try keeps a share of the
    events in proportion to how far over the limit the last one was, so it takes a few tries,
    not one per event. With no events left, only the outcome remains.
    """
    measured = size(trace)
    if measured <= limit:
        return trace
    events = len(trace["events"])
    while measured > limit and events:
        events = int(events * limit / measured * 0.9)
        trace = keep_first(trace, events, outcome_for(events))
        measured = size(trace)
    if measured > limit:  # the code and output alone are too big
        trace = {**keep_first(trace, 0, trace["outcome"]), "stdout": "", "stderr": ""}
    return trace
