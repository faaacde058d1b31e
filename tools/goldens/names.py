"""PyTorch's names as snippets print them (issue 22): the module path of every class a snippet
reaches (`<class 'torch.nn.modules.container.Sequential'>`), functions' reprs and `__module__`,
isinstance relations, the torch modules' own names, and import errors. Paths differ from machine
to machine, so a snippet prints only the part of a path inside site-packages; that no server
path shows at all is tests/engine/test_locations.py's to check."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

S(
    "names-nn-module-classes",
    """
import torch
import torch.nn as nn
layers = [
    nn.Sequential(), nn.ModuleList(), nn.ModuleDict(), nn.Module(), nn.Linear(2, 3),
    nn.Identity(), nn.Flatten(), nn.Unflatten(1, (1, 2)), nn.Embedding(3, 2),
    nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Softmax(dim=1), nn.LogSoftmax(dim=1), nn.LeakyReLU(),
    nn.GELU(), nn.ELU(), nn.SiLU(), nn.Softplus(), nn.Hardtanh(), nn.ReLU6(), nn.PReLU(),
    nn.Dropout(), nn.LayerNorm(2), nn.BatchNorm1d(2),
    nn.RNN(1, 1), nn.LSTM(1, 1), nn.GRU(1, 1), nn.RNNCell(1, 1), nn.LSTMCell(1, 1),
    nn.GRUCell(1, 1),
    nn.MSELoss(), nn.L1Loss(), nn.CrossEntropyLoss(), nn.NLLLoss(), nn.BCELoss(),
    nn.BCEWithLogitsLoss(), nn.SmoothL1Loss(), nn.HuberLoss(), nn.KLDivLoss(),
]
for layer in layers:
    cls = type(layer)
    print(cls, cls.__module__, cls.__qualname__, cls.__name__)
print(type(nn.Parameter(torch.ones(1))), nn.Parameter.__module__)
print(nn.Linear.__mro__)
print(nn.MSELoss.__mro__)
print(nn.CrossEntropyLoss.__mro__)
print(nn.LSTM.__mro__)
print(nn.Parameter.__mro__[:2])
""",
)
S(
    "names-core-classes",
    """
import torch
x = torch.ones(2, 3)
print(type(x), torch.Tensor, torch.Tensor.__module__, torch.Tensor.__qualname__)
print(type(x.shape), torch.Size, torch.Size.__module__, torch.Size.__name__)
print(type(torch.float32), torch.dtype, torch.dtype.__module__)
print(type(torch.device("cpu")), torch.device, torch.device.__module__)
print(torch.Generator, type(torch.Generator()), torch.Generator.__module__)
print(type(torch.default_generator), torch.Generator.__qualname__)
print(torch.finfo, type(torch.finfo(torch.float32)), torch.iinfo, type(torch.iinfo(torch.int64)))
print(torch.FloatTensor, torch.LongTensor, torch.FloatTensor.__module__)
print(torch.no_grad, torch.enable_grad, torch.set_grad_enabled, torch.inference_mode)
print(type(torch.no_grad()), torch.no_grad.__module__, torch.no_grad.__qualname__)
print(torch.autograd.Function, torch.autograd.Function.__module__)
print(type(x.max(0)), type(torch.sort(x)), type(x.topk(1)), type(torch.min(x, 1)))
print(torch.return_types.max, torch.return_types.sort)
""",
)
S(
    "names-optimizers",
    """
import torch
w = torch.nn.Parameter(torch.ones(2))
opts = [
    torch.optim.SGD([w], lr=0.1), torch.optim.Adam([w]), torch.optim.AdamW([w]),
    torch.optim.RMSprop([w]), torch.optim.Adagrad([w]),
]
for opt in opts:
    print(type(opt), type(opt).__module__, type(opt).__mro__[1])
print(torch.optim.Optimizer, torch.optim.Optimizer.__module__)
sgd = opts[0]
schedulers = [
    torch.optim.lr_scheduler.StepLR(sgd, 2), torch.optim.lr_scheduler.ExponentialLR(sgd, 0.9),
    torch.optim.lr_scheduler.LambdaLR(sgd, lambda e: 1.0),
]
for s in schedulers:
    print(type(s), type(s).__module__)
print(torch.optim.lr_scheduler.StepLR.__mro__)
""",
)
S(
    "names-grad-fn-classes",
    """
import torch
x = torch.ones(2, requires_grad=True)
y = x * 2
z = (y + 1).sum()
for node in (y.grad_fn, z.grad_fn, z.grad_fn.next_functions[0][0]):
    cls = type(node)
    print(cls, cls.__module__, cls.__name__, cls.__qualname__)
print(type(y.grad_fn.next_functions[0][0]), type(y.grad_fn.next_functions[0][0]).__module__)
print(isinstance(y.grad_fn, torch.autograd.graph.Node))

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t * t

    @staticmethod
    def backward(ctx, grad):
        (t,) = ctx.saved_tensors
        return 2 * t * grad

s = Square.apply(x)
print(type(s.grad_fn), type(s.grad_fn).__module__, type(Square))
print(issubclass(Square, torch.autograd.Function), isinstance(s.grad_fn, torch.autograd.graph.Node))
""",
)
S(
    "names-functions",
    """
import re
import torch
import torch.nn.functional as F

def shown(fn):
    return re.sub(r" at 0x[0-9a-f]+", "", repr(fn))

for fn in (torch.add, torch.mul, torch.relu, torch.tanh, torch.sigmoid, torch.exp, torch.tensor,
           torch.zeros, torch.ones, torch.randn, torch.cat, torch.stack, torch.matmul, torch.max,
           torch.sort, torch.numel, torch.get_default_dtype):
    print(shown(fn), fn.__name__, fn.__module__, fn.__qualname__, type(fn))
for fn in (torch.manual_seed, torch.is_tensor, torch.set_default_dtype, F.relu, F.softmax,
           F.mse_loss, F.cross_entropy, F.linear, torch.nn.init.xavier_uniform_,
           torch.nn.init.zeros_, torch.nn.utils.clip_grad_norm_, torch.autograd.grad,
           torch.autograd.backward):
    print(shown(fn), fn.__name__, fn.__module__, fn.__qualname__, type(fn))
print(torch.add(torch.ones(2), 3), torch.exp(torch.zeros(1)), torch.relu(torch.tensor([-1.0, 2.0])))
print(torch.nn.Linear.forward.__qualname__, torch.nn.Sequential.__init__.__qualname__)
print(shown(torch.nn.Linear.forward), torch.nn.Linear.forward.__module__)
print(torch.Tensor.backward.__qualname__, shown(torch.Tensor.backward))
""",
)
S(
    "names-isinstance",
    """
import torch
import torch.nn as nn
p = nn.Parameter(torch.ones(1))
print(isinstance(p, torch.Tensor), issubclass(nn.Parameter, torch.Tensor))
print(issubclass(nn.Linear, nn.Module), isinstance(nn.MSELoss(), nn.Module))
print(isinstance(nn.Sequential(), nn.Module), issubclass(nn.LSTM, nn.Module))
opt = torch.optim.SGD([p], lr=0.1)
print(isinstance(opt, torch.optim.Optimizer), issubclass(torch.optim.Adam, torch.optim.Optimizer))
sched = torch.optim.lr_scheduler.StepLR(opt, 1)
print(isinstance(sched, torch.optim.lr_scheduler.LRScheduler))
print(isinstance(torch.ones(1).shape, torch.Size), isinstance(torch.ones(1).shape, tuple))
print(isinstance(torch.float32, torch.dtype), isinstance(torch.device("cpu"), torch.device))
print(torch.is_tensor(p), torch.is_tensor([1.0]), isinstance(torch.no_grad(), torch.no_grad))
print(isinstance(torch.ones(2).max(0), tuple))
""",
)
S(
    "names-torch-modules",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch import autograd
mods = [torch, nn, F, optim, autograd, torch.nn.init, torch.nn.utils, optim.lr_scheduler,
        torch.linalg, torch.cuda, torch.autograd.functional, torch.utils, torch.utils.data,
        torch.random, torch.return_types, torch.nn.modules]
for m in mods:
    print(m.__name__, m.__package__, m.__spec__.name, type(m.__loader__).__name__)
    print(" ", m.__file__.split("site-packages/")[-1], repr(m).split("site-packages/")[-1])
    print(" ", m.__spec__.origin.split("site-packages/")[-1], hasattr(m, "__path__"))
print([p.split("site-packages/")[-1] for p in torch.__path__], type(torch))
print(torch.__version__.split("+")[0])
print(torch.nn.modules.linear.Linear, torch.nn.modules.loss.MSELoss, nn.modules.Linear)
print(torch.nn.modules.module.Module, torch.nn.parameter.Parameter)
print(torch.autograd.function.Function, torch.autograd.grad_mode.no_grad)
print(torch.random.manual_seed.__module__, torch.random.initial_seed.__qualname__)
print(hasattr(torch.optim, "sgd"), hasattr(torch, "nosuch"), hasattr(torch.nn, "modules"))
""",
)
S(
    "names-import-errors",
    """
import torch
from torch.nn.modules.linear import Linear
from torch.nn.modules.container import Sequential
from torch.autograd.function import Function
from torch.nn.parameter import Parameter
print(Linear, Sequential, Function, Parameter)
for source in ("from torch import nosuchname", "from torch.nn import nosuchname",
               "from torch.nn.functional import nosuchname", "from torch.optim import Nope",
               "from torch.autograd import nosuchname", "from torch.nn.modules.linear import Nope"):
    try:
        exec(source)
    except ImportError as error:
        print(type(error).__name__, str(error).split(" (")[0], error.name)
        print(" ", error.path.split("site-packages/")[-1], str(error).split("site-packages/")[-1])
""",
)
S(
    "names-typename-errors",
    """
import torch
import torch.nn as nn
w = nn.Parameter(torch.ones(1))
for make in (lambda: torch.optim.SGD([nn.Linear(1, 1)], lr=0.1),
             lambda: torch.optim.SGD([nn.ReLU()], lr=0.1),
             lambda: nn.Sequential().add_module("a", w),
             lambda: nn.Sequential().add_module("a", torch.optim),
             lambda: nn.Sequential().add_module("a", torch.nn.functional.relu),
             lambda: nn.Sequential().add_module("a", nn.Linear),
             lambda: nn.Linear(1, 1).register_parameter("p", nn.ReLU()),
             lambda: setattr(nn.Linear(1, 1), "weight", nn.ReLU()),
             lambda: nn.Sequential(nn.Linear(1, 1), 3)):
    try:
        make()
    except TypeError as error:
        print(error)

""",
)
S(
    "names-version",
    """
import torch
v = torch.__version__
print(type(v), isinstance(v, str), v.split("+")[0], v[:4])
print(v >= "2.2", v < "2.14", v > "2.13", v == "2.13.0", v >= (2, 0), v > (2, 13), v < (3,))
print(v >= "2.13.0", v <= "2.13.0", "2.0" <= v)
""",
)
