"""gradtrace's engine: a numpy autograd with PyTorch's surface. `import engine as torch` works.

Only numpy and the standard library are used here; nothing in this package knows about the web,
the sandbox or drawing. A Tracer (engine.tracer) records what it does when one is active.
"""

from engine import accelerator, autograd, backends, cuda, dtypes, linalg, nn, ops, optim, utils  # noqa: F401 - ops attaches Tensor's methods
from engine.creation import (
    arange,
    as_tensor,
    bernoulli,
    cat,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    get_rng_state,
    initial_seed,
    linspace,
    logspace,
    manual_seed,
    multinomial,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_default_tensor_type,
    set_rng_state,
    stack,
    tensor,
    where,
    zeros,
    zeros_like,
)
from engine.devices import device, get_default_device, set_default_device
from engine.dtypes import (
    bfloat16,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from engine.dtypes import bool_ as bool  # noqa: A001 - torch.bool
from engine.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from engine.legacy import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from engine.ops.linalg import bmm, dot, einsum, matmul, mm, mv, outer, vdot
from engine.ops.out import with_out
from engine.ops.pointwise import can_cast, promote_types, result_type
from engine.ops.views import broadcast_tensors, hstack, vstack
from engine.printing import set_printoptions
from engine.random import TorchGenerator as Generator
from engine.random import default_generator
from engine.shape import Size
from engine.shape import broadcast_shapes_of as broadcast_shapes
from engine.tensor import Tensor
from engine.unsupported import mark_missing_tensor_attributes, missing_attribute

mark_missing_tensor_attributes(Tensor)  # every module that attaches Tensor methods is imported

float = float32  # noqa: A001
double = float64
long = int64
int = int32  # noqa: A001
half = float16
short = int16

# The local part names the trace the engine records: a stored trace's id hashes it, so a snippet
# stored before a trace change (gradtrace.5: the trace says, `unseeded_random`, whether the
# snippet drew from torch's default generator before seeding it) runs afresh.
__version__ = "2.13.0+gradtrace.5"


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(t: Tensor) -> int:
    return t.numel()


def _method(name: str):
    """torch.exp(t) and friends: the module-level twin of a Tensor method."""

    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            input = tensor(input)
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    return function


_METHODS = [
    "exp",
    "log",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "sqrt",
    "abs",
    "neg",
    "reciprocal",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "softmax",
    "log_softmax",
    "sum",
    "mean",
    "max",
    "min",
    "argmax",
    "argmin",
    "nonzero",
    "argwhere",
    "t",
    "transpose",
    "permute",
    "reshape",
    "flatten",
    "squeeze",
    "unsqueeze",
    "clone",
    "detach",
    "pow",
    "add",
    "sub",
    "mul",
    "div",
    "unbind",
    "allclose",
    "equal",
    # reductions and scans
    "prod",
    "var",
    "std",
    "norm",
    "cumsum",
    "cumprod",
    "logsumexp",
    "topk",
    "sort",
    "argsort",
    "amax",
    "amin",
    "any",
    "all",
    # elementwise
    "round",
    "floor",
    "ceil",
    "trunc",
    "frac",
    "sign",
    "sgn",
    "rsqrt",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "erfc",
    "exp2",
    "expm1",
    "log2",
    "log10",
    "log1p",
    "square",
    "isnan",
    "isinf",
    "isfinite",
    "isclose",
    "lerp",
    "addcmul",
    "addcdiv",
    "relu_",
    "sigmoid_",
    "tanh_",
    "exp_",
    "log_",
    "sqrt_",
    "abs_",
    "sin_",
    "cos_",
    "floor_",
    "round_",
    # shapes and indexing
    "chunk",
    "split",
    "tensor_split",
    "narrow",
    "movedim",
    "moveaxis",
    "swapaxes",
    "swapdims",
    "unflatten",
    "flip",
    "roll",
    "tril",
    "triu",
    "gather",
    "scatter",
    "scatter_add",
    "index_select",
    "masked_fill",
    "masked_select",
    "diagonal",
]
for _name in _METHODS:
    globals()[_name] = _method(_name)
del _name
globals().update(ops.reductions.FUNCTIONS)  # torch.sort, max, ... parse their own signatures
globals().update(ops.pointwise.FUNCTIONS)  # torch.maximum, fmax, ...: two tensors
# the "Tensors" tutorial's torch.matmul(a, b, out=c): out= on the arithmetic and products
for _name in ("add", "sub", "mul", "div", "matmul", "mm", "bmm", "mv"):
    globals()[_name] = with_out(globals()[_name])
del _name


def get_default_dtype() -> dtype:
    return dtypes.default_float()


def set_default_dtype(d: dtype) -> None:
    """Python floats (and float factories) become `d` from now on: float32 or float64."""
    dtypes.set_default_float(d)


__all__ = [
    "Size",
    "Tensor",
    "arange",
    "bmm",
    "broadcast_shapes",
    "broadcast_tensors",
    "einsum",
    "outer",
    "hstack",
    "vstack",
    "autograd",
    "bool",
    "can_cast",
    "cat",
    "dot",
    "vdot",
    "double",
    "dtype",
    "empty",
    "enable_grad",
    "eye",
    "float",
    "float32",
    "float64",
    "fmax",
    "fmin",
    "full",
    "full_like",
    "get_default_dtype",
    "initial_seed",
    "int",
    "int32",
    "int64",
    "is_grad_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
    "is_tensor",
    "linalg",
    "linspace",
    "long",
    "manual_seed",
    "matmul",
    "maximum",
    "minimum",
    "mm",
    "mv",
    "nn",
    "no_grad",
    "numel",
    "ones",
    "ones_like",
    "optim",
    "promote_types",
    "rand",
    "rand_like",
    "randint",
    "randn",
    "randn_like",
    "randperm",
    "result_type",
    "seed",
    "set_grad_enabled",
    "stack",
    "tensor",
    "where",
    "zeros",
    "zeros_like",
    *_METHODS,
    # creation, legacy constructors, dtypes, random draws and devices
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "Generator",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "as_tensor",
    "backends",
    "bernoulli",
    "bfloat16",
    "cuda",
    "default_generator",
    "device",
    "empty_like",
    "finfo",
    "float16",
    "from_numpy",
    "get_default_device",
    "get_rng_state",
    "half",
    "iinfo",
    "int16",
    "int8",
    "logspace",
    "multinomial",
    "normal",
    "randint_like",
    "set_default_device",
    "set_default_dtype",
    "set_default_tensor_type",
    "set_rng_state",
    "short",
    "uint8",
    # data loading, the accelerator a tutorial asks for, print options
    "accelerator",
    "set_printoptions",
    "utils",
]
_SUPPORTED = sorted(__all__)


def __getattr__(name: str):
    raise missing_attribute("torch", name, _SUPPORTED)


# Last, once every module is in: what type() and repr() print is PyTorch's (torch_names.py)
from engine import snippet, torch_modules, torch_names  # noqa: E402

torch_names.name_all(torch_modules.engine_modules(snippet.TORCH_MODULES))
