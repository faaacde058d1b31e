"""What `import numpy` and `import time` give a snippet: the array maths and clocks tutorials use.

A face is a module holding a chosen list of the real module's functions and nothing else: no
file, pickle, network or ctypes functions, and no way to sleep. Like the import allowlist this
is for clear messages, not security: the real modules are one attribute walk away, and what
stops a snippet that walks there is the kernel.
"""

from __future__ import annotations

import time as _time
from types import ModuleType

import numpy as _np


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


NUMPY_NAMES = _words(
    """
array asarray zeros ones empty full zeros_like ones_like empty_like full_like arange linspace
logspace eye identity diag diagonal meshgrid copy tril triu
add subtract multiply divide true_divide floor_divide power float_power mod remainder fmod
negative positive abs absolute sign exp exp2 expm1 log log2 log10 log1p sqrt square cbrt
reciprocal sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh
hypot degrees radians deg2rad rad2deg maximum minimum fmax fmin clip floor ceil round around
rint trunc isnan isinf isfinite nan_to_num heaviside logaddexp
sum prod mean std var max min amax amin argmax argmin cumsum cumprod median percentile quantile
average all any count_nonzero nansum nanmean nanmax nanmin ptp histogram bincount
dot vdot matmul inner outer tensordot einsum trace transpose kron cross
reshape ravel squeeze expand_dims concatenate stack vstack hstack column_stack split array_split
tile repeat flip fliplr flipud roll rot90 swapaxes moveaxis broadcast_to broadcast_arrays
atleast_1d atleast_2d atleast_3d where argsort sort unique nonzero argwhere take searchsorted
diff allclose isclose array_equal logical_and logical_or logical_not logical_xor greater less
equal not_equal greater_equal less_equal shape ndim size
float16 float32 float64 int8 int16 int32 int64 uint8 bool_ complex64 complex128 dtype finfo
iinfo ndarray newaxis pi e inf nan euler_gamma
"""
)

RANDOM_NAMES = _words(
    """
seed rand randn randint random random_sample normal uniform choice shuffle permutation
standard_normal binomial poisson exponential beta gamma default_rng
"""
)

LINALG_NAMES = _words(
    """
norm inv det solve eig eigh eigvals eigvalsh svd qr matrix_rank pinv lstsq cholesky
matrix_power LinAlgError
"""
)

TIME_NAMES = _words(
    """
time time_ns perf_counter perf_counter_ns monotonic monotonic_ns process_time process_time_ns
gmtime localtime strftime ctime asctime mktime struct_time
"""
)


class Face(ModuleType):
    """A module that says plainly what it leaves out."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"gradtrace's {self.__name__} offers {self.__doc__}; '{name}' is not available "
            "in snippets"
        )


def _face(name: str, offers: str, source, names: tuple[str, ...], **extra) -> Face:
    face = Face(name, offers)
    for attribute in names:
        setattr(face, attribute, getattr(source, attribute))
    for attribute, value in extra.items():
        setattr(face, attribute, value)
    return face


def _sleep(seconds: float) -> None:
    """time.sleep: returns at once. Output is shown when a run ends, so waiting shows nothing
    and would only hold a slot another learner could use."""
    if float(seconds) < 0:
        raise ValueError("sleep length must be non-negative")


def build() -> dict[str, ModuleType]:
    """The faces by import name, built once in the zygote."""
    offers_numpy = "array maths only (no files, pickles or ctypes)"
    random = _face("numpy.random", "random numbers only", _np.random, RANDOM_NAMES)
    linalg = _face("numpy.linalg", "linear algebra only", _np.linalg, LINALG_NAMES)
    numpy = _face("numpy", offers_numpy, _np, NUMPY_NAMES, random=random, linalg=linalg)
    numpy.__version__ = _np.__version__
    clock = _face("time", "clocks only", _time, TIME_NAMES, sleep=_sleep)
    return {"numpy": numpy, "numpy.random": random, "numpy.linalg": linalg, "time": clock}
