"""torch.optim.lr_scheduler: changing each param group's "lr" as training goes on.

As in PyTorch, a scheduler records each group's starting lr as "initial_lr", takes one step when
made (epoch 0), and then one per scheduler.step(); most schedules are chained (each new lr is
worked out from the current one), so the floats come out exactly as PyTorch's do. Calling
scheduler.step() before the optimizer has stepped warns, with PyTorch's UserWarning.
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from functools import wraps

from engine.optim import Optimizer
from engine.unsupported import missing_attribute

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "CosineAnnealingLR",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)
_ORDER_HINT = (
    "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)
STEP_OVERRIDDEN_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before `lr_scheduler.step()`. "
    + _ORDER_HINT
)
STEP_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value "
    "of the learning rate schedule. " + _ORDER_HINT
)


def _lrs(optimizer: Optimizer, key: str = "lr") -> list:
    return [group[key] for group in optimizer.param_groups]


def _track_step_calls(optimizer: Optimizer) -> None:
    """Wrap optimizer.step so the scheduler can tell whether it ran before its own step."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    step = optimizer.step.__func__

    @wraps(step)
    def wrapper(*args, **kwargs):
        optimizer._opt_called = True
        return step(optimizer, *args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


class LRScheduler:
    """The base of every schedule: subclasses say how get_lr() moves each group's lr."""

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0.\nThis typically happens when:\n1. "
                        "You're trying to resume training from a checkpoint but haven't properly "
                        "loaded the optimizer state\n2. You're using last_epoch >= 0 for a fresh "
                        "training run (not recommended)"
                    )
        self.base_lrs = _lrs(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_step_calls(optimizer)
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()  # epoch 0: the groups keep their starting lr (most schedules)
        finally:
            self._is_initial = False

    def state_dict(self) -> dict:
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        return self._last_lr

    def get_lr(self) -> list:
        raise NotImplementedError

    def _warn_if_called_directly(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def step(self, epoch: int | None = None) -> None:
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(STEP_OVERRIDDEN_WARNING, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(STEP_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = _lrs(self.optimizer)


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch)."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if not isinstance(lr_lambda, list | tuple):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(
                    f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict:
        # functions are not saved (only a callable object's attributes are)
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lambdas
        for fn, saved in zip(self.lr_lambdas, lambdas, strict=False):
            if saved is not None:
                fn.__dict__.update(saved)

    def get_lr(self) -> list:
        self._warn_if_called_directly()
        return [
            base_lr * fn(self.last_epoch)
            for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)
        ]


class StepLR(LRScheduler):
    """Multiplies lr by gamma every step_size epochs."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch=-1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_called_directly()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [
            base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs
        ]


class MultiStepLR(LRScheduler):
    """Multiplies lr by gamma at each milestone epoch."""

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch=-1) -> None:
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_called_directly()
        if self.last_epoch not in self.milestones:
            return _lrs(self.optimizer)
        times = self.milestones[self.last_epoch]
        return [group["lr"] * self.gamma**times for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [
            base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
            for base_lr in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """Multiplies lr by gamma every epoch."""

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_called_directly()
        if self._is_initial:
            return _lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr follows half a cosine from initial_lr down to eta_min over T_max epochs."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch=-1) -> None:  # noqa: N803
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_called_directly()
        groups, t, period = self.optimizer.param_groups, self.last_epoch, self.T_max
        if self._is_initial:
            return _lrs(self.optimizer)
        if self._step_count == 1 and t > 0:
            return [
                self.eta_min + (base - self.eta_min) * (1 + math.cos(t * math.pi / period)) / 2
                for base in self.base_lrs
            ]
        if (t - 1 - period) % (2 * period) == 0:
            return [
                group["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / period)) / 2
                for base, group in zip(self.base_lrs, groups, strict=True)
            ]
        # the chained form: this epoch's cosine over the last one's, applied to the current lr
        ratio = (1 + math.cos(math.pi * t / period)) / (1 + math.cos(math.pi * (t - 1) / period))
        return [ratio * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _get_closed_form_lr(self) -> list:
        return [
            self.eta_min
            + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base in self.base_lrs
        ]


def __getattr__(name: str):
    raise missing_attribute("torch.optim.lr_scheduler", name, __all__)
