"""PyTorch's argument parser for methods with overloads (sort, argsort, topk, max, min).

PyTorch binds the arguments of its C++ ops itself, not with Python's rules: `x.sort(True)` is a
TypeError (a bool is not an int dim), `x.sort(1, True, True)` too (`stable` is keyword-only),
and the message lists the overloads. `bind` picks the overload the arguments fit, or raises the
TypeError PyTorch raises, word for word for the mistakes a learner makes.

An overload is written as PyTorch prints it, "(int dim = -1, bool descending = False)"; a `?`
after a type ("bool? stable") lets None through without showing in the message.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import dtypes
from engine import random as rng
from engine.numpy_names import NUMPY_NAMES
from engine.tensor import Tensor

_NO_DEFAULT = object()


@dataclass(frozen=True)
class _Param:
    text: str  # as the message prints it: "int dim = -1", or "*"
    kind: str = ""
    name: str = ""
    nullable: bool = False
    default: object = _NO_DEFAULT
    keyword_only: bool = False


def _parse(signature: str) -> tuple[_Param, ...]:
    params, keyword_only = [], False
    for token in signature.strip("()").split(", "):
        if token == "*":
            keyword_only = True
            params.append(_Param("*"))
            continue
        if not token:
            params.append(_Param(""))  # "()": PyTorch still counts one (empty) slot
            continue
        declared, _, default = token.partition(" = ")
        kind, name = declared.rsplit(" ", 1)
        params.append(
            _Param(
                token.replace("?", ""),
                kind.rstrip("?"),
                name,
                kind.endswith("?") or default == "None",
                _literal(default) if default else _NO_DEFAULT,
                keyword_only,
            )
        )
    return tuple(params)


_CONSTANTS = {"False": False, "True": True, "None": None}


def _literal(text: str):
    return _CONSTANTS[text] if text in _CONSTANTS else int(text)


def _fits(param: _Param, value) -> bool:
    if value is None:
        return param.nullable
    if param.kind == "bool":
        return isinstance(value, bool | np.bool_)
    if param.kind == "int":
        if isinstance(value, Tensor):
            return value.ndim == 0 and value._array.dtype.kind in "iu"
        return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)
    if param.kind == "Tensor":
        return isinstance(value, Tensor)
    if param.kind == "tuple of ints":
        return isinstance(value, tuple | list) and all(
            isinstance(n, int | np.integer) and not isinstance(n, bool) for n in value
        )
    if param.kind == "torch.dtype":
        return isinstance(value, dtypes.dtype)
    if param.kind == "torch.Generator":
        return isinstance(value, rng.Generator)
    if param.kind in ("torch.device", "torch.layout"):
        return True  # the op itself refuses a device other than the CPU
    return isinstance(value, tuple | list)  # "tuple of Tensors"


def _type_name(value) -> str:
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


class Overloads:
    """The signatures of one op, in the order PyTorch tries (and prints) them."""

    def __init__(self, name: str, *signatures: str) -> None:
        self.name = name
        self.signatures = signatures
        self.params = [tuple(p for p in _parse(s) if p.kind) for s in signatures]

    def bind(self, args: tuple, kwargs: dict) -> tuple[int, dict]:
        """(which overload, its arguments by name with the defaults filled in)."""
        for i, params in enumerate(self.params):
            bound = _bind(self.name, params, args, kwargs)
            if isinstance(bound, dict):
                return i, bound
        given = len(args) + len(kwargs)
        plausible = [
            params
            for params in self.params
            if sum(p.default is _NO_DEFAULT for p in params) <= given <= len(params)
        ]
        if len(self.params) == 1 or len(plausible) == 1:
            raise TypeError(_bind(self.name, (plausible or self.params)[0], args, kwargs))
        raise TypeError(self._no_match(args, kwargs))

    def _no_match(self, args: tuple, kwargs: dict) -> str:
        keywords = list(reversed(kwargs))  # PyTorch lists them last first
        got = [_type_name(a) for a in args] + [f"{k}={_type_name(kwargs[k])}" for k in keywords]
        listed = ", ".join(got) if args else "".join(g + ", " for g in got)
        lines = [
            f"{self.name}() received an invalid combination of arguments - got ({listed}), "
            "but expected one of:"
        ]
        for signature in self.signatures:
            lines.append(f" * {signature.replace('?', '')}")
            why = _why_not(_parse(signature), args, kwargs, keywords)
            if why:
                lines.append(f"      didn't match because some of the {why}")
        return "\n".join(lines) + "\n"


def _bind(name: str, params: tuple[_Param, ...], args: tuple, kwargs: dict) -> dict | str:
    """The arguments by name, or PyTorch's message for why they do not fit."""
    positional = [p for p in params if not p.keyword_only]
    if len(args) > len(positional):
        required = sum(p.default is _NO_DEFAULT for p in params)
        span = "" if required == len(positional) else f"from {required} to "
        plural = "" if len(positional) == 1 else "s"
        return (
            f"{name}() takes {span}{len(positional)} positional argument{plural} but "
            f"{len(args)} were given"
        )
    bound, named = {}, set()  # named: the keywords taken, under PyTorch's name or numpy's
    for position, param in enumerate(params, 1):
        alias = NUMPY_NAMES.get(param.name)
        if position <= len(args) and not param.keyword_only:
            value, where = args[position - 1], f" (position {position})"
        elif param.name in kwargs:
            value, where = kwargs[param.name], ""
            named.add(param.name)
        elif alias in kwargs:
            value, where = kwargs[alias], ""
            named.add(alias)
        elif param.default is _NO_DEFAULT:
            return f'{name}() missing 1 required positional arguments: "{param.name}"'
        else:
            bound[param.name] = param.default
            continue
        if not _fits(param, value):
            return (
                f"{name}(): argument '{param.name}'{where} must be {param.kind}, "
                f"not {_type_name(value)}"
            )
        bound[param.name] = value
    taken = {p.name for p in positional[: len(args)]}
    for key in kwargs:
        if key in taken:
            return f"{name}() got multiple values for argument '{key}'"
        if key not in named:
            return f"{name}() got an unexpected keyword argument '{key}'"
    return bound


def _why_not(slots: tuple[_Param, ...], args: tuple, kwargs: dict, keywords: list) -> str:
    """The detail line PyTorch prints under an overload. It compares the arguments with the
    overload's printed slots one by one ("*" and "()" take a slot, a slot with a default never
    matches), and only when their counts are equal; it is PyTorch's rule, odd as it is."""
    if len(args) + len(kwargs) != len(slots):
        return ""
    by_name = {p.name: p for p in slots if p.kind}
    wrong = [
        k
        for k in keywords
        if k not in by_name
        or by_name[k].default is not _NO_DEFAULT
        or not _fits(by_name[k], kwargs[k])
    ]
    if wrong:
        return "keywords were incorrect: " + ", ".join(wrong)
    marked = []
    for slot, value in zip(slots, args, strict=False):
        fits = slot.kind and slot.default is _NO_DEFAULT and _fits(slot, value)
        marked.append(_type_name(value) if fits else f"!{_type_name(value)}!")
    if not any(m.startswith("!") for m in marked):
        return ""
    return "arguments have invalid types: (" + ", ".join(marked) + ")"
