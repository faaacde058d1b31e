"""torch.accelerator, as a CPU-only PyTorch sees it: no accelerator, none to count.

The "Build the Neural Network" tutorial opens with
`torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"`,
so those calls answer as on a machine without a GPU. Calls that reach for a device fail with
the RuntimeError PyTorch raises there; the rest of the module is refused.
"""

from __future__ import annotations

import warnings

from engine.devices import device
from engine.unsupported import missing_attribute

_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False) -> device | None:
    """None: there is no accelerator to name (check_available changes nothing then)."""
    return None


def device_count() -> int:
    return 0


def current_device_index() -> int:
    raise RuntimeError(_NONE_AVAILABLE)


def current_device_idx() -> int:
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def _on_a_device(where=None, /) -> None:
    """A device named (a string or torch.device) is not the accelerator PyTorch expects, there
    being none; an index or nothing finds no accelerator to access."""
    if where is not None and not isinstance(where, int):
        device(where)  # an unknown device type fails as PyTorch's parse does
        raise RuntimeError("Accelerator expected")
    raise RuntimeError(_NONE_AVAILABLE)


def synchronize(device=None, /) -> None:  # noqa: A002 - PyTorch's name
    _on_a_device(device)


def set_device_index(device, /) -> None:  # noqa: A002 - PyTorch's name
    _on_a_device(device)


def current_stream(device=None, /):  # noqa: A002 - PyTorch's name
    _on_a_device(device)


def get_device_capability(device=None, /) -> dict:  # noqa: A002 - PyTorch's name
    _on_a_device(device)


def empty_cache() -> None:
    raise RuntimeError(_NONE_AVAILABLE)


def memory_allocated(device_index=None, /) -> int:
    _on_a_device(device_index)


def max_memory_allocated(device_index=None, /) -> int:
    _on_a_device(device_index)


__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "current_stream",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "set_device_index",
    "synchronize",
]


def __getattr__(name: str):
    raise missing_attribute("torch.accelerator", name, __all__)
