"""The worked example lesson the lesson tests share, and small helpers to vary it."""

from __future__ import annotations

from pathlib import Path

from app.lessons.source import LessonFile, parse

# d = a*b + a at a = 3, b = 4: ∂d/∂a = b + 1 = 5 (two paths), ∂d/∂b = a = 3.
SEED = """\
---
title: Two paths into a
summary: How a.grad adds up.
order: 1
snippet: |
  import torch
  a = torch.tensor(3.0, requires_grad=True)
  b = torch.tensor(4.0, requires_grad=True)
  d = a*b + a
  d.backward()
  print(a.grad.item(), b.grad.item())
narration:
  - span: "a*b + a"
    text: "Our words: `a*b + a` adds."
questions:
  - id: grad-a
    type: numeric
    prompt: What is `a.grad`?
    answer: 5
    fact: grad a
    hint: Two paths.
    step: 8
  - id: next
    type: node
    prompt: Which node runs next?
    answer: [MulBackward0]
    checkpoint: 7
    fact: next-backward after 6
  - id: leaves
    type: choice
    multiple: true
    prompt: Which are leaves?
    fact: leaves
    choices:
      - {text: "`a`", correct: true}
      - {text: "`b`", correct: true}
      - {text: "`d`", feedback: "d has a grad_fn."}
  - id: order
    type: order
    prompt: Order them.
    fact: backward-order
    answer: [AddBackward0, MulBackward0, AccumulateGrad(a), AccumulateGrad(b)]
---
The **graph** of `d = a*b + a`. See [step 8](#step=8).
"""

SEED_SNIPPET = """\
import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a*b + a
d.backward()
print(a.grad.item(), b.grad.item())
"""


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """The 1-based line of the `nth` line of `text` that contains `needle`."""
    found = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(found) >= nth, f"{needle!r} is not in the text {nth} times"
    return found[nth - 1]


def replaced(old: str, new: str, text: str = SEED) -> str:
    """`text` with `old` (which must occur exactly once) replaced by `new`."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


def parsed(text: str = SEED, name: str = "seed-lesson.md") -> LessonFile:
    return parse(text, Path(name))
