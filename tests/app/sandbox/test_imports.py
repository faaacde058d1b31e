"""What a snippet may import: the standard modules tutorials use pass, the ones that reach the
machine (files, processes, sockets, raw memory) are refused with the allowlist's sentence."""

from __future__ import annotations

import pytest

from app.sandbox import frontdoor
from engine.tracer import trace_snippet

LEARNER_IMPORTS = [
    "contextlib",
    "re",
    "functools",
    "itertools",
    "collections",
    "dataclasses",
    "typing",
    "math",
    "random",
    "numpy",
    "copy",  # copy.deepcopy(model.state_dict()): keeping the best weights
]
REFUSED = ["os", "sys", "subprocess", "socket", "ctypes"]


@pytest.mark.parametrize("name", LEARNER_IMPORTS)
def test_a_module_learners_use_imports(name):
    module = frontdoor.make_importer()(name)
    assert module.__name__ == name


@pytest.mark.parametrize("name", REFUSED)
def test_a_module_that_reaches_the_machine_is_refused(name):
    with pytest.raises(ImportError) as refused:
        frontdoor.make_importer()(name)
    assert str(refused.value) == frontdoor.import_message(name)
    assert str(refused.value).startswith("gradtrace snippets can import torch, ")
    assert str(refused.value).endswith(f"(not '{name}')")


def test_the_new_modules_work_inside_a_traced_snippet():
    code = (
        "import contextlib, re, torch\n"
        "from dataclasses import dataclass\n"
        "from typing import NamedTuple\n"
        "@dataclass\n"
        "class Step:\n"
        "    lr: float\n"
        "with contextlib.suppress(ZeroDivisionError):\n"
        "    1 / 0\n"
        "print(re.sub(r'\\d', '#', 'w1'), Step(0.1), torch.ones(2).sum().item())\n"
    )
    trace = trace_snippet(code, importer=frontdoor.make_importer())
    assert trace["outcome"] == {"status": "ok"}, trace["outcome"]
    assert trace["stdout"] == "w# Step(lr=0.1) 2.0\n"


def test_the_message_lists_the_new_modules():
    message = frontdoor.import_message("os")
    assert "contextlib" in message and ", re," in message
