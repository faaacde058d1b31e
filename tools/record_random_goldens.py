"""Record what PyTorch's CPU generator draws, for engine/random.py to be checked against.

Run under the torch venv (the test suite itself never imports torch):

    .venv-torch/bin/python tools/record_random_goldens.py

Writes tests/engine/golden/random.json. Each case seeds a generator (or takes a fresh
``torch.Generator()``), then makes a sequence of calls on it, recording every result, so the
state carried between calls (Box-Muller's spare sample included) is checked too.

PyTorch picks its kernels by CPU capability. Cases marked "avx2" are recorded with the kernels
this machine picks (AVX2 or AVX512; the normal fill runs the AVX2 kernel under both, which is
checked by recording them again with ATEN_CPU_CAPABILITY=avx2). Cases marked "default" are
recorded in a child process with ATEN_CPU_CAPABILITY=default, PyTorch's scalar kernels.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

OUT = Path(__file__).resolve().parent.parent / "tests" / "engine" / "golden" / "random.json"
DEFAULT_SEED = 67280421310721
SIZES = [0, 1, 2, 3, 15, 16, 17, 31, 32, 100]
DTYPES = {"float32": torch.float32, "float64": torch.float64}

# A call is a list: [op, *args]. Ops: rand/randn (shape, dtype), uniform (shape, low, high,
# dtype), normal (shape, mean, std, dtype), randint (low, high, shape), randperm (n),
# manual_seed (seed).
Call = list[Any]


def case(name: str, seed: int | None, calls: list[Call], capability: str = "avx2") -> dict:
    """seed None means a fresh torch.Generator(), never seeded."""
    return {"name": name, "seed": seed, "capability": capability, "calls": calls}


def build_cases() -> list[dict[str, Any]]:
    cases = []
    # One call per size and dtype, each from its own seed.
    for op in ("rand", "randn"):
        for dtype in DTYPES:
            for n in SIZES:
                cases.append(case(f"{op}-{dtype}-{n}", 1000 + n, [[op, [n], dtype]]))
    for dtype in DTYPES:
        for shape in ([2, 3], [4, 4], [2, 3, 5], [1, 16], [0, 3], []):
            cases.append(
                case(f"shape-{dtype}-{shape}", 7, [["randn", shape, dtype], ["rand", shape, dtype]])
            )
    cases += [
        # Larger fills reach more of the vectorised log/sin/cos.
        case("randn-float32-4099", 11, [["randn", [4099], "float32"]]),
        case("randn-float64-1000", 12, [["randn", [1000], "float64"]]),
        case("rand-both-1000", 13, [["rand", [1000], "float32"], ["rand", [1000], "float64"]]),
        # State carried across calls.
        case(
            "interleaved-brief",
            0,
            [["randn", [3], "float32"], ["randn", [20], "float32"], ["rand", [5], "float32"]],
        ),
        case(
            "interleaved-float64",
            0,
            [
                ["randn", [3], "float64"],
                ["randn", [20], "float64"],
                ["rand", [5], "float64"],
                ["randn", [1], "float64"],
            ],
        ),
        case("spare-normal-one-at-a-time", 5, [["randn", [1], "float32"]] * 5),
        case(
            "spare-normal-across-dtypes",
            6,
            [["randn", [3], "float64"], ["randn", [1], "float32"], ["randn", [1], "float64"]],
        ),
        case(
            "spare-normal-survives-rand",
            8,
            [["randn", [3], "float32"], ["rand", [2], "float32"], ["randn", [1], "float32"]],
        ),
        case(
            "spare-normal-survives-fill",
            9,
            [["randn", [1], "float32"], ["randn", [17], "float32"], ["randn", [1], "float32"]],
        ),
        case(
            "spare-normal-cleared-by-seed",
            10,
            [["randn", [1], "float64"], ["manual_seed", 10], ["randn", [2], "float64"]],
        ),
        case(
            "mixed-everything",
            2024,
            [
                ["rand", [2, 3], "float32"],
                ["randint", 0, 10, [4]],
                ["randn", [5], "float64"],
                ["randperm", 6],
                ["randn", [33], "float32"],
                ["uniform", [3], -2, 2, "float64"],
                ["randn", [2], "float32"],
                ["rand", [1], "float64"],
            ],
        ),
        # Seeds: wrapped modulo 2**64, low 32 bits alone feed the twister.
        case("seed-minus-one", -1, [["rand", [4], "float32"], ["randn", [4], "float64"]]),
        case("seed-max-u64", 2**64 - 1, [["rand", [4], "float32"]]),
        case("seed-2pow63", 2**63, [["rand", [4], "float64"]]),
        case("seed-high-bits", 2**32 + 5, [["rand", [4], "float32"], ["randint", 0, 100, [3]]]),
        case("seed-default-value", DEFAULT_SEED, [["rand", [5], "float32"]]),
        case(
            "fresh-generator",
            None,
            [
                ["rand", [5], "float32"],
                ["randn", [20], "float32"],
                ["randn", [3], "float64"],
                ["randperm", 8],
            ],
        ),
    ]
    for low, high in [
        (0, 2),
        (0, 10),
        (-5, 5),
        (0, 2**28 - 1),
        (0, 2**28),
        (-(2**40), 2**41),
        (0, 2**32 + 3),
        (-(2**63), 2**63 - 1),
        (7, 8),
    ]:
        cases.append(
            case(
                f"randint-{low}-{high}",
                3,
                [["randint", low, high, [37]], ["randint", low, high, [2, 3]]],
            )
        )
    for n in (0, 1, 2, 3, 10, 100, 1000):
        cases.append(case(f"randperm-{n}", 4, [["randperm", n], ["randperm", n]]))
    for dtype in DTYPES:
        for low, high in [(-3.7, 2.9), (1e-3, 1e3), (-1e-5, 0.0)]:
            cases.append(
                case(
                    f"uniform-{dtype}-{low}-{high}",
                    21,
                    [["uniform", [17], low, high, dtype], ["uniform", [100], low, high, dtype]],
                )
            )
        for mean, std in [(0.5, 2.3), (-1.7, 0.01), (3.0, 0.0)]:
            cases.append(
                case(
                    f"normal-{dtype}-{mean}-{std}",
                    22,
                    [
                        ["normal", [5], mean, std, dtype],
                        ["normal", [16], mean, std, dtype],
                        ["normal", [100], mean, std, dtype],
                    ],
                )
            )
    # PyTorch's scalar kernels, as on a CPU without AVX2.
    for dtype in DTYPES:
        cases.append(
            case(
                f"default-randn-{dtype}",
                31,
                [["randn", [n], dtype] for n in (3, 16, 17, 100, 1000)],
                "default",
            )
        )
        cases.append(
            case(f"default-uniform-{dtype}", 32, [["uniform", [50], -3.7, 2.9, dtype]], "default")
        )
        cases.append(
            case(
                f"default-normal-{dtype}",
                33,
                [["normal", [5], 0.5, 2.3, dtype], ["normal", [40], 0.5, 2.3, dtype]],
                "default",
            )
        )
    return cases


def run_call(gen: torch.Generator, call: Call) -> Any:
    op, *args = call
    if op == "manual_seed":
        gen.manual_seed(args[0])
        return None
    if op in ("rand", "randn"):
        shape, dtype = args
        fn = torch.rand if op == "rand" else torch.randn
        return fn(shape, dtype=DTYPES[dtype], generator=gen)
    if op == "uniform":
        shape, low, high, dtype = args
        return torch.empty(shape, dtype=DTYPES[dtype]).uniform_(low, high, generator=gen)
    if op == "normal":
        shape, mean, std, dtype = args
        return torch.empty(shape, dtype=DTYPES[dtype]).normal_(mean, std, generator=gen)
    if op == "randint":
        low, high, shape = args
        return torch.randint(low, high, shape, generator=gen)
    if op == "randperm":
        return torch.randperm(args[0], generator=gen)
    raise ValueError(f"unknown op {op}")


def record(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for c in cases:
        # A private generator draws exactly as the global one after torch.manual_seed.
        gen = torch.Generator() if c["seed"] is None else torch.Generator().manual_seed(c["seed"])
        results = []
        for call in c["calls"]:
            t = run_call(gen, call)
            if t is None:
                results.append(None)
                continue
            assert t.is_contiguous()
            # float() of a float32 or float64 is exact; JSON round-trips Python floats exactly.
            conv = float if t.is_floating_point() else int
            results.append(
                {
                    "shape": list(t.shape),
                    "dtype": str(t.dtype).removeprefix("torch."),
                    "values": [conv(v) for v in t.reshape(-1).tolist()],
                }
            )
        out.append({**c, "initial_seed": gen.initial_seed(), "results": results})
    return out


def record_in_child(capability: str, names: list[str]) -> list[dict[str, Any]]:
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability}
    proc = subprocess.run(
        [sys.executable, __file__, "--child", *names],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(proc.stdout)


def main() -> None:
    cases = build_cases()
    if sys.argv[1:2] == ["--child"]:
        wanted = set(sys.argv[2:])
        payload = {
            "capability": torch.backends.cpu.get_cpu_capability(),
            "cases": record([c for c in cases if c["name"] in wanted]),
        }
        json.dump(payload, sys.stdout)
        return

    native = torch.backends.cpu.get_cpu_capability()
    if native not in ("AVX2", "AVX512"):
        sys.exit(f"need a CPU on which PyTorch runs its AVX2 kernels, this one gives {native}")
    fast = [c["name"] for c in cases if c["capability"] == "avx2"]
    scalar = [c["name"] for c in cases if c["capability"] == "default"]
    recorded = {c["name"]: c for c in record([c for c in cases if c["name"] in set(fast)])}
    forced = record_in_child("avx2", fast)
    if forced["capability"] != "AVX2" or forced["cases"] != list(recorded.values()):
        sys.exit("forcing AVX2 changed the draws: the 'avx2' cases would be ambiguous")
    child = record_in_child("default", scalar)
    if child["capability"] != "DEFAULT":
        sys.exit(f"ATEN_CPU_CAPABILITY=default gave {child['capability']}")
    recorded.update({c["name"]: c for c in child["cases"]})

    header = {
        "torch_version": torch.__version__,
        "recorded_capability": native,
        "default_seed": DEFAULT_SEED,
    }
    lines = [json.dumps(recorded[c["name"]], sort_keys=True) for c in cases]
    text = json.dumps(header, sort_keys=True)[:-1] + ', "cases": [\n'
    text += ",\n".join(lines) + "\n]}\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {len(lines)} cases to {OUT}")


if __name__ == "__main__":
    main()
