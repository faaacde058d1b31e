"""Check a trace that came out of a child before anything else reads it.

The child may have been taken over by the snippet, so its JSON is parsed with `json.loads` only
(never anything that builds objects) and then checked for the shape renderers rely on: the keys
and types of docs/trace.schema.json that matter to them, and every id an event, tensor or node
refers to existing and introduced no later than where it is used. The full JSON Schema is
checked in the tests; this is the fast subset for every run.
"""

from __future__ import annotations

import json

from app.sandbox import statuses

TOP_KEYS = {
    "version", "code", "tensors", "nodes", "events", "stdout", "stderr", "outcome", "limits",
}  # fmt: skip
EVENT_KINDS = {
    "tensor", "op", "inplace", "grad_mode", "retain_grad", "backward_begin", "node_backward",
    "accumulate", "free", "backward_end", "print", "error",
}  # fmt: skip
TENSOR_KEYS = ("label", "shape", "dtype", "requires_grad", "is_leaf", "grad_fn", "value", "created")
NODE_KEYS = ("name", "inputs", "outputs", "next", "saved", "formula", "created")


class Malformed(ValueError):
    """The child's result is not a trace."""


def parse(data: bytes) -> dict:
    """The trace in `data`, checked; Malformed if it is not one."""
    try:
        trace = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise Malformed(f"not JSON: {error}") from None
    check(trace)
    return trace


def check(trace) -> None:
    _expect(type(trace) is dict and set(trace) == TOP_KEYS, "top-level keys")
    _expect(trace["version"] == 1, "version")
    for key in ("code", "stdout", "stderr"):
        _expect(type(trace[key]) is str, key)
    tensors, nodes, events = trace["tensors"], trace["nodes"], trace["events"]
    _expect(type(tensors) is dict and type(nodes) is dict and type(events) is list, "tables")
    for record in tensors.values():
        _expect(type(record) is dict and all(k in record for k in TENSOR_KEYS), "tensor")
        _expect(type(record["label"]) is str and type(record["shape"]) is list, "tensor")
        _expect(_seq(record["created"]) and record["created"] < len(events), "tensor created")
    for record in nodes.values():
        _expect(type(record) is dict and all(k in record for k in NODE_KEYS), "node")
        _expect(type(record["name"]) is str and type(record["formula"]) is str, "node")
        _expect(_seq(record["created"]) and record["created"] < len(events), "node created")
        for key in ("inputs", "outputs", "next", "saved"):
            _expect(type(record[key]) is list, f"node {key}")
    for record in tensors.values():
        _ref(nodes, record["grad_fn"], record["created"])
    for record in nodes.values():
        created = record["created"]
        for ref in (*record["inputs"], *record["outputs"], record.get("variable")):
            _ref(tensors, ref, created)
        for ref in record["saved"]:
            if ref != "result":
                _ref(tensors, ref, created)
        for pair in record["next"]:
            _expect(type(pair) is list and len(pair) == 2 and _seq(pair[1]), "node next")
            _ref(nodes, pair[0], created)
    for seq, event in enumerate(events):
        _event(event, seq, tensors, nodes)
    _outcome(trace["outcome"])
    limits = trace["limits"]
    _expect(type(limits) is dict and type(limits.get("truncated")) is bool, "limits")


def _event(event, seq: int, tensors: dict, nodes: dict) -> None:
    _expect(type(event) is dict and event.get("seq") == seq, "event seq")
    _expect(event.get("kind") in EVENT_KINDS, "event kind")
    span = event.get("span")
    if span is not None:
        _expect(type(span) is list and len(span) == 4 and all(map(_seq, span)), "span")
    for key in ("tensor", "grad_tensor"):
        _ref(tensors, event.get(key), seq)
    for key in ("inputs", "outputs", "roots"):
        refs = event.get(key, ())
        _expect(type(refs) is list or refs == (), key)
        for ref in refs:
            _ref(tensors, ref, seq)
    nodes_freed = event.get("nodes", ())
    _expect(type(nodes_freed) is list or nodes_freed == (), "nodes")
    for ref in nodes_freed:
        _ref(nodes, ref, seq)
    _ref(nodes, event.get("node"), seq)
    for source in event.get("sources", ()):
        _expect(type(source) is dict, "source")
        _ref(nodes, source.get("from"), seq)
    for key in ("text", "type", "message", "name"):
        if key in event:
            _expect(type(event[key]) is str or (key == "name" and event[key] is None), key)


def _outcome(outcome) -> None:
    _expect(type(outcome) is dict and outcome.get("status") in statuses.ALL, "outcome status")
    for key in ("type", "message"):
        if key in outcome:
            _expect(type(outcome[key]) is str, f"outcome {key}")
    if outcome["status"] == statuses.ERROR:
        _expect("type" in outcome and "message" in outcome, "error outcome")


def _ref(table: dict, ref, seq: int) -> None:
    if ref is not None:
        _expect(type(ref) is str and ref in table, "reference")
        _expect(table[ref]["created"] <= seq, "reference to the future")


def _seq(value) -> bool:
    return type(value) is int and value >= 0


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise Malformed(f"bad {what}")
