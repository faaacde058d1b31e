"""torch.utils: of its many modules, the one tutorials load data with."""

from engine.unsupported import missing_attribute
from engine.utils import data

__all__ = ["data"]


def __getattr__(name: str):
    raise missing_attribute("torch.utils", name, __all__)
