"""The engine must behave as PyTorch 2.13 does on every recorded snippet.

tools/record_goldens.py ran each snippet with `torch` bound to real PyTorch and kept what it
printed, the error it raised and a probe of every tensor it left behind. Here the same source runs
with `torch` (and torch.nn, torch.nn.functional, torch.optim, torch.autograd) bound to the engine;
this test never imports torch. Strings must match exactly, numbers within rtol 1e-5 / atol 1e-6
(float32 transcendental functions may differ from PyTorch's in the last bit).
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import warnings
from typing import Any

import numpy as np
import pytest

import engine
from engine.snippet import reset_engine_state, snippet_globals
from engine.unsupported import UnsupportedByGradtrace
from tests.engine.goldens import LONG_RUN_EVENTS, SNIPPETS, assert_printed, assert_text_near

RTOL, ATOL = 1e-5, 1e-6
EXACT_FIELDS = ("repr", "shape", "dtype", "requires_grad", "is_leaf", "grad_fn", "next_functions")
NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


# ***** running a snippet against the engine (the recorder does the same against torch) *****


def _encode(value: Any) -> Any:
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _probe(t: engine.Tensor) -> dict[str, Any]:
    grad_fn = t.grad_fn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grad = t.grad
    return {
        "repr": repr(t),
        "shape": list(t.shape),
        "dtype": str(t.dtype),
        "requires_grad": t.requires_grad,
        "is_leaf": t.is_leaf,
        "grad_fn": grad_fn.name() if grad_fn is not None else None,
        "next_functions": None
        if grad_fn is None
        else [[f.name() if f is not None else None, i] for f, i in grad_fn.next_functions],
        "values": _encode(t.detach().tolist()),
        "grad": None if grad is None else _encode(grad.tolist()),
    }


def _probe_namespace(namespace: dict[str, Any]) -> dict[str, Any]:
    probes = {}
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        if isinstance(value, engine.Tensor):
            probes[name] = _probe(value)
        elif (
            isinstance(value, tuple | list)
            and value
            and all(isinstance(v, engine.Tensor) for v in value)
        ):
            for i, v in enumerate(value):
                probes[f"{name}[{i}]"] = _probe(v)
    return probes


def run(source: str) -> tuple[str, BaseException | None, dict[str, Any]]:
    namespace = snippet_globals()  # `import torch` gives the engine, as in the app
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reset_engine_state()  # grad mode, default dtype, the generator seeded with SEED
        try:
            exec(compile(source, "<snippet>", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - the error is compared below
            error = e
        finally:
            reset_engine_state()  # a snippet that stopped early must not leak its settings
    return out.getvalue(), error, _probe_namespace(namespace)


# ***** comparing *****


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return NONFINITE.get(value, value) if isinstance(value, str) else value


def _assert_close(got: Any, want: Any, where: str, near: dict | None = None) -> None:
    if want is None or got is None:
        assert got == want, f"{where}: got {got!r}, PyTorch {want!r}"
        return
    got_array, want_array = np.array(_decode(got)), np.array(_decode(want))
    assert got_array.shape == want_array.shape, f"{where}: got {got!r}, PyTorch {want!r}"
    if want_array.dtype == np.bool_ or got_array.dtype == np.bool_:
        assert got_array.tolist() == want_array.tolist(), f"{where}: got {got!r}, PyTorch {want!r}"
        return
    np.testing.assert_allclose(
        got_array.astype(np.float64),
        want_array.astype(np.float64),
        rtol=max(RTOL, near["rtol"]) if near else RTOL,
        atol=max(ATOL, near["atol"]) if near else ATOL,
        equal_nan=True,
        err_msg=where,
    )


def test_golden_file_is_broad() -> None:
    assert len(SNIPPETS) >= 150


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s["slug"] for s in SNIPPETS])
def test_snippet_matches_pytorch(snippet: dict[str, Any]) -> None:
    if snippet.get("unsupported"):
        # PyTorch can do this and the engine cannot: it must say so, not do something else
        with (
            pytest.raises(UnsupportedByGradtrace, match="not supported by gradtrace"),
            contextlib.redirect_stdout(io.StringIO()),
        ):
            exec(compile(snippet["source"], "<snippet>", "exec"), snippet_globals())
        return

    stdout, error, probes = run(snippet["source"])
    want_error = snippet["error"]
    if error is not None and want_error is None:
        raise AssertionError(
            f"the engine raised where PyTorch did not; stdout so far:\n{stdout}"
        ) from error
    got_error = None if error is None else [type(error).__name__, str(error)]
    assert got_error == want_error
    assert_printed(stdout, snippet)

    skip = set(snippet.get("skip", ()))
    near = snippet.get("near")
    want_probes = snippet["probes"]
    assert sorted(probes) == sorted(want_probes)
    for name, want in want_probes.items():
        got = probes[name]
        for field in EXACT_FIELDS:
            if f"{name}.{field}" in skip:
                continue
            if field == "repr" and near:
                assert_text_near(got[field], want[field], near, f"{name}.{field}")
            else:
                assert got[field] == want[field], f"{name}.{field}"
        for field in ("values", "grad"):
            if f"{name}.{field}" not in skip:
                _assert_close(got[field], want[field], f"{name}.{field}", near)


@pytest.mark.slow
def test_long_runs_and_only_they_are_flagged_long() -> None:
    """The app's step-by-step oracles skip `long` snippets: a flag must not hide a short one,
    and a new training loop at the event cap must say it is long."""
    from tests import corpus

    wrong = [
        s["slug"]
        for s in SNIPPETS
        if (len(corpus.traced(s["source"])["events"]) > LONG_RUN_EVENTS) != bool(s.get("long"))
    ]
    assert not wrong, f"flag long exactly the snippets past {LONG_RUN_EVENTS} events: {wrong}"


def test_a_name_the_engine_lacks_is_said_in_a_line_with_names_like_it():
    # `torch` has hundreds of names: the message once listed them all, a wall of text
    with pytest.raises(UnsupportedByGradtrace) as lacking:
        engine.fft  # noqa: B018 - reading the name is what fails
    said = str(lacking.value)
    assert re.fullmatch(
        r"torch\.fft is not supported by gradtrace's engine \(gradtrace has \d+ of torch's names\)",
        said,
    )
    with pytest.raises(UnsupportedByGradtrace) as lacking:
        engine.nanmean  # noqa: B018
    assert str(lacking.value).endswith("names; close to this one: mean)")
