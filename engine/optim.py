"""torch.optim: SGD (with momentum) and Adam, stepping parameters in place."""

from __future__ import annotations

import numpy as np

from engine.grad_mode import no_grad
from engine.numerics import fma_add, fused_multiply_add, lerp
from engine.record import bump
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace, missing_attribute

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
        self.state: dict = {}  # keyed by the parameter itself, as PyTorch's is

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p.grad = None  # through the setter, so a trace records it
                else:
                    p._grad._array[...] = 0
                    bump(p._grad, "zero_grad", None)  # an in-place change, as zero_() is

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


class SGD(Optimizer):
    # foreach, differentiable and fused pick PyTorch kernels; kept only so the groups print
    # (and the defaults read 0, not 0.0) as PyTorch's do
    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
                foreach=foreach,
                differentiable=differentiable,
                fused=fused,
            ),
        )

    @no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                # torch.optim's _single_tensor_sgd (the CPU default), op for op in float32:
                # each add(..., alpha=) is one fused multiply-add
                grad = p._grad._array
                if group["maximize"]:
                    grad = -grad
                if group["weight_decay"]:
                    grad = fma_add(grad, p._array, group["weight_decay"])
                if group["momentum"]:
                    buf = self.state.setdefault(p, {}).get("momentum_buffer")
                    if buf is None:
                        buf = grad.copy()
                    else:
                        kind = buf._array.dtype.type
                        decayed = buf._array * kind(group["momentum"])
                        buf = fma_add(decayed, grad, 1 - group["dampening"])
                    self.state[p]["momentum_buffer"] = _as_tensor(buf)  # a Tensor, as in torch
                    grad = fma_add(grad, buf, group["momentum"]) if group["nesterov"] else buf
                _update(p, fma_add(p._array, grad, -group["lr"]))


class Adam(Optimizer):
    # as in SGD, the kernel switches are kept only so the groups print as PyTorch's do
    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if decoupled_weight_decay:
            raise UnsupportedByGradtrace(
                "Adam(decoupled_weight_decay=True) is not supported by gradtrace's engine"
            )
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                maximize=maximize,
                foreach=foreach,
                capturable=capturable,
                differentiable=differentiable,
                fused=fused,
                decoupled_weight_decay=False,
            ),
        )

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
                    grad = fma_add(grad, p._array, group["weight_decay"])
                state = self.state.setdefault(p, {})
                if not state:
                    # Tensors, as PyTorch keeps them (step too: a float32 tensor); updated below
                    # through their arrays
                    state.update(
                        step=_as_tensor(np.zeros((), np.float32)),
                        exp_avg=_as_tensor(np.zeros_like(p._array)),
                        exp_avg_sq=_as_tensor(np.zeros_like(p._array)),
                    )
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = _as_tensor(np.zeros_like(p._array))
                state["step"]._array += 1
                step = float(state["step"]._array)
                # torch.optim's _single_tensor_adam (the CPU default), op for op in the
                # parameter's dtype: lerp_ and addcmul_ fuse their multiply-adds, addcdiv_ does not
                kind = p._array.dtype.type
                exp_avg, exp_avg_sq = state["exp_avg"]._array, state["exp_avg_sq"]._array
                exp_avg[...] = lerp(exp_avg, grad, 1 - beta1)
                exp_avg_sq[...] = fused_multiply_add(
                    kind(1 - beta2) * grad, grad, exp_avg_sq * kind(beta2)
                )
                second = exp_avg_sq
                if group["amsgrad"]:
                    second = state["max_exp_avg_sq"]._array
                    np.maximum(second, exp_avg_sq, out=second)
                bias1 = 1 - beta1**step
                bias2_sqrt = (1 - beta2**step) ** 0.5
                step_size = group["lr"] / bias1
                denom = np.sqrt(second) / kind(bias2_sqrt) + kind(group["eps"])
                _update(p, p._array + kind(-step_size) * exp_avg / denom)


def _as_tensor(array) -> Tensor:
    return Tensor._wrap(np.asarray(array))


def _update(p: Tensor, new_value: np.ndarray) -> None:
    """Write a parameter's new value in place, as PyTorch's optimizers do (its version moves)."""
    p._array[...] = new_value
    bump(p, "optimizer.step", None)


def __getattr__(name: str):
    raise missing_attribute("torch.optim", name, __all__)
