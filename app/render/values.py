"""How a traced value reads: in a sentence ("4", "[4, 5, 6]", "a 32×64 tensor") and in a box.

A trace holds a value as a number (0-d), nested lists (up to 64 elements) or a summary object
for larger tensors; "nan", "inf" and "-inf" are strings. Sentences show up to six numbers and
name anything bigger by its shape, so a narration never turns into a wall of digits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SAY_LIMIT = 6  # a sentence lists a tensor's numbers when it has at most this many
BOX_CHARS = 26  # a box in the picture too, if they fit in this many characters


def number(x: Any) -> str:
    """One entry: 4.0 → "4", 0.2934289 → "0.2934", True → "True", "nan" stays "nan"."""
    if isinstance(x, bool):
        return "True" if x else "False"
    if isinstance(x, str):  # "nan", "inf", "-inf": how strict JSON spells them
        return x
    if isinstance(x, int):
        return str(x)
    if x == int(x) and abs(x) < 1e6:
        return str(int(x)) if x != 0 else "0"  # -0.0 reads as 0
    return f"{x:.4g}"


def shape_of(value: Any) -> list[int]:
    """The shape a traced value has: [] for a number, from nesting for lists, or as stored."""
    if isinstance(value, dict):
        return list(value["shape"])
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return shape


def size(shape: list[int]) -> int:
    total = 1
    for n in shape:
        total *= n
    return total


def dims(shape: list[int]) -> str:
    """[32, 64] → "32×64"; [] → "0-d"."""
    return "×".join(str(n) for n in shape) if shape else "0-d"


def nested(value: Any) -> str:
    """Nested lists written out: [[1, 2], [3, 4]]."""
    if isinstance(value, list):
        return "[" + ", ".join(nested(v) for v in value) + "]"
    return number(value)


def is_scalar(value: Any) -> bool:
    """A single number (a 0-d tensor's value)."""
    return not isinstance(value, (list, dict))


def say(value: Any) -> str:
    """A value as a sentence writes it: numbers when few, otherwise "a 32×64 tensor"."""
    if value is None:
        return "None"
    if is_scalar(value):
        return number(value)
    shape = shape_of(value)
    if isinstance(value, list) and size(shape) <= SAY_LIMIT:
        return nested(value)
    if len(shape) == 1:
        return f"a tensor of {shape[0]:,} values"
    text = dims(shape)
    # "an 8×4 tensor", "an 11×2 tensor": the article follows how the number is said
    an = text.startswith("8") or text.split("×")[0] in ("11", "18")
    return f"{'an' if an else 'a'} {text} tensor"


def box(value: Any) -> str:
    """A value as a box in the picture shows it: a few numbers, or the shape."""
    if value is None:
        return "None"
    if is_scalar(value):
        return number(value)
    shape = shape_of(value)
    if isinstance(value, list) and size(shape) <= SAY_LIMIT:
        text = nested(value)
        if len(text) <= BOX_CHARS:
            return text
    return f"{shape[0]:,} values" if len(shape) == 1 else dims(shape)


def same(*sums: list, to: Any) -> bool | None:
    """Whether the values in `sums`, added up, equal `to` (numbers or nested lists, as a trace
    keeps them); None when one is a summary (too large to keep) and cannot be compared."""
    try:
        total = np.sum([np.asarray(v, dtype=float) for v in sums], axis=0)
        other = np.asarray(to, dtype=float)
    except (TypeError, ValueError):
        return None
    return total.shape == other.shape and bool(np.allclose(total, other, equal_nan=True))
