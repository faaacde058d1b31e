"""Record the names real PyTorch offers, so the engine can tell "not supported" from "no such name".

Run with a Python that has torch 2.13.0: .venv-torch/bin/python tools/record_surface.py
"""

import json
import pathlib
import sys

import torch
import torch.autograd.functional
import torch.nn
import torch.nn.functional
import torch.optim
import torch.utils.data

NAMESPACES = {
    "torch": torch,
    "Tensor": torch.Tensor,
    "torch.nn": torch.nn,
    "torch.nn.functional": torch.nn.functional,
    "torch.optim": torch.optim,
    "torch.autograd": torch.autograd,
    "torch.accelerator": torch.accelerator,
    "torch.utils": torch.utils,
    "torch.utils.data": torch.utils.data,
    "torch.autograd.functional": torch.autograd.functional,
    # torch.autograd.gradcheck is the function; the module it is defined in is this one
    "torch.autograd.gradcheck": sys.modules["torch.autograd.gradcheck"],
}


def public_names(obj) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def main() -> None:
    surface = {name: public_names(obj) for name, obj in NAMESPACES.items()}
    out = pathlib.Path(__file__).parent.parent / "engine" / "torch_surface.json"
    out.write_text(json.dumps(surface, indent=0, sort_keys=True) + "\n")
    print(f"wrote {out} ({sum(len(v) for v in surface.values())} names)")


if __name__ == "__main__":
    main()
