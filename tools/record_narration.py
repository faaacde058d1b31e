"""Record the narration of a few representative snippets, as golden text for the render tests.

    .venv/bin/python tools/record_narration.py

Writes tests/app/render/golden/narration.json: for each snippet its source and the text of
every step, as `app.render.narrate` writes them. Read the diff before committing it: this file
is the review of gradtrace's English, and tests/app/render/test_narration.py holds the code to
it word for word. Needs only the engine (numpy), not PyTorch and not Graphviz.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.render import narrate  # noqa: E402
from engine.tracer import trace_snippet  # noqa: E402

OUT = ROOT / "tests" / "app" / "render" / "golden" / "narration.json"

# slug → (source, max_events): the seed article's example first, then one snippet per idea.
SNIPPETS: dict[str, tuple[str, int | None]] = {}


def S(slug: str, source: str, max_events: int | None = None) -> None:
    SNIPPETS[slug] = (textwrap.dedent(source).lstrip(), max_events)


S(
    "seed",
    """
    import torch
    a = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(4.0, requires_grad=True)
    d = a*b + a
    d.backward()
    print(a.grad.item(), b.grad.item())
""",
)
S(
    "elementwise",
    """
    import torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
    z = x * y
    loss = z.sum()
    loss.backward()
    print(x.grad)
    print(y.grad)
""",
)
S(
    "dynamic-model",
    """
    import torch
    weights = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def dynamic_model(x, threshold=0.5):
        result = 0
        for val in x:
            if val > threshold:
                result += val * weights[0]
            else:
                result += val * weights[1]
        return result

    input_data = torch.tensor([0.1, 0.8, 0.2, 0.9])
    loss = dynamic_model(input_data)
    loss.backward()
    print(f"Gradients for weights: {weights.grad}")
""",
)
S(
    "no-grad",
    """
    import torch
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        v = w * 2
        w -= 0.5 * v
    print(w.requires_grad, v.requires_grad)
""",
)
S(
    "retain-graph",
    """
    import torch
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward(retain_graph=True)
    print(x.grad)
    y.backward()
    print(x.grad)
""",
)
S(
    "accumulation",
    """
    import torch
    w = torch.tensor(1.5, requires_grad=True)
    for x in [2.0, 3.0]:
        loss = (w * x - 1) ** 2
        loss.backward()
        print(w.grad)
""",
)
S(
    "inplace-error",
    """
    import torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    y += 1
    y.sum().backward()
""",
)
S(
    "backward-twice",
    """
    import torch
    a = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(4.0, requires_grad=True)
    c = a * b
    c.backward()
    c.backward()
""",
)
S(
    "linear-sgd",
    """
    import torch
    from torch import nn
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.MSELoss()
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    y = torch.tensor([[1.0], [2.0]])
    for step in range(2):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    print(loss.item())
""",
)
S(
    "grad-changes",
    """
    import torch
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    (w * 3).sum().backward()
    opt.zero_grad(set_to_none=False)
    (w * 2).sum().backward()
    w.grad = None
    w.grad = torch.ones(2)
    (w * w).sum().backward()
    del w.grad
    print(w.grad)
""",
)
S(
    "retain-grad",
    """
    import torch
    a = torch.tensor(0.5, requires_grad=True)
    b = a * 3
    b.retain_grad()
    c = b.tanh()
    c.backward()
    print(b.grad, a.grad)
    frozen = a.detach()
""",
)
S(
    "errors",
    """
    import torch
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.backward()
""",
)
S(
    "truncated",
    """
    import torch
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for i in range(1000):
        y = y * 1.01
    y.backward()
""",
    max_events=8,
)


def record() -> dict:
    snippets = []
    for slug, (source, max_events) in SNIPPETS.items():
        kwargs = {} if max_events is None else {"max_events": max_events}
        trace = trace_snippet(source, **kwargs)
        snippets.append(
            {"slug": slug, "source": source, "max_events": max_events, "steps": narrate(trace)}
        )
    return {"version": 1, "snippets": snippets}


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(record(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
