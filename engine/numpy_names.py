"""numpy's spellings that PyTorch's argument parser takes: `axis` for `dim` and `keepdims` for
`keepdim`, on every op it parses with those parameters (`x.sum(axis=0, keepdims=True)`,
`torch.cat(ts, axis=1)`). Ops written in Python in PyTorch (F.softmax, Tensor.norm, split,
unflatten) do not take them, so neither do the engine's."""

from __future__ import annotations

import functools
import inspect

# a parameter's name -> the numpy name PyTorch's parser also looks up
NUMPY_NAMES = {"dim": "axis", "keepdim": "keepdims"}


def numpy_names(function):
    """Let `function` take numpy's names for its `dim` and `keepdim`. Given both names, PyTorch
    binds its own and finds numpy's left over: "got an unexpected keyword argument 'axis'"."""
    own = inspect.signature(function).parameters
    aliases = {alias: name for name, alias in NUMPY_NAMES.items() if name in own}
    op = function.__name__

    @functools.wraps(function)
    def parsed(*args, **kwargs):
        if kwargs:
            for alias, name in aliases.items():
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{op}() got an unexpected keyword argument '{alias}'")
                    kwargs[name] = kwargs.pop(alias)
            for key in kwargs:
                if key not in own:  # PyTorch names the op alone, not Python's Class.method
                    raise TypeError(f"{op}() got an unexpected keyword argument '{key}'")
        return function(*args, **kwargs)

    return parsed
