"""torch.backends: the accelerator switches teaching code reads or sets, on a CPU-only machine."""

from __future__ import annotations

from types import ModuleType

__all__ = ["cudnn", "mps", "cuda"]


def _no(*args, **kwargs) -> bool:
    return False


def _backend(name: str, **attributes) -> ModuleType:
    module = ModuleType(f"torch.backends.{name}")
    for key, value in attributes.items():
        setattr(module, key, value)
    return module


# torch.backends.cudnn.deterministic = True is common in reproducible training scripts; with no
# GPU it changes nothing, as in PyTorch
cudnn = _backend("cudnn", deterministic=False, benchmark=False, enabled=True, is_available=_no)
mps = _backend("mps", is_available=_no, is_built=_no)
cuda = _backend("cuda", is_built=_no)
