"""Print tensors exactly as PyTorch 2.x does with its default print options.

`tensor_repr` takes a plain numpy array plus the tensor's metadata and returns the string
`repr(t)` / `print(t)` would show for the equivalent torch.Tensor, e.g.::

    tensor([[1.5000e+00, -2.0000e+00], ...])
    tensor(12., grad_fn=<MulBackward0>)

The rules (checked against real PyTorch by tests/engine/test_printing.py):

* One formatting style is chosen for the whole tensor from its nonzero finite values
  (only the ones that would be shown, if the tensor is summarised):
  - integer style (`3.`) when every such value is a whole number,
  - fixed style with 4 decimals (`0.1000`),
  - scientific style (`1.0000e-05`) when the largest/smallest ratio exceeds 1000, the
    largest exceeds 1e8, or (non-integer only) the smallest is below 1e-4.
* Every element is right-aligned to the widest such value. nan/inf/zeros do not count
  towards that width, so they may stick out (`tensor([-0.0000, 1.5000])`).
* Rows wrap at 80 columns; tensors with more than 1000 elements show 3 items at each edge
  of every dimension with `...` between.
* Suffixes (`dtype=`, `grad_fn=`/`requires_grad=True`) follow the values and move to a new
  line, indented under the values, when they would pass 80 columns.

Those numbers (4 decimals, 1000, 3, 80) and the automatic choice of scientific style are
torch.set_printoptions' defaults: `set_printoptions` below changes them for the rest of a run,
as PyTorch's does for the rest of a process, and engine.snippet resets them before each run.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from engine import dtypes


@dataclasses.dataclass
class PrintOptions:
    """torch.set_printoptions' settings, with PyTorch's defaults."""

    precision: int = 4
    threshold: float = 1000  # more elements than this are summarised with `...`
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None  # None: chosen per tensor from its values


OPTIONS = PrintOptions()

# torch.set_printoptions(profile=...): precision, threshold, edgeitems, linewidth
PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
) -> None:
    """torch.set_printoptions: a profile first, then each option given on top of it.

    As in PyTorch an unknown profile is ignored, and sci_mode is set by every call: leaving it
    out puts the automatic choice back.
    """
    if profile in PROFILES:
        OPTIONS.precision, OPTIONS.threshold, OPTIONS.edgeitems, OPTIONS.linewidth = PROFILES[
            profile
        ]
    if precision is not None:
        OPTIONS.precision = precision
    if threshold is not None:
        OPTIONS.threshold = threshold
    if edgeitems is not None:
        OPTIONS.edgeitems = edgeitems
    if linewidth is not None:
        OPTIONS.linewidth = linewidth
    OPTIONS.sci_mode = sci_mode


def reset_printoptions() -> None:
    """Every option back to PyTorch's default, as a fresh process has them."""
    set_printoptions(profile="default")


PREFIX = "tensor("

NUMPY_DTYPES: dict[str, type[np.generic]] = {
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "bool": np.bool_,
}

# Dtypes PyTorch treats as default and so leaves out of the repr: the default float dtype
# (float32 unless torch.set_default_dtype changed it), and int64 and bool, what plain Python ints
# and bools become.
DEFAULT_DTYPES = {"int64", "bool"}


def _shows_dtype(dtype: str) -> bool:
    return dtype not in DEFAULT_DTYPES and dtype != dtypes.default_float().name


class _Formatter:
    """Decides one style and one width for every element of a tensor."""

    def __init__(self, shown: np.ndarray) -> None:
        self.floating = shown.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.width = 1

        if not self.floating:
            for value in shown.ravel().tolist():
                self.width = max(self.width, len(str(value)))
            return

        flat = shown.ravel()
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            # Only zeros/nan/inf: integer style, and nothing to measure a width from.
            return

        # Ratios are taken in float64 so float16/float32 extremes cannot overflow.
        magnitudes = np.abs(vals).astype(np.float64)
        lo, hi = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if OPTIONS.sci_mode is None:  # whole numbers are never below 1e-4: only too_wide counts
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = bool(OPTIONS.sci_mode)

        precision = OPTIONS.precision
        for value in vals.tolist():
            if self.sci_mode:
                text = f"{value:.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}."
            else:
                text = f"{value:.{precision}f}"
            self.width = max(self.width, len(text))

    def format(self, value: float | int | bool) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:.{OPTIONS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            # The trailing dot marks a float; nan/inf already read as floats.
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{OPTIONS.precision}f}"
        return text.rjust(self.width)


def _summarized(values: np.ndarray) -> np.ndarray:
    """The elements that stay visible when a large tensor is printed with `...`."""
    edge = OPTIONS.edgeitems
    if values.ndim == 0:
        return values
    if values.ndim > 1 and not edge:
        # PyTorch measures nothing then; a vector keeps all its elements, since its
        # values[-0:] is the whole vector
        return np.empty((0,) * values.ndim, values.dtype)
    rows = [*values[:edge], *values[-edge:]] if values.shape[0] > 2 * edge else list(values)
    if values.ndim == 1:
        return np.array(rows, dtype=values.dtype)
    return np.stack([_summarized(row) for row in rows])


def _vector_str(values: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    edge = OPTIONS.edgeitems
    # Each element takes its width plus ", "; at least one element per line.
    per_line = max(1, (OPTIONS.linewidth - indent) // (fmt.width + 2))
    if summarize and not edge:
        items = ["..."]
    elif summarize and values.shape[0] > 2 * edge:
        items = (
            [fmt.format(v) for v in values[:edge].tolist()]
            + [" ..."]
            + [fmt.format(v) for v in values[-edge:].tolist()]
        )
    else:
        items = [fmt.format(v) for v in values.tolist()]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(values: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if values.ndim == 0:
        return fmt.format(values.item())
    if values.ndim == 1:
        return _vector_str(values, indent, summarize, fmt)

    def sub(i: int) -> str:
        return _nested_str(values[i], indent + 1, summarize, fmt)

    n, edge = values.shape[0], OPTIONS.edgeitems
    if summarize and n > 2 * edge:
        parts = [sub(i) for i in range(edge)] + ["..."]
        parts += [sub(i) for i in range(n - edge, n)]
    else:
        parts = [sub(i) for i in range(n)]
    # Blocks of a k-d tensor are separated by k-2 blank lines.
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    # PyTorch counts the last line as 2 characters longer than it really is (the ", "
    # it is about to add); copy that so wrapping happens at the same places.
    last_line = len(text) - text.rfind("\n") + 1
    out = [text]
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > OPTIONS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last_line += len(suffix) + 2
    out.append(")")
    return "".join(out)


def tensor_repr(
    values: np.ndarray,
    dtype: str,
    *,
    requires_grad: bool = False,
    grad_fn: str | None = None,
) -> str:
    """What print(t) / repr(t) shows for a tensor: 'tensor([4., 5., 6.])',
    'tensor(12., grad_fn=<MulBackward0>)' ..."""
    if dtype not in NUMPY_DTYPES:
        raise ValueError(f"unsupported dtype {dtype!r}")
    values = np.asarray(values, dtype=NUMPY_DTYPES[dtype])
    indent = len(PREFIX)
    suffixes = []

    if values.size == 0:
        # Nothing to show, so the shape (unless it is plain (0,)) and any non-float32
        # dtype have to be spelled out.
        body = "[]"
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if dtype != dtypes.default_float().name:
            suffixes.append(f"dtype=torch.{dtype}")
    else:
        if not OPTIONS.edgeitems:
            suffixes.append(f"size={tuple(values.shape)}")
        if _shows_dtype(dtype):
            suffixes.append(f"dtype=torch.{dtype}")
        if values.dtype == np.float16:
            # PyTorch prints half tensors through float32.
            values = values.astype(np.float32)
        summarize = values.size > OPTIONS.threshold
        fmt = _Formatter(_summarized(values) if summarize else values)
        body = _nested_str(values, indent, summarize, fmt)

    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(PREFIX + body, suffixes, indent)
