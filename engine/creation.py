"""Making new tensors: from data (torch.tensor), filled, ranges, random, and by joining tensors."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from engine import devices, dtypes, numerics
from engine import functions as fn
from engine import random as rng
from engine.numpy_names import numpy_names
from engine.record import apply, leaf
from engine.shape import broadcast_shapes, parse_shape, wrap_dim
from engine.snippet import SEED
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace


def _dtype(dtype, default: dtypes.dtype | None = None) -> np.dtype:
    if dtype is None:
        return (default or dtypes.default_float()).np
    return dtypes.check_storable(dtypes.resolve(dtype)).np


# ***** from data *****


def tensor(data, dtype: dtypes.dtype | None = None, requires_grad: bool = False, device=None):
    """torch.tensor: copy Python numbers, nested lists or arrays into a new leaf tensor."""
    devices.check(device)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        data = data._array
    array = array_from_data(data, dtype)
    return leaf(array, requires_grad, "tensor")


def array_from_data(data, dtype: dtypes.dtype | None) -> np.ndarray:
    """Numbers, nested lists, tensors or arrays as a new numpy array of `dtype` or, if None, of
    the dtype PyTorch infers for them."""
    values = _unwrap(data)
    target = None if dtype is None else _dtype(dtype)
    try:
        if target is not None and target.kind in "iu" and not isinstance(values, np.ndarray):
            # Python numbers into a small integer type: PyTorch checks each fits (-1 may wrap
            # into uint8, 300 may not)
            numbers = np.array(values)
            if numbers.dtype.kind in "iuf" and not _fits(numbers, target):
                raise RuntimeError(
                    f"value cannot be converted to type {target.name} without overflow"
                )
            return numbers.astype(target)
        with np.errstate(over="ignore"):  # 1e5 as float16 is inf, silently, as in PyTorch
            array = np.array(values, dtype=target)
    except ValueError:
        _check_ragged(values, _first_sizes(values), 0)  # PyTorch's message for uneven lists
        raise
    except OverflowError:
        raise RuntimeError(
            f"value cannot be converted to type {target.name} without overflow"
        ) from None
    if target is not None:
        return array
    if array.dtype.kind == "c":
        raise UnsupportedByGradtrace("complex tensors are not supported by gradtrace's engine")
    if array.dtype.kind not in "fiub":
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    inferred = _infer_dtype(values)
    return array if array.dtype == inferred.np else array.astype(inferred.np)


def _fits(numbers: np.ndarray, target: np.dtype) -> bool:
    """c10's overflow rule: within the type's range, and for an unsigned type negative integers
    that wrap (down to -max); a negative float never fits an unsigned type."""
    info = np.iinfo(target)
    if not numbers.size:
        return True
    low, high = numbers.min(), numbers.max()
    if target.kind == "u":
        floor = 0 if numbers.dtype.kind == "f" else -int(info.max)
        return floor <= low and high <= info.max
    return info.min <= low and high <= info.max


def _infer_dtype(values) -> dtypes.dtype:
    """PyTorch's rule: each element has a type (a Python float the default float, a Python int
    int64, numpy values and arrays their own dtype) and the tensor takes their promotion."""
    if isinstance(values, np.ndarray | np.generic):
        return dtypes.from_numpy(values.dtype)
    if isinstance(values, bool):
        return dtypes.bool_
    if isinstance(values, int):
        return dtypes.int64
    if isinstance(values, float):
        return dtypes.default_float()
    if isinstance(values, list | tuple):
        found = None
        for item in values:
            item_dtype = _infer_dtype(item)
            found = item_dtype if found is None else dtypes.promote(found, item_dtype)
        return found or dtypes.default_float()  # torch.tensor([]) is a float tensor
    return dtypes.from_numpy(np.asarray(values).dtype)


def _first_sizes(values) -> list[int]:
    """The shape PyTorch expects: the lengths of the first element at every depth."""
    sizes = []
    while isinstance(values, list | tuple):
        sizes.append(len(values))
        if not values:
            break
        values = values[0]
    return sizes


def _check_ragged(values, sizes: list[int], dim: int) -> None:
    if dim == len(sizes) or not isinstance(values, list | tuple):
        return
    if len(values) != sizes[dim]:
        raise ValueError(
            f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(values)})"
        )
    for item in values:
        _check_ragged(item, sizes, dim + 1)


def _unwrap(data):
    if isinstance(data, Tensor):
        return data._array
    if isinstance(data, list | tuple):
        return [_unwrap(d) for d in data]
    return data


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor on the very same memory as the array, with its dtype: writes show on both sides."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if any(stride < 0 for stride in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with "
            "negative strides are not currently supported. (You can probably work around this "
            "by making a copy of your array  with array.copy().) "
        )
    kind = ndarray.dtype.kind
    if kind == "c":
        raise UnsupportedByGradtrace("complex tensors are not supported by gradtrace's engine")
    if kind not in "fiub":
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{ndarray.dtype.type.__name__}. The only "
            "supported types are: float64, float32, float16, complex64, complex128, int64, "
            "int32, int16, int8, uint64, uint32, uint16, uint8, and bool."
        )
    dtypes.from_numpy(ndarray.dtype)  # uint16 and friends: PyTorch has them, the engine not
    return leaf(ndarray, False, "from_numpy")


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """torch.as_tensor: no copy when the data already is a tensor or an array of that dtype."""
    devices.check(device)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray):
        shared = from_numpy(data)
        return shared if dtype is None else shared.to(dtype)
    return tensor(data, dtype=dtype)


# ***** filled with a value *****


def _sizes(shape: tuple, size) -> tuple:
    """The shape given as `zeros(2, 3)`, `zeros((2, 3))` or `zeros(size=(2, 3))`."""
    if size is None:
        return shape
    if shape:
        raise TypeError("got multiple values for argument 'size'")
    return (size,)


def _shape(size: tuple) -> tuple[int, ...]:
    shape = parse_shape(size)
    for n in shape:
        if n < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {n}: {list(shape)}"
            )
    return shape


def zeros(*shape, size=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    shape = parse_shape(_sizes(shape, size))
    if any(n < 0 for n in shape):
        raise RuntimeError("zeros: Dimension size must be non-negative.")  # its own words
    return leaf(np.zeros(shape, _dtype(dtype)), requires_grad, "zeros")


def ones(*shape, size=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    return leaf(np.ones(_shape(_sizes(shape, size)), _dtype(dtype)), requires_grad, "ones")


def empty(*shape, size=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    # PyTorch leaves the memory uninitialised; zeros keep traces deterministic
    devices.check(device)
    return leaf(np.zeros(_shape(_sizes(shape, size)), _dtype(dtype)), requires_grad, "empty")


def full(size, fill_value, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    default = dtypes.of_scalar(fill_value)  # True: bool, 3: int64, 3.0: the default float
    dt, shape = _dtype(dtype, default), _shape((size,))
    _check_fill(fill_value, dt, math.prod(shape))
    if dt.kind in "iu" and isinstance(fill_value, int):
        fill_value = np.array(fill_value).astype(dt)  # -1 wraps into uint8, as in C++
    with np.errstate(over="ignore"):
        values = np.full(shape, fill_value, dt)
    return leaf(values, requires_grad, "full")


# how the overflow message of fill (torch.full) names each C++ type
_FILL_TYPE_NAMES = {
    "uint8": "uint8_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int",
    "int64": "int64_t",
    "float16": "c10::Half",
    "float32": "float",
}


def _check_fill(value, dt: np.dtype, numel: int) -> None:
    if dt.kind == "b" or isinstance(value, bool) or not isinstance(value, int | float):
        return
    if dt.kind in "iu":
        fits = _fits(np.array([value]), dt)
    elif dt == np.float64 or not math.isfinite(value) or (dt == np.float16 and numel == 1):
        fits = True  # a one-element half tensor is filled by a path that does not check
    else:
        fits = abs(value) <= float(np.finfo(dt).max)
    if not fits:
        raise RuntimeError(
            f"value cannot be converted to type {_FILL_TYPE_NAMES[dt.name]} without overflow"
        )


def _like(t: Tensor, dtype, device) -> tuple:
    devices.check(device)
    return t._array.shape, (t._array.dtype if dtype is None else _dtype(dtype))


def zeros_like(t: Tensor, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape, dt = _like(t, dtype, device)
    return leaf(np.zeros(shape, dt), requires_grad, "zeros_like")


def ones_like(t: Tensor, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape, dt = _like(t, dtype, device)
    return leaf(np.ones(shape, dt), requires_grad, "ones_like")


def empty_like(t: Tensor, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape, dt = _like(t, dtype, device)  # zeros again, where PyTorch leaves memory as it was
    return leaf(np.zeros(shape, dt), requires_grad, "empty_like")


def full_like(t: Tensor, fill_value, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape, dt = _like(t, dtype, device)
    return leaf(np.full(shape, fill_value, dt), requires_grad, "full_like")


def arange(start, end=None, step=1, dtype=None, requires_grad=False, device=None) -> Tensor:
    """torch.arange, element for element as PyTorch's CPU kernel computes it."""
    devices.check(device)
    if end is None:
        start, end = 0, start
    is_float = any(isinstance(n, float) for n in (start, end, step))
    dt = _dtype(dtype, dtypes.default_float() if is_float else dtypes.int64)
    if dt.kind == "b":
        raise UnsupportedByGradtrace(
            "torch.arange of dtype bool is not supported by gradtrace's engine"
        )
    if dt.kind == "f":
        return leaf(_float_range(start, end, step, dt), requires_grad, "arange")
    return leaf(_int_range(start, end, step, dt), requires_grad, "arange")


def _check_range(start, end, step) -> None:
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def _int_range(start, end, step, dt: np.dtype) -> np.ndarray:
    # integer outputs compute in int64, so a float step of 0.5 truncates to 0
    first, last, stride = int(start), int(end), int(step)
    if stride == 0 and step != 0:
        raise ValueError("step must be nonzero")
    _check_range(first, last, stride)
    if dt == np.int64:
        sign = (stride > 0) - (stride < 0)
        count = _c_division(last - first + stride - sign, stride)
    else:  # the other integer types size the range from the numbers as given
        count = math.ceil((float(end) - float(start)) / float(step))
    return (first + stride * np.arange(count, dtype=np.int64)).astype(dt)


def _c_division(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b > 0) else -quotient


# PyTorch's kernel writes two vectors at a time (AVX2: 8 floats, 4 doubles, 16 halves), each as
# `base + i * step` from a base rounded to the output type, and the rest one by one; ranges longer
# than the grain size are split between threads first, each chunk starting its vectors afresh.
# Compiled with FMA, every `a * b + c` there is one fused rounding.
_VECTOR_LANES = {np.dtype(np.float16): 16, np.dtype(np.float32): 8, np.dtype(np.float64): 4}
_THREADS = 2  # torch.get_num_threads() on the 2-core machine the goldens are recorded on
_GRAIN_SIZE = 32768


def _float_range(start, end, step, dt: np.dtype) -> np.ndarray:
    # the sums run in double, except for float16, whose accumulate type is float
    acc = np.float32 if dt == np.float16 else np.float64
    first, stride = acc(start), acc(step)
    _check_range(first, acc(end), stride)
    count = math.ceil((float(end) - float(start)) / float(step))
    fused = acc is np.float64 and rng.default_generator.capability == "avx2"

    def mul_add(a, b, c):
        return rng.fma64(a, b, c) if fused else a * b + c

    out = np.empty(count, dt)
    threads = max(1, min(_THREADS, -(-count // _GRAIN_SIZE)))
    chunk = max(1, -(-count // threads))
    lanes = _VECTOR_LANES[dt]
    with np.errstate(over="ignore"):  # float16 ranges past 65504 become inf, as in PyTorch
        for begin in range(0, count, chunk):
            stop = min(begin + chunk, count)
            vectorized = begin + (stop - begin) // (2 * lanes) * (2 * lanes)
            index = np.arange(begin, vectorized)
            lane = (index - begin) % lanes
            base = mul_add(stride, (index - lane).astype(acc), first).astype(dt).astype(acc)
            out[begin:vectorized] = mul_add(lane.astype(acc), stride, base).astype(dt)
            tail = np.arange(vectorized, stop).astype(acc)
            out[vectorized:stop] = mul_add(stride, tail, first).astype(dt)
    return out


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dtype(dtype)
    values = _linspace_like_torch(float(start), float(end), int(steps), dt)
    return leaf(values, requires_grad, "linspace")


def _linspace_like_torch(start: float, end: float, steps: int, dt: np.dtype) -> np.ndarray:
    """PyTorch fills the first half from `start` and the second half back from `end`."""
    if steps == 1:
        return np.array([start], dt)
    step = (end - start) / (steps - 1)
    i = np.arange(steps)
    halfway = steps // 2
    if dt.kind == "f":
        return numerics.linspace_like_torch(start, end, steps, dt)
    values = np.where(i < halfway, start + step * i, end - step * (steps - 1 - i))
    return values.astype(dt)


def eye(n, m=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    for name, value in (("n", n), ("m", m)):
        if value is not None and value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    return leaf(np.eye(n, m, dtype=_dtype(dtype)), requires_grad, "eye")


def logspace(start, end, steps, base=10.0, dtype=None, requires_grad=False, device=None) -> Tensor:
    """base ** linspace(start, end), each power taken in double as PyTorch's CPU kernel does."""
    devices.check(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dtype(dtype)
    steps = int(steps)
    if dt.kind == "f":
        # the ends are held in the output type, the step and the powers in double
        start, end = float(dt.type(start)), float(dt.type(end))
    else:
        start, end = int(start), int(end)
    base = float(base)
    if steps == 1:
        values = [math.pow(base, start)]
    else:
        step = float(end - start) / (steps - 1)
        halfway = steps // 2
        values = [
            math.pow(base, start + step * i if i < halfway else end - step * (steps - i - 1))
            for i in range(steps)
        ]
    return leaf(np.array(values, np.float64).astype(dt), requires_grad, "logspace")


# ***** random numbers, from the same generator PyTorch uses on the CPU *****


def manual_seed(seed: int):
    return rng.manual_seed(int(seed))


def seed() -> int:
    """torch.seed(): PyTorch reseeds from a random source, so what is drawn next differs from run
    to run; here the run's stand-in seed comes back, and the draws count as unseeded again."""
    return rng.default_generator.start_unseeded(SEED).initial_seed()


def initial_seed() -> int:
    return rng.default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state as PyTorch lays it out: 5056 bytes in a uint8 tensor."""
    return leaf(rng.default_generator.state_bytes(), False, "get_rng_state")


def set_rng_state(new_state: Tensor) -> None:
    rng.default_generator.load_state_bytes(new_state._array)


def set_default_tensor_type(t) -> None:
    """set_default_dtype's pre-2.1 spelling: torch.set_default_tensor_type(torch.DoubleTensor)."""
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    if isinstance(t, str):
        from engine.ops.conversion import BY_TYPE_NAME  # the names Tensor.type() prints

        if t not in BY_TYPE_NAME:
            raise TypeError(f"invalid type: '{t}'")
        t = BY_TYPE_NAME[t]
    dtypes.set_default_float(getattr(t, "dtype", t))  # torch.DoubleTensor carries its dtype


def _generator(generator) -> rng.Generator:
    if generator is None:
        return rng.default_generator
    if not isinstance(generator, rng.Generator):
        raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
    return generator


def _random_dtype(dtype) -> np.dtype:
    dt = _dtype(dtype)
    if dt.kind != "f" or dt == np.float16:
        raise UnsupportedByGradtrace(
            f"random floats of dtype {dt} are not supported by gradtrace's engine"
        )
    return dt


def rand(*shape, size=None, dtype=None, requires_grad=False, generator=None, device=None) -> Tensor:
    devices.check(device)
    dt = _random_dtype(dtype)
    values = _generator(generator).rand(_shape(_sizes(shape, size)), dt.name)
    return leaf(values, requires_grad, "rand")


def randn(
    *shape, size=None, dtype=None, requires_grad=False, generator=None, device=None
) -> Tensor:
    devices.check(device)
    dt = _random_dtype(dtype)
    values = _generator(generator).randn(_shape(_sizes(shape, size)), dt.name)
    return leaf(values, requires_grad, "randn")


def rand_like(t: Tensor, dtype=None, requires_grad=False, device=None) -> Tensor:
    return rand(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, device=device)


def randn_like(t: Tensor, dtype=None, requires_grad=False, device=None) -> Tensor:
    return randn(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, device=device)


def randint(*args, **kwargs) -> Tensor:
    """randint(high, size) or randint(low, high, size): int64 unless told, drawn as PyTorch's
    random_(low, high) draws (engine/random.py), its arguments parsed as PyTorch parses them."""
    _, bound = _randint_overloads().bind(args, kwargs)
    devices.check(bound["device"])
    low, high = int(bound.get("low", 0)), int(bound["high"])
    dt = _dtype(bound["dtype"], dtypes.int64)
    check_random_bounds(low, high, dt)
    values = _generator(bound.get("generator")).randint(low, high, _shape((bound["size"],)))
    return leaf(values.astype(dt), bound["requires_grad"], "randint")


@functools.cache
def _randint_overloads():
    from engine.ops.overloads import Overloads  # engine.ops imports this module

    return Overloads(
        "randint",
        *(
            f"({first}tuple of ints size, *, {gen}Tensor out = None, torch.dtype dtype = None, "
            "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
            "bool requires_grad = False)"
            for first in ("int high, ", "int low, int high, ")
            for gen in ("torch.Generator? generator, ", "")
        ),
    )


def check_random_bounds(low: int, high: int, dt: np.dtype) -> None:
    """random_(from, to)'s checks: a range that is not empty, with bounds the dtype holds."""
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    if dt.kind == "f" and dt != np.float16:
        exact = 1 << (np.finfo(dt).nmant + 1)
        if not (-exact <= low <= exact and -exact <= high - 1 <= exact):
            which = "from" if not -exact <= low <= exact else "to - 1"
            power = np.finfo(dt).nmant + 1
            name = "float" if dt == np.float32 else "double"
            warnings.warn(
                f"{which} is out of bounds [-(2^{power}), 2^{power}]. Due to precision "
                f"limitations {name} can support discrete uniform distribution only within "
                "this range. This warning will become an error in version 1.7 release, please "
                "fix the code in advance",
                UserWarning,
                stacklevel=3,
            )
        return
    if dt.kind == "b":
        lo, hi = 0, 1
    elif dt == np.float16:
        lo, hi = -65504, 65504
    else:
        lo, hi = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
    if not lo <= low <= hi:
        raise RuntimeError(f"from is out of bounds for {dtypes.CPP_NAMES[dt.name]}")
    if not lo <= high - 1 <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {dtypes.CPP_NAMES[dt.name]}")


def randint_like(
    t: Tensor, low=0, high=None, dtype=None, requires_grad=False, device=None
) -> Tensor:
    """randint_like(t, high) or randint_like(t, low, high): t's shape and, unless told, dtype."""
    shape, dt = _like(t, dtype, device)
    if high is None:
        low, high = 0, low
    values = rng.default_generator.randint(int(low), int(high), shape)
    return leaf(values.astype(dt), requires_grad, "randint_like")


def randperm(n, dtype=None, requires_grad=False, generator=None, device=None) -> Tensor:
    devices.check(device)
    values = _generator(generator).randperm(int(n)).astype(_dtype(dtype, dtypes.int64))
    return leaf(values, requires_grad, "randperm")


_NORMAL_SIGNATURES = (
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device "
    "device = None, bool pin_memory = False, bool requires_grad = False)\n"
)


def normal(
    mean, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False, device=None
) -> Tensor:
    """torch.normal in its four forms: tensor or number mean, tensor or number std.

    With tensors PyTorch draws standard normals of the broadcast shape first and then scales
    them in place (`* std`, then `+ mean`), one rounding each; with two numbers it draws
    normal(mean, std) of `size` directly.
    """
    devices.check(device)
    gen = _generator(generator)
    mean_is_tensor, std_is_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (mean_is_tensor or std_is_tensor):
        if size is None:
            got = f"{type(mean).__name__}, {type(std).__name__}"
            raise TypeError(
                f"normal() received an invalid combination of arguments - got ({got}), but "
                f"expected one of:\n{_NORMAL_SIGNATURES}"
            )
        dt = _random_dtype(dtype)
        values = gen.normal(_shape((size,)), float(mean), float(std), dt.name)
        return leaf(values, requires_grad, "normal")
    for operand in (mean, std):
        if isinstance(operand, Tensor) and operand._requires_grad:
            raise UnsupportedByGradtrace(
                "torch.normal with a mean or std that requires grad is not supported by "
                "gradtrace's engine (PyTorch records NormalBackward); draw torch.randn and "
                "scale it instead"
            )
    first = mean if mean_is_tensor else std
    dt = first._array.dtype
    shape = first._array.shape
    if mean_is_tensor and std_is_tensor:
        shape = broadcast_shapes(mean._array.shape, std._array.shape)
    if std_is_tensor and (std._array < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if mean_is_tensor and not std_is_tensor:
        values = gen.normal(shape, 0.0, float(std), dt.name)
        values = values + mean._array.astype(dt)
    else:
        values = gen.normal(shape, 0.0, 1.0, dt.name) * std._array.astype(dt)
        values = values + (mean._array.astype(dt) if mean_is_tensor else dt.type(mean))
    return leaf(np.asarray(values, dt), False, "normal")


def multinomial(
    input: Tensor,  # noqa: A002 - torch's name
    num_samples: int,
    replacement: bool = False,
    *,
    generator=None,
) -> Tensor:
    """torch.multinomial: indices drawn by each row's (unnormalised) probabilities."""
    probs = input._array
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if probs.dtype.kind != "f":
        raise RuntimeError(
            "multinomial only supports floating-point dtypes for input, got: "
            f"{dtypes.type_word(input.dtype)}"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > probs.shape[-1]:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if not (np.isfinite(probs).all() and (probs >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (probs.reshape(-1, probs.shape[-1]).sum(axis=-1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if probs.dtype == np.float16:
        raise UnsupportedByGradtrace(
            "torch.multinomial of float16 probabilities is not supported by gradtrace's engine"
        )
    drawn = _generator(generator).multinomial(probs, int(num_samples), bool(replacement))
    return leaf(drawn, False, "multinomial")


def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:  # noqa: A002 - torch's name
    """torch.bernoulli(probs): 1. with each element's probability, in probs' dtype; with a
    number p, every element has probability p (and only input's shape and dtype count)."""
    if input._array.dtype.kind != "f" or input._array.dtype == np.float16:
        raise UnsupportedByGradtrace(
            f"torch.bernoulli of dtype {input.dtype} is not supported by gradtrace's engine"
        )
    gen = _generator(generator)
    if p is None:
        drawn = gen.bernoulli(input._array)
    else:
        drawn = gen.bernoulli_scalar(input._array.shape, float(p))
    return leaf(drawn.astype(input._array.dtype), False, "bernoulli")


# ***** joining and choosing *****


def _same_dtype(tensors: list[Tensor]) -> list[np.ndarray]:
    result = tensors[0].dtype
    for t in tensors[1:]:
        result = dtypes.promote(result, t.dtype)
    return [t._array.astype(result.np, copy=False) for t in tensors]


@numpy_names
def stack(tensors, dim=0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0].shape
    for i, t in enumerate(tensors[1:], start=1):
        if t.shape != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    dim = wrap_dim(dim, len(first) + 1)
    return apply(fn.StackBackward0, tuple(tensors), arrays=tuple(_same_dtype(tensors)), dim=dim)


@numpy_names
def cat(tensors, dim=0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    ndim = tensors[0].ndim
    if ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    dim = wrap_dim(dim, ndim)
    for i, t in enumerate(tensors[1:], start=1):
        if t.ndim != ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ndim} and {t.ndim}"
            )
        for d in range(ndim):
            if d != dim and t.shape[d] != tensors[0].shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{tensors[0].shape[d]} but got size {t.shape[d]} for tensor number {i} in "
                    "the list."
                )
    return apply(fn.CatBackward0, tuple(tensors), arrays=tuple(_same_dtype(tensors)), dim=dim)


def where(condition: Tensor, input, other) -> Tensor:
    """torch.where, promoting as result_type does: a Python number beside a tensor is a
    wrapped number (int8 stays int8, and 300 does not fit it)."""
    numbers = [x for x in (input, other) if isinstance(x, bool | int | float)]
    a = input if isinstance(input, Tensor) else tensor(input)
    b = other if isinstance(other, Tensor) else tensor(other)
    if condition._array.dtype != np.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{dtypes.type_word(condition.dtype)}"
        )
    broadcast_shapes(broadcast_shapes(condition._array.shape, a._array.shape), b._array.shape)
    if len(numbers) == 2:
        arrays = _same_dtype([a, b])  # two numbers: tensor()'s dtypes, promoted
    else:
        from engine.ops.scalars import checked  # the ops build on this module

        given = ((a, input), (b, other))
        operands = [(t.dtype, t.ndim) for t, x in given if not isinstance(x, bool | int | float)]
        result = dtypes.result_type(operands, numbers).np
        for number in numbers:
            checked(np.empty(0, result), number)  # PyTorch's overflow check of a setting
        arrays = [t._array.astype(result, copy=False) for t in (a, b)]
    return apply(fn.WhereBackward0, (a, b), arrays=tuple(arrays), condition=condition._array)
