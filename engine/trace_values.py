"""How a tensor's values are written into a trace: whole when small, summarised when large.

JSON has no nan or infinity, so they are written as the strings "nan", "inf" and "-inf" and a
trace always passes `json.dumps(..., allow_nan=False)`. float32 numbers are written as the
shortest decimal that reads back as the same float32 (0.1, not 0.10000000149011612), which is
also how PyTorch prints them.

Finding those decimals one number at a time costs about a microsecond each, and a training loop
records tens of thousands, so a `ValueTable` snapshots arrays while the snippet runs and writes
them all out at the end, in one vectorised pass.
"""

from __future__ import annotations

import gc
import math
from typing import Any

import numpy as np

WHOLE_LIMIT = 64  # tensors with at most this many elements are written out in full
FIRST_FEW = 6  # how many leading entries a summary keeps

_NONFINITE_NAMES = {math.inf: "inf", -math.inf: "-inf"}
_POWERS_OF_TEN = 10.0 ** np.arange(23)  # exact in float64 up to 1e22
_dtype_names: dict[np.dtype, str] = {}


def dtype_name(dtype: np.dtype) -> str:
    """PyTorch's name for a dtype, without "torch.": float32, int64, bool."""
    name = _dtype_names.get(dtype)
    if name is None:  # dtype.name is surprisingly slow, and this is on the hot path
        name = _dtype_names[dtype] = dtype.name
    return name


def encode(array: np.ndarray) -> Any:
    """A JSON value for an array: a number (0-d), nested lists, or a summary object."""
    flat = array.ravel()
    if array.size <= WHOLE_LIMIT:
        return _shaped(_json_list(flat), array.shape)
    if flat.dtype.char == "f":
        return _summary(array.shape, _json_list(_float32_stats(flat)))
    mean = np.add.reduce(flat, dtype=np.float64) / flat.size
    return {
        "shape": list(array.shape),
        "min": _json_list(np.minimum.reduce(flat, keepdims=True))[0],
        "max": _json_list(np.maximum.reduce(flat, keepdims=True))[0],
        "mean": _json_list(np.array([mean]))[0],
        "first": _json_list(flat[:FIRST_FEW]),
    }


def shortest_float32(values: np.ndarray) -> np.ndarray:
    """float64s whose repr is the shortest decimal that reads back as each float32.

    Rounding to d significant digits by an exact power of ten gives the float64 nearest to
    that d-digit decimal, so its repr is that decimal; 9 digits always read back. The fewest
    digits that do is found by a binary search on d, a handful of vectorised passes. Outside
    1e-14..1e22 powers of ten stop being exact and numpy's own formatting, one number at a
    time, takes over. Zeros, nan and inf come back unchanged.
    """
    values = values.astype(np.float32, copy=False)
    wide = values.astype(np.float64)
    out = wide.copy()
    magnitude = np.abs(wide)
    at = np.flatnonzero((magnitude >= 1e-14) & (magnitude <= 1e22))
    x, want = wide[at], values[at]
    exponent = np.floor(np.log10(magnitude[at])).astype(np.int64)
    low, high = np.ones(at.size, np.int64), np.full(at.size, 9)
    while at.size:
        digits = (low + high) // 2  # at most 8: 9 digits is never tried, it always works
        rounded = _round_digits(x, exponent, digits)
        same = rounded.astype(np.float32) == want
        out[at[same]] = rounded[same]
        high = np.where(same, digits, high)
        low = np.where(same, low, digits + 1)
        going = low < high
        nine = np.flatnonzero(~going & (high == 9))
        out[at[nine]] = _round_digits(x[nine], exponent[nine], high[nine])
        at, x, want, exponent = at[going], x[going], want[going], exponent[going]
        low, high = low[going], high[going]
    unusual = np.flatnonzero(((magnitude < 1e-14) & (wide != 0)) | (magnitude > 1e22))
    for i in unusual[np.isfinite(wide[unusual])].tolist():
        out[i] = float(str(values[i]))
    return out


def _round_digits(x: np.ndarray, exponent: np.ndarray, digits: np.ndarray) -> np.ndarray:
    """x rounded to `digits` significant digits, as the float64 nearest to that decimal."""
    shift = digits - 1 - exponent  # round to a multiple of 10**-shift
    scale = _POWERS_OF_TEN[np.abs(shift)]
    rounded = x * scale
    np.round(rounded, out=rounded)
    rounded /= scale
    big = np.flatnonzero(shift < 0)  # numbers of 1e9 and up: divide first, then multiply
    if big.size:
        rounded[big] = np.round(x[big] / scale[big]) * scale[big]
    return rounded


class _Ready:
    """A value encoded on the spot (dtypes other than float32 are rare and cheap)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class ValueTable:
    """Snapshots of arrays taken while a snippet runs, written into the trace at the end.

    `put(container, key, array)` reserves `container[key]` for the array's JSON value and
    snapshots the array (it may change in place later); `resolve()` fills every reserved place.
    `add` + `place` let one snapshot fill several places.
    """

    def __init__(self) -> None:
        self._snapshots: list[np.ndarray] = []  # flat float32: the values, or a summary's stats
        self._shapes: list[tuple] = []
        self._summaries: list[bool] = []
        self._places: list[tuple] = []  # (container, key, handle)

    def add(self, array: np.ndarray) -> int | _Ready:
        """Snapshot an array now; the handle says where its JSON value goes later."""
        if array.dtype.char != "f":
            return _Ready(encode(array))
        summarised = array.size > WHOLE_LIMIT
        flat = array.ravel()
        self._snapshots.append(_float32_stats(flat) if summarised else flat.copy())
        self._shapes.append(array.shape)
        self._summaries.append(summarised)
        return len(self._snapshots) - 1

    def place(self, container, key, handle: int | _Ready) -> None:
        if type(handle) is _Ready:
            container[key] = handle.value
        else:
            self._places.append((container, key, handle))

    def put(self, container, key, array: np.ndarray) -> None:
        self.place(container, key, self.add(array))

    def resolve(self) -> None:
        """Write every reserved place; the table is empty afterwards."""
        if not self._snapshots:
            return
        # this builds many lists and no cycles: the collector would only slow it down
        collecting = gc.isenabled()
        gc.disable()
        try:
            self._resolve()
        finally:
            if collecting:
                gc.enable()
        self.__init__()

    def _resolve(self) -> None:
        values = np.concatenate(self._snapshots)
        short = shortest_float32(values)
        entries = short.tolist()
        sizes = [snapshot.size for snapshot in self._snapshots]
        # nan and inf become strings; a snapshot holding one is nested by hand below
        nonfinite = np.flatnonzero(~np.isfinite(values))
        for i in nonfinite.tolist():
            value = entries[i]
            entries[i] = "nan" if value != value else _NONFINITE_NAMES[value]
        offsets = np.cumsum([0, *sizes])
        dirty = set(np.searchsorted(offsets, nonfinite, side="right").tolist())
        decoded = []
        start = 0
        for handle, (size, shape) in enumerate(zip(sizes, self._shapes, strict=True)):
            stop = start + size
            if self._summaries[handle]:
                decoded.append(_summary(shape, entries[start:stop]))
            elif len(shape) == 0:
                decoded.append(entries[start])
            elif len(shape) == 1:
                decoded.append(entries[start:stop])
            elif handle + 1 in dirty:
                decoded.append(_shaped(entries[start:stop], shape))
            else:  # numpy nests the lists itself, faster than Python would
                decoded.append(short[start:stop].reshape(shape).tolist())
            start = stop
        for container, key, handle in self._places:
            container[key] = decoded[handle]


def _json_list(flat: np.ndarray) -> list:
    """A flat array's entries as JSON values."""
    char = flat.dtype.char
    if char == "f":
        values = shortest_float32(flat).tolist()
    elif char in "de":
        values = flat.tolist()
    else:
        return flat.tolist()
    for i in np.flatnonzero(~np.isfinite(flat)).tolist():
        value = values[i]
        values[i] = "nan" if value != value else _NONFINITE_NAMES[value]
    return values


def _shaped(entries: list, shape: tuple) -> Any:
    """Nest a flat list into `shape` (a bare number for 0-d)."""
    if not shape:
        return entries[0]
    if 0 in shape:
        return np.empty(shape).tolist()  # nothing to convert; keeps shapes like (2, 0)
    for size in reversed(shape[1:]):
        if size == 1:
            entries = [[v] for v in entries]
        else:
            entries = [entries[i : i + size] for i in range(0, len(entries), size)]
    return entries


def _float32_stats(flat: np.ndarray) -> np.ndarray:
    """min, max, mean (in float32, as mean() gives it) and the first few entries."""
    head = flat[:FIRST_FEW]
    stats = np.empty(3 + head.size, np.float32)
    stats[0] = np.minimum.reduce(flat)
    stats[1] = np.maximum.reduce(flat)
    stats[2] = np.add.reduce(flat) / flat.size
    stats[3:] = head
    return stats


def _summary(shape: tuple, stats: list) -> dict:
    return {
        "shape": list(shape),
        "min": stats[0],
        "max": stats[1],
        "mean": stats[2],
        "first": stats[3:],
    }
