"""torch.device, and the one rule about devices here: everything runs on the CPU.

`torch.device("cuda")` can be made, as in PyTorch (the idiom `"cuda" if torch.cuda.is_available()
else "cpu"` builds one before deciding); putting a tensor there fails with UnsupportedByGradtrace.
"""

from __future__ import annotations

from engine.unsupported import UnsupportedByGradtrace

# the device types PyTorch knows, in the order its message lists them
KNOWN_TYPES = (
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
    "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone",
)  # fmt: skip


class device:  # noqa: N801 - torch's name
    """Where a tensor lives: `device(type='cpu')`."""

    __slots__ = ("type", "index")

    def __init__(self, type, index: int | None = None) -> None:  # noqa: A002 - torch's keyword
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        elif isinstance(type, str):
            type, index = _parse(type, index)
        else:
            raise TypeError(f"device() received an invalid argument: {type!r}")
        self.type, self.index = type, index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


def _parse(text: str, index: int | None) -> tuple[str, int | None]:
    name, colon, number = text.partition(":")
    if name not in KNOWN_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(KNOWN_TYPES)} device type at start of device string: "
            f"{text}"
        )
    if colon:
        if not number.isdigit():
            raise RuntimeError(f"Invalid device string: '{text}'")
        index = int(number)
    return name, index


CPU = device("cpu")


def not_available(where) -> UnsupportedByGradtrace:
    """The error for putting a tensor anywhere but the CPU."""
    name = str(where)
    if name.startswith("cuda"):
        lead = "CUDA is not available in gradtrace"
    else:
        lead = f"device {name!r} is not available in gradtrace"
    return UnsupportedByGradtrace(
        f"{lead}: everything runs on the CPU (device {name!r} is not supported by gradtrace's "
        "engine; use 'cpu' or leave device= out)"
    )


def check(where) -> None:
    """Accept the CPU (or no device given) as a factory's device=; refuse every other."""
    if where is None:
        return
    if not isinstance(where, device):
        where = device(where)
    if where.type != "cpu":
        raise not_available(where)


def is_device(value) -> bool:
    """Whether a positional argument of Tensor.to() names a device ("cpu", "cuda:0", device)."""
    return isinstance(value, device | str)


def get_default_device() -> device:
    return CPU


def set_default_device(where) -> None:
    """torch.set_default_device: the CPU is the only choice here (None means the CPU too)."""
    check(where)
