"""torch.optim: SGD, Adam, AdamW, RMSprop and Adagrad, stepping parameters in place; their
param_groups and state_dict as PyTorch keeps them. lr_scheduler is engine/lr_scheduler.py."""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict

import numpy as np

from engine.grad_mode import enable_grad, no_grad
from engine.nn.modules import typename
from engine.numerics import fma_add, fused_multiply_add, lerp, unary_like_torch
from engine.record import bump
from engine.tensor import Tensor
from engine.unsupported import missing_attribute

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]


class Optimizer:
    """Holds parameter groups and updates their parameters from .grad; zero_grad() resets grads.

    Each group is a dict: "params" first, then the group's own options, then the optimizer's
    defaults for the rest, in PyTorch's order (so param_groups prints as PyTorch's does).
    """

    def __init__(self, params, defaults: dict) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + params.type()
            )
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)  # keyed by the parameter, as PyTorch's is
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (with options of its own) to optimize alongside the rest."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is " + typename(p)
                )
            if not self.defaults.get("differentiable") and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len({id(p) for p in params}) != len(params):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information",
                stacklevel=3,
            )
        taken = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in taken for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

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

    # ***** saving and loading *****

    def state_dict(self) -> dict:
        """{"state": per-parameter buffers by index, "param_groups": the options, params as
        indexes}: what torch.save(opt.state_dict()) keeps. The state tensors are shared, not
        copied, as in PyTorch."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: values for p, values in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Take options (copied) and buffers from a state_dict, matched by position."""
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(self.param_groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(
            len(g["params"]) != len(s["params"])
            for g, s in zip(self.param_groups, saved_groups, strict=True)
        ):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        by_index = {
            i: p
            for s, g in zip(saved_groups, self.param_groups, strict=True)
            for i, p in zip(s["params"], g["params"], strict=True)
        }
        state: defaultdict = defaultdict(dict)
        for i, values in state_dict["state"].items():
            if i in by_index:
                p = by_index[i]
                state[p] = {k: _loaded(p, k, v) for k, v in values.items()}
            else:
                state[i] = values
        for saved, group in zip(saved_groups, self.param_groups, strict=True):
            saved["params"] = group["params"]  # the saved dict's order: params comes last
        self.state, self.param_groups = state, saved_groups

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {k}: {group[k]}\n" for k in sorted(group) if k != "params")
        return text + ")"


def _loaded(p: Tensor, key: str, value):
    """A state value from a loaded state_dict, in the parameter's dtype ("step" keeps its own).

    As in PyTorch (value.to(dtype)), a tensor already in that dtype is shared, not copied.
    """
    if not isinstance(value, Tensor) or key == "step" or value._array.dtype == p._array.dtype:
        return value
    return _as_tensor(value._array.astype(p._array.dtype))


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
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
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
    def step(self, closure=None):
        loss = _closure_loss(closure)
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
        return loss


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
        _check_adam_options(lr, eps, betas, weight_decay)
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
                decoupled_weight_decay=decoupled_weight_decay,
            ),
        )

    @no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                grad = p._grad._array
                if group["maximize"]:
                    grad = -grad
                if group["weight_decay"] and group["decoupled_weight_decay"]:
                    # AdamW: the parameter itself shrinks, apart from the gradient
                    decay = p._array.dtype.type(1 - group["lr"] * group["weight_decay"])
                    _update(p, p._array * decay, from_grad=False)
                elif group["weight_decay"]:
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
                denom = unary_like_torch(np.sqrt, second) / kind(bias2_sqrt) + kind(group["eps"])
                _update(p, p._array + kind(-step_size) * exp_avg / denom)
        return loss


def _check_adam_options(lr, eps, betas, weight_decay) -> None:
    _check_non_negative([("learning rate", lr), ("epsilon value", eps)])
    for i, beta in enumerate((betas[0], betas[1])):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    _check_non_negative([("weight_decay value", weight_decay)])


def _check_non_negative(settings: list) -> None:
    """PyTorch's check of an optimizer's settings, in its order: `Invalid <what>: <value>` for
    the first one that is negative (or nan)."""
    for what, value in settings:
        if not value >= 0.0:
            raise ValueError(f"Invalid {what}: {value}")


class AdamW(Adam):
    """Adam with decoupled weight decay: each step first shrinks the parameter by lr·decay."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        foreach=None,
        capturable=False,
        differentiable=False,
        fused=None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )


class RMSprop(Optimizer):
    """Divides each step by a running root-mean-square of recent gradients."""

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ) -> None:
        _check_non_negative(
            [
                ("learning rate", lr),
                ("epsilon value", eps),
                ("momentum value", momentum),
                ("weight_decay value", weight_decay),
                ("alpha value", alpha),
            ]
        )
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                alpha=alpha,
                eps=eps,
                centered=centered,
                weight_decay=weight_decay,
                capturable=capturable,
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
            ),
        )

    @no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            alpha, lr = group["alpha"], group["lr"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = _as_tensor(np.zeros((), np.float32))
                    state["square_avg"] = _as_tensor(np.zeros_like(p._array))
                    if group["momentum"] > 0:
                        state["momentum_buffer"] = _as_tensor(np.zeros_like(p._array))
                    if group["centered"]:
                        state["grad_avg"] = _as_tensor(np.zeros_like(p._array))
                # torch.optim's _single_tensor_rmsprop, op for op in the parameter's dtype
                kind = p._array.dtype.type
                grad = -p._grad._array if group["maximize"] else p._grad._array
                state["step"]._array += 1
                if group["weight_decay"]:
                    grad = fma_add(grad, p._array, group["weight_decay"])
                square_avg = state["square_avg"]._array
                square_avg[...] = fused_multiply_add(
                    kind(1 - alpha) * grad, grad, square_avg * kind(alpha)
                )
                if group["centered"]:
                    grad_avg = state["grad_avg"]._array
                    grad_avg[...] = lerp(grad_avg, grad, 1 - alpha)
                    avg = unary_like_torch(
                        np.sqrt, fused_multiply_add(kind(-1) * grad_avg, grad_avg, square_avg)
                    )
                else:
                    avg = unary_like_torch(np.sqrt, square_avg)
                avg = avg + kind(group["eps"])
                if group["momentum"] > 0:
                    buf = state["momentum_buffer"]._array
                    buf[...] = buf * kind(group["momentum"]) + grad / avg
                    _update(p, fma_add(p._array, buf, -lr))
                else:
                    _update(p, p._array + kind(-lr) * grad / avg)
        return loss


class Adagrad(Optimizer):
    """Divides each step by the root of the sum of all past squared gradients."""

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ) -> None:
        _check_non_negative(
            [
                ("learning rate", lr),
                ("lr_decay value", lr_decay),
                ("weight_decay value", weight_decay),
                ("initial_accumulator_value value", initial_accumulator_value),
                ("epsilon value", eps),
            ]
        )
        super().__init__(
            params,
            dict(
                lr=lr,
                lr_decay=lr_decay,
                eps=eps,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                fused=fused,
            ),
        )
        # unlike the others, Adagrad's state exists from the start
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["step"] = _as_tensor(np.zeros((), np.float32))
                start = np.full_like(p._array, group["initial_accumulator_value"])
                self.state[p]["sum"] = _as_tensor(start)

    @no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                # torch.optim's _single_tensor_adagrad, op for op in the parameter's dtype
                kind = p._array.dtype.type
                state = self.state[p]
                state["step"]._array += 1
                step = float(state["step"]._array)
                grad = -p._grad._array if group["maximize"] else p._grad._array
                if group["weight_decay"]:
                    grad = fma_add(grad, p._array, group["weight_decay"])
                decayed_lr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
                total = state["sum"]._array
                total[...] = fused_multiply_add(kind(1) * grad, grad, total)
                std = unary_like_torch(np.sqrt, total) + kind(group["eps"])
                _update(p, p._array + kind(-decayed_lr) * grad / std)
        return loss


def _closure_loss(closure):
    """step(closure): the loss the closure recomputes, with grad mode on, as in PyTorch."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _as_tensor(array) -> Tensor:
    return Tensor._wrap(np.asarray(array))


def _update(p: Tensor, new_value: np.ndarray, from_grad: bool = True) -> None:
    """Write a parameter's new value in place, as PyTorch's optimizers do (its version moves).
    The trace says what it was made from: the parameter and, unless it is a decay alone, its
    .grad (so the picture draws the .grad flowing into the step that uses it)."""
    p._array[...] = new_value
    bump(p, "optimizer.step", None, (p, p._grad) if from_grad else (p,))


def __getattr__(name: str):
    raise missing_attribute("torch.optim", name, __all__)


from engine import lr_scheduler  # noqa: E402 - it needs Optimizer, defined above
