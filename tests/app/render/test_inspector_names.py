"""The inspector calls a node's saved tensors by PyTorch's own attribute names.

tests/app/render/golden/saved_names.json lists, for every grad_fn class real PyTorch built while
running the golden snippets and the examples, the `_saved_*` attributes its objects have
(recorded by tools/record_saved_names.py under torch 2.13.0). Here the same programs run on the
engine, and every saved-tensor name the inspector shows (`_saved_self = a`) must be one of them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.render.inspector import facts
from tests import corpus
from tests.corpus import STEPWISE_SOURCES as SNIPPETS

GOLDEN = json.loads((Path(__file__).parent / "golden" / "saved_names.json").read_text())
PYTORCH = {name: set(attrs) for name, attrs in GOLDEN["saved"].items()}
_NAME = re.compile(r"\b_saved_\w+")


def shown_names(code: str) -> dict[str, set[str]]:
    """grad_fn class → the `_saved_*` names the inspector shows for its nodes in this run."""
    trace, drawn = corpus.traced(code), corpus.rendered(code)
    ids = [i for view in drawn["views"].values() for i in view["ids"]]
    rows = facts(trace, ids, drawn["steps"])
    shown: dict[str, set[str]] = {}
    for nid, record in trace["nodes"].items():
        for term, detail in rows.get(nid, []):
            if term == "saved tensors":
                texts = [detail] if isinstance(detail, str) else [t for _, t in detail]
                names = {n for text in texts for n in _NAME.findall(text)}
                shown.setdefault(record["name"], set()).update(names)
    return shown


@pytest.mark.parametrize("slug", corpus.spread(sorted(SNIPPETS)))
def test_saved_tensors_have_pytorchs_names(slug):
    wrong = {
        name: sorted(names - PYTORCH[name])
        for name, names in shown_names(SNIPPETS[slug]).items()
        if name in PYTORCH and names - PYTORCH[name]
    }
    assert wrong == {}, f"not attributes of these PyTorch grad_fns: {wrong}"


def test_the_golden_knows_the_common_nodes():
    assert {"_saved_self", "_saved_other"} <= PYTORCH["MulBackward0"]
    assert {"_saved_mat1", "_saved_mat2"} <= PYTORCH["AddmmBackward0"]
    assert "_saved_result" in PYTORCH["ExpBackward0"]
