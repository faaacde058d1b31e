"""torch.optim: SGD (with momentum) and Adam, stepping parameters in place."""

from __future__ import annotations

import numpy as np

from engine.grad_mode import no_grad
from engine.unsupported import missing_attribute

__all__ = ["Optimizer", "SGD", "Adam"]


class Optimizer:
    """Holds parameters and updates them from their .grad; zero_grad() resets grads to None."""

    def __init__(self, params, defaults: dict) -> None:
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        if isinstance(params[0], dict):
            groups = [dict(defaults, **g, params=list(g["params"])) for g in params]
        else:
            groups = [dict(defaults, params=params)]
        self.param_groups = groups
        self.defaults = defaults
        self.state: dict = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    p._grad._array[...] = 0

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, maximize=False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    @no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                d_p = p._grad._array
                if group["weight_decay"]:
                    d_p = d_p + group["weight_decay"] * p._array
                if group["momentum"]:
                    buf = self.state.setdefault(id(p), {}).get("momentum_buffer")
                    if buf is None:
                        buf = d_p.copy()
                    else:
                        buf = buf * group["momentum"] + (1 - group["dampening"]) * d_p
                    self.state[id(p)]["momentum_buffer"] = buf
                    d_p = d_p + group["momentum"] * buf if group["nesterov"] else buf
                sign = 1 if group["maximize"] else -1
                p.add_(_as_tensor(d_p), alpha=sign * group["lr"])


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, *, maximize=False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    @no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                grad = p._grad._array
                if group["maximize"]:
                    grad = -grad
                if group["weight_decay"]:
                    grad = grad + group["weight_decay"] * p._array
                state = self.state.setdefault(id(p), {})
                if not state:
                    state.update(step=0, exp_avg=np.zeros_like(p._array),
                                 exp_avg_sq=np.zeros_like(p._array))
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = np.zeros_like(p._array)
                state["step"] += 1
                step = state["step"]
                # the moving averages, updated in float32 like PyTorch's own buffers
                state["exp_avg"] += (grad - state["exp_avg"]) * (1 - beta1)
                state["exp_avg_sq"] = state["exp_avg_sq"] * beta2 + grad * grad * (1 - beta2)
                second = state["exp_avg_sq"]
                if group["amsgrad"]:
                    np.maximum(state["max_exp_avg_sq"], second, out=state["max_exp_avg_sq"])
                    second = state["max_exp_avg_sq"]
                bias1 = 1 - beta1**step
                bias2_sqrt = (1 - beta2**step) ** 0.5
                step_size = group["lr"] / bias1
                denom = (np.sqrt(second) / bias2_sqrt + group["eps"]).astype(p._array.dtype)
                p.add_(_as_tensor(state["exp_avg"] / denom), alpha=-step_size)


def _as_tensor(array):
    from engine.tensor import Tensor

    return Tensor._wrap(np.asarray(array))


def __getattr__(name: str):
    raise missing_attribute("torch.optim", name, __all__)
