"""Whether operations are recorded: no_grad, enable_grad, set_grad_enabled, inference_mode."""

from __future__ import annotations

import contextlib
import functools

from engine import tracing


class _State:
    enabled = True


state = _State()


class _InferenceState:
    enabled = False


inference_state = _InferenceState()


def is_grad_enabled() -> bool:
    return state.enabled


def is_inference_mode_enabled() -> bool:
    return inference_state.enabled


def _set(enabled: bool) -> None:
    if state.enabled != enabled and tracing.current is not None:
        tracing.current.on_grad_mode(enabled)
    state.enabled = enabled


class _GradMode:
    """A context manager and decorator that sets grad mode and restores it afterwards."""

    mode = True

    def __new__(cls, fn=None):
        # `@torch.no_grad` works without parentheses too
        self = super().__new__(cls)
        return self(fn) if callable(fn) else self

    def __init__(self, fn=None) -> None:
        pass

    def __enter__(self) -> None:
        self.previous = state.enabled
        _set(self.mode)

    def __exit__(self, *exc) -> None:
        _set(self.previous)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self) -> str:
        return f"<torch.autograd.grad_mode.{type(self).__name__} object at {id(self):#x}>"


class no_grad(_GradMode):  # noqa: N801 - torch's spelling
    """Record nothing inside: results need no grad and no graph is built."""

    mode = False


class enable_grad(_GradMode):  # noqa: N801
    mode = True


class set_grad_enabled(_GradMode):  # noqa: N801
    """set_grad_enabled(False) switches recording off at once, or for a `with` block."""

    def __new__(cls, mode: bool):
        return object.__new__(cls)

    def __init__(self, mode: bool) -> None:
        self.previous = state.enabled
        self.mode = bool(mode)
        _set(self.mode)

    def __enter__(self) -> None:
        pass

    def __call__(self, fn):
        mode = self.mode
        _set(self.previous)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


class inference_mode(_GradMode):  # noqa: N801
    """Like no_grad, and what is made inside is an inference tensor: autograd may never save it.

    inference_mode(False) switches both back on: recording, and ordinary tensors.
    """

    def __new__(cls, mode=True):
        self = object.__new__(cls)
        if callable(mode):  # `@torch.inference_mode` bare
            self.enabled = True
            return self(mode)
        return self

    def __init__(self, mode=True) -> None:
        self.enabled = bool(mode)

    def __enter__(self) -> None:
        self.previous = (state.enabled, inference_state.enabled)
        inference_state.enabled = self.enabled
        _set(not self.enabled)

    def __exit__(self, *exc) -> None:
        grad, inference_state.enabled = self.previous
        _set(grad)

    def __call__(self, fn):
        enabled = self.enabled

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(enabled):
                return fn(*args, **kwargs)

        return wrapper


@contextlib.contextmanager
def quietly(enabled: bool):
    """Grad mode for the engine's own work (a custom Function's forward, the backward walk):
    unlike no_grad, not an event of the program, so the tracer is not told."""
    previous = state.enabled
    state.enabled = enabled
    try:
        yield
    finally:
        state.enabled = previous
