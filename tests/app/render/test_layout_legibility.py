"""The drawn pictures stay legible: gradient texts have text contrast, saved-tensor borders
have non-text contrast, and no edge's gradient text sits on a node (checked in the drawn SVG,
every example, with each edge's longest gradient text)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.examples import EXAMPLES
from app.render import layout, render
from engine.tracer import trace_snippet

NS = {"svg": layout.SVG}
CHAR_WIDTH = 0.62  # of the font size: Helvetica's average for digits, signs and brackets


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours."""

    def luminance(colour: str) -> float:
        r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_gradient_text_reaches_4_5_to_1_on_white_and_on_every_fill():
    for fill in ["#FFFFFF", *layout.TINT.values()]:
        assert contrast(layout.GRAD_INK, fill) >= 4.5, fill


def test_saved_tensor_borders_reach_3_to_1():
    saved = layout._NODE_STYLE["saved"]
    assert contrast(saved["color"], "#FFFFFF") >= 3
    assert contrast(saved["color"], saved["fillcolor"]) >= 3
    assert contrast(layout._EDGE_STYLE["saved-link"]["color"], "#FFFFFF") >= 3


def _boxes(root: ET.Element) -> dict[str, tuple[float, float, float, float]]:
    boxes = {}
    for group in root.iter(f"{{{layout.SVG}}}g"):
        if "node" in (group.get("class") or "").split():
            box = layout._extent(group, f"{{{layout.SVG}}}")
            if box:
                boxes[group.get("id")] = box
    return boxes


def overlaps(rendered: dict, view: str) -> list[str]:
    """Edge gradient texts (at their longest) whose box meets a node's box."""
    longest: dict[str, str] = {}
    for step in rendered["steps"]:
        for element, text in step[view].get("grads", {}).items():
            if len(text) > len(longest.get(element, "")):
                longest[element] = text
    root = ET.fromstring(rendered["views"][view]["svg"])
    nodes = _boxes(root)
    bad = []
    for group in root.iter(f"{{{layout.SVG}}}g"):
        if "edge" not in (group.get("class") or "").split() or group.get("id") not in longest:
            continue
        for text in group.findall("svg:text", NS):
            if text.get("class") != "grad":
                continue
            size = float(text.get("font-size", layout.FONT_SIZE))
            width = len(longest[group.get("id")]) * size * CHAR_WIDTH
            x, y = float(text.get("x")), float(text.get("y"))
            anchor = text.get("text-anchor", "start")
            x0 = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
            box = (x0, y - size * 0.8, x0 + width, y + size * 0.2)
            for node, (a, b, c, d) in nodes.items():
                if box[0] < c and a < box[2] and box[1] < d and b < box[3]:
                    bad.append(f"{group.get('id')} {longest[group.get('id')]!r} over {node}")
    return bad


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.slug)
def test_edge_gradient_texts_do_not_overlap_nodes(example):
    rendered = render(trace_snippet(example.code))
    assert [o for view in ("tensors", "autograd") for o in overlaps(rendered, view)] == []


def test_the_overlap_check_sees_an_overlap():
    rendered = render(trace_snippet(EXAMPLES[0].code))
    root = ET.fromstring(rendered["views"]["tensors"]["svg"])
    node = next(g for g in root.iter(f"{{{layout.SVG}}}g") if g.get("id") == "t1")
    x0, y0, _, _ = layout._extent(node, f"{{{layout.SVG}}}")
    for group in root.iter(f"{{{layout.SVG}}}g"):
        for text in group.findall("svg:text", NS):
            if text.get("class") == "grad" and "edge" in group.get("class"):
                text.set("x", str(x0 + 2))
                text.set("y", str(y0 + 10))
    rendered["views"]["tensors"]["svg"] = ET.tostring(root, encoding="unicode")
    assert overlaps(rendered, "tensors")
