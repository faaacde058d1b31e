"""torch.cuda, as a machine without a GPU sees it: nothing is available, seeding is a no-op.

Teaching code asks `torch.cuda.is_available()` and seeds with `torch.cuda.manual_seed_all(0)`;
both work as on a CPU-only PyTorch. Anything that needs a GPU fails with UnsupportedByGradtrace.
"""

from __future__ import annotations

from engine.devices import not_available

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    """PyTorch queues CUDA seeds until a GPU is used; with none, nothing happens."""


def manual_seed_all(seed: int) -> None:
    """See manual_seed."""


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'torch.cuda' has no attribute '{name}'")
    raise not_available("cuda")
