"""Every grad_fn the engine has is narrated, recorded in a golden, and checked numerically.

An op is one node class (engine/functions.py and friends); adding one without its three
companions fails here with the list of what is missing:
- words in app/render/ops.py (what the player says it does and sends back),
- a golden snippet recorded from PyTorch that makes it (tools/goldens/),
- a finite-difference check of its backward (tests/engine/test_gradients.py, via
  tests/engine/fd.py, which notes every node class a check's graph contains).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import engine
from app.render import ops
from engine.graph import AccumulateGrad, Node
from engine.torch_names import GRAD_FN_MODULE
from tests.engine import fd
from tests.engine.goldens import SNIPPETS

# Nodes that have no backward to check, each with the reason.
NOT_DIFFERENTIABLE = {
    "FloorDivide": "floor division has no derivative (PyTorch records no grad_fn either)",
}
# Nodes PyTorch never leaves where a golden's probe can see them, each with the reason.
NOT_IN_A_PROBE = {
    "FloorDivide": "the engine's node for // carries no grad_fn in PyTorch: nothing to record",
    "SliceBackwardBackward0": "a double-backward node; tests/engine/test_autograd.py checks it",
}


def engine_nodes() -> dict[str, type]:
    """Every concrete grad_fn class, by class name (PyTorch's name for it)."""
    found, stack = {}, [Node]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            # the engine's own nodes print as PyTorch's, in no module (a custom Function's
            # node is in torch.autograd.function, a test's own in its test module)
            if sub is AccumulateGrad or sub.__module__ != GRAD_FN_MODULE:
                continue
            if sub.__name__.startswith("_"):
                continue  # a shared base of several nodes (its subclasses are the ops)
            found[sub.__name__] = sub
    return found


def golden_node_names() -> set[str]:
    names = set()
    for snippet in SNIPPETS:
        for probe in snippet.get("probes", {}).values():
            if probe.get("grad_fn"):
                names.add(ops.plain(probe["grad_fn"]))
            for name, _ in probe.get("next_functions") or ():
                if name:
                    names.add(ops.plain(name))
        names |= {word.strip("<>(),=") for word in snippet.get("stdout", "").split()}
    return names


NODES = engine_nodes()


def test_the_engine_has_its_ops():
    assert engine.Tensor  # the import attached every op module's classes
    assert len(NODES) > 60


def test_every_op_has_words():
    missing = sorted(ops.plain(cls.name(cls.__new__(cls))) for cls in NODES.values())
    missing = [name for name in missing if name not in ops.OPS]
    assert not missing, f"add these to app/render/ops.py: {missing}"


def test_every_op_is_in_a_golden_recorded_from_pytorch():
    seen = golden_node_names()
    missing = sorted(name for name in NODES if name not in seen and name not in NOT_IN_A_PROBE)
    assert not missing, f"record a golden (tools/goldens/) that makes: {missing}"


def checked_by_finite_differences(tmp_path: Path) -> set[str]:
    """The ops the finite-difference checks met: this process's, when every one of them ran
    here (tests/engine/conftest.py), or else a child pytest's run of them all."""
    if fd.every_check_ran():
        return set(fd.CHECKED)
    report = tmp_path / "checked.json"
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(Path(__file__).with_name(fd.CHECKS_FILE)),
            "-q",
            "-n0",
        ],
        env={**os.environ, fd.REPORT: str(report)},
        capture_output=True,
        text=True,
    )
    assert child.returncode == 0, f"the finite-difference checks failed:\n{child.stdout[-3000:]}"
    return set(json.loads(report.read_text()))


def test_every_op_has_a_finite_difference_check(tmp_path):
    checked = checked_by_finite_differences(tmp_path)
    missing = sorted(set(NODES) - checked - set(NOT_DIFFERENTIABLE))
    assert not missing, f"add a finite-difference check (test_gradients.py) for: {missing}"
