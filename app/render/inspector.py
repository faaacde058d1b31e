"""What the node inspector shows when a learner clicks an element: facts from the trace.

Keyed by element id, so the player looks a click up directly. Tensors (`t3`, and versions
`t3-v1` after an in-place change) and graph nodes (`n2`) are described; other elements
(op boxes, edges, stacks) say nothing more than their tooltip.
"""

from __future__ import annotations

import re

from app.render import values

_TENSOR = re.compile(r"^(t\d+)(?:-v\d+|-root)?$")
_NODE = re.compile(r"^(n\d+)$")


def facts(trace: dict, element_ids: list[str], steps: list[dict]) -> dict[str, list[list]]:
    """[term, detail] rows for each element id that stands for a tensor or a node.

    A detail is a string, or, for a fact that changes as the run goes on (`.grad`), a list of
    `[step, text]` pairs sorted by step, the first at step 0: the text shown from that step on.
    """
    lines = trace["code"].splitlines()
    made_at = {e["seq"]: e.get("span") for e in trace["events"]}
    labels = {tid: t.get("label", tid) for tid, t in trace["tensors"].items()}  # once, not per node
    out: dict[str, list[list[str]]] = {}
    for element in element_ids:
        if match := _TENSOR.match(element):
            record = trace["tensors"].get(match.group(1))
            if record:
                out[element] = _tensor(record, trace, made_at, lines)
        elif match := _NODE.match(element):
            record = trace["nodes"].get(match.group(1))
            if record:
                out[element] = _node(record, labels, made_at, lines)
    return out


def _tensor(record: dict, trace: dict, made_at: dict, lines: list[str]) -> list[list[str]]:
    shape = record.get("shape", [])
    rows = [
        ["tensor", record.get("label", "")],
        ["value", values.say(record.get("value"))],
        ["shape", f"torch.Size({shape})"],
        ["dtype", f"torch.{record.get('dtype', 'float32')}"],
        ["requires_grad", str(record.get("requires_grad", False))],
        ["is_leaf", str(record.get("is_leaf", True))],
    ]
    if record.get("grad_fn"):
        node = trace["nodes"].get(record["grad_fn"], {})
        rows.append(["grad_fn", node.get("name", record["grad_fn"])])
    rows.append(["made by", _where(made_at.get(record.get("created")), lines)])
    return rows


def _node(record: dict, labels: dict[str, str], made_at: dict, lines: list[str]) -> list[list[str]]:
    name = record.get("name", "")
    rows = [["node", "AccumulateGrad" if "AccumulateGrad" in name else name]]
    if record.get("formula"):
        rows.append(["backward", record["formula"]])
    saved = [
        labels.get(s, "its result" if s == "result" else str(s))
        for s in record.get("saved", [])
        if s is not None
    ]
    rows.append(["saved for backward", ", ".join(saved) if saved else "nothing"])
    if record.get("variable"):
        rows.append(["adds into", f"{labels.get(record['variable'], '?')}.grad"])
    rows.append(["recorded by", _where(made_at.get(record.get("created")), lines)])
    return rows


def _where(span: list | None, lines: list[str]) -> str:
    if not span or not 0 < span[0] <= len(lines):
        return "—"
    line, col, end_line, end_col = span
    text = lines[line - 1][col:end_col] if line == end_line else lines[line - 1][col:]
    return f"line {line}: {text.strip()}"
