"""Text enters a drawing visible: what XML forbids or a reader cannot see is written as its
Python escape (app/render/visible.py), in a node's label as in a frame's caption."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.render import render
from app.render.layout import SVG
from app.render.playback import still
from app.render.visible import visible
from engine.tracer import trace_snippet


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[31mred\x07", "\\x1b[31mred\\x07"),  # an ANSI colour and a bell
        ("a\x00b", "a\\x00b"),
        ("carriage\rreturn", "carriage\\rreturn"),
        ("\x0b\x0c\x1f", "\\x0b\\x0c\\x1f"),
        ("del\x7f c1\x85\x9b", "del\\x7f c1\\x85\\x9b"),
        ("\ud800 lone", "\\ud800 lone"),
        ("\ufeffbom", "\\ufeffbom"),
        ("\ufffe\uffff", "\\ufffe\\uffff"),
    ],
)
def test_what_xml_forbids_or_nobody_sees_is_written_as_its_escape(text, shown):
    assert visible(text) == shown
    ET.fromstring(f"<t>{visible(text)}</t>")  # XML reads it


def test_what_a_reader_sees_is_left_as_it_is():
    text = "tab\tnewline\n é ∂ 😀 👩\u200d💻 \u202eright-to-left \\x1b < & >"
    assert visible(text) == text


def test_a_label_with_controls_is_drawn_with_them_written_out():
    code = (
        "import torch\n"
        "a = torch.tensor(2.0, requires_grad=True)\n"
        'globals()["x\\x1by\\x00\\ufeff"] = a * 3\n'
    )
    trace = trace_snippet(code)
    assert "x\x1by\x00\ufeff" in {t["label"] for t in trace["tensors"].values()}
    rendered = render(trace)
    for view in ("tensors", "autograd"):
        root = ET.fromstring(still(rendered, view, len(rendered["steps"]) - 1))  # XML reads it
        texts = {"".join(t.itertext()) for t in root.iter(f"{{{SVG}}}text")}
        texts |= {t.text for t in root.iter(f"{{{SVG}}}title")}
        if view == "tensors":
            assert "x\\x1by\\x00\\ufeff" in texts
