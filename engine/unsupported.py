"""Clear failures for the parts of PyTorch the engine does not implement.

A name real PyTorch has but the engine lacks raises UnsupportedByGradtrace naming it; a name
PyTorch does not have either raises the AttributeError PyTorch would raise.
"""

from __future__ import annotations

import difflib
import functools
import json
import pathlib

MAX_NEAR = 5  # names offered in place of one the engine lacks


class UnsupportedByGradtrace(Exception):  # noqa: N818 - it names a limit, not a failure kind
    """Something PyTorch does that gradtrace's engine does not.

    Deliberately not a RuntimeError (nor NotImplementedError, which is one): a learner's
    `except RuntimeError:` is written for PyTorch's errors and must not hide gradtrace's limits.
    """


@functools.cache
def _surface() -> dict[str, frozenset[str]]:
    path = pathlib.Path(__file__).with_name("torch_surface.json")
    return {k: frozenset(v) for k, v in json.loads(path.read_text()).items()}


def missing_attribute(namespace: str, name: str, supported: list[str] | None = None) -> Exception:
    """The exception for `namespace.name` when the engine has no such attribute."""
    if name.startswith("__") or name not in _surface().get(namespace, ()):
        if namespace == "Tensor":
            return AttributeError(f"'Tensor' object has no attribute '{name}'")
        return AttributeError(f"module '{namespace}' has no attribute '{name}'")
    qualified = f"{namespace}.{name}"
    listing = ""
    if supported:  # a few names like it, not all of them: `torch` has hundreds
        near = difflib.get_close_matches(name, supported, n=MAX_NEAR, cutoff=0.6)
        listing = f" (gradtrace has {len(supported)} of {namespace}'s names"
        listing += f"; close to this one: {', '.join(near)})" if near else ")"
    return UnsupportedByGradtrace(f"{qualified} is not supported by gradtrace's engine{listing}")


class _MissingTensorAttribute:
    """A name PyTorch's Tensor has and the engine lacks: reading it raises missing_attribute's
    UnsupportedByGradtrace. Names PyTorch lacks too are simply absent: Python's own
    AttributeError for them reads as PyTorch's."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, t, owner=None):
        raise missing_attribute("Tensor", self.name)


def mark_missing_tensor_attributes(tensor_class: type) -> None:
    """Put a _MissingTensorAttribute on `tensor_class` for each of PyTorch's Tensor names it
    lacks, once all its methods are attached.

    Descriptors rather than a Tensor.__getattr__: CPython does not specialise attribute reads
    on a class that has one, and every op reads its tensors' attributes (a tenth of a scalar
    loop's time went there).
    """
    for name in _surface()["Tensor"]:
        if not name.startswith("__") and not hasattr(tensor_class, name):
            setattr(tensor_class, name, _MissingTensorAttribute(name))
